"""A plain ``llvm`` target builds for the host CPU (issue 16, item 1), and the switch back."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi
from _builders import build
from tvm.script import relax as R

from compile_engine_compat import compile_engine, silenced
from compile_engine_compat import targets as _host_cpu
from compile_engine_compat.facade import kernels as _kernels

HOST = _host_cpu.host_cpu()
needs_host_cpu = pytest.mark.skipif(HOST is None, reason="LLVM does not know this host's CPU")


def _matmul() -> tvm.relax.Function:
    return build(
        "main",
        [("a", (64, 32), "float32"), ("b", (32, 48), "float32")],
        lambda bb, a, b: R.matmul(a, b),
    )


@pytest.fixture
def generic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_host_cpu.GENERIC_CPU_ENV, "1")


@needs_host_cpu
def test_plain_llvm_lowers_for_the_host_cpu_and_says_so() -> None:
    assert HOST is not None
    name, mattr = HOST
    with silenced():
        engine = compile_engine.get()
        cached = engine.lower(_matmul(), "llvm")
        key = compile_engine.CCacheKey(_matmul(), tvm.target.Target("llvm"))
    assert cached.target.kind.name == "llvm"
    assert str(cached.target.attrs["mcpu"]) == name == tvm.target.codegen.llvm_get_system_cpu()
    assert [str(a) for a in cached.target.attrs.get("mattr", [])] == list(mattr)
    assert str(key.target) == str(cached.target)  # a key built by hand finds the same entry


@needs_host_cpu
def test_features_the_host_lacks_are_switched_off() -> None:
    assert HOST is not None
    present = tvm.get_global_func("tvm.codegen.llvm.GetHostCPUFeatures")()
    implied = tvm.target.codegen.llvm_get_cpu_features(
        tvm.target.Target({"kind": "llvm", "mcpu": HOST[0]})
    )
    lacking = {f"-{f}" for f in implied if f in present and not bool(present[f])}
    wide = "prefer-256-bit" in implied and bool(present.get("avx512f", False))
    assert set(HOST[1]) == lacking | ({"-prefer-256-bit"} if wide else set())


@needs_host_cpu
def test_the_switch_restores_generic_code_and_a_separate_cache_entry(generic: None) -> None:
    with silenced():
        engine = compile_engine.get()
        cached = engine.lower(_matmul(), "llvm")
    assert "mcpu" not in cached.target.attrs
    assert str(cached.target) == str(tvm.target.Target("llvm"))


@needs_host_cpu
def test_host_and_generic_kernels_are_cached_apart_and_both_compute_the_product(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 32), "float32"), rng.standard_normal((32, 48), "float32")
    results = []
    with silenced():
        engine = compile_engine.get()
        engine.clear()  # count this test's entries only, whatever ran before on this worker
        for switch in ("", "1"):
            monkeypatch.setenv(_host_cpu.GENERIC_CPU_ENV, switch)
            out = np.empty((64, 48), "float32")
            engine.jit(_matmul(), "llvm")(a, b, out)
            results.append(out)
        targets = {str(value.cached_func.target) for _, value in engine.items()}
    assert len(targets) == 2  # two entries: never one machine's kernel for another's target
    for out in results:
        np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)


@needs_host_cpu
def test_the_persistent_cache_key_names_the_host_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from compile_engine_compat.targets import as_target

    host = as_target("llvm")
    monkeypatch.setenv(_host_cpu.GENERIC_CPU_ENV, "1")
    plain = as_target("llvm")
    assert host is not None and plain is not None
    func = _matmul()
    keys = [_kernels.source_key(func, tvm_ffi.structural_hash(func), t) for t in (host, plain)]
    assert keys[0] != keys[1]
    assert f'"mcpu":"{HOST[0] if HOST else ""}"' in str(keys[0])


@pytest.mark.parametrize(
    "target",
    [
        {"kind": "llvm", "mcpu": "x86-64-v3"},
        {"kind": "llvm", "mattr": ["+avx2"]},
        {"kind": "llvm", "mtriple": "aarch64-linux-gnu"},
        "c",
    ],
    ids=["mcpu", "mattr", "cross-triple", "c"],
)
def test_a_target_the_user_chose_is_kept(target: object) -> None:
    from compile_engine_compat.targets import as_target

    chosen = tvm.target.Target(target)
    assert str(as_target(target)) == str(chosen)


@needs_host_cpu
def test_the_modern_path_gets_the_same_target_and_results(monkeypatch: pytest.MonkeyPatch) -> None:
    from tvm import relax

    from compile_engine_compat import schedules
    from compile_engine_compat.targets import as_target

    host = schedules.host_target()
    assert str(host) == str(as_target("llvm"))
    func = _matmul()
    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    ex = tvm.compile(mod, host, relax_pipeline=schedules.relax_pipeline(host))
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 32), "float32"), rng.standard_normal((32, 48), "float32")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(a), tvm.runtime.tensor(b))
    out = np.empty((64, 48), "float32")
    with silenced():
        compile_engine.get().jit(func, "llvm")(a, b, out)
    np.testing.assert_array_equal(got.numpy(), out)  # same target, same rules: same bits
    monkeypatch.setenv(_host_cpu.GENERIC_CPU_ENV, "1")
    assert str(schedules.host_target()) == str(tvm.target.Target("llvm"))
