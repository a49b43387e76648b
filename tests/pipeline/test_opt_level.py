"""LLVM opt-level per kernel (issue 16): -O1 for elementwise kernels the rules vectorized, else -O3.

The cold ``jit`` of a small elementwise chain is mostly LLVM's fixed cost; at ``-O1`` it builds in
about half the time and, already vectorized in TIR, runs as fast. Everything else keeps LLVM's
default, and an ``opt-level`` the user set is never overridden.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build, dense_bias_relu
from tvm import relax

from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.facade import kernels as _kernels
from compile_engine_compat.facade.engine import CompileEngine
from compile_engine_compat.facade.objects import CachedFunc
from compile_engine_compat.pipeline import lower as _lower
from compile_engine_compat.pipeline import opt_level as _opt_level
from compile_engine_compat.pipeline import schedule as _schedule
from compile_engine_compat.pipeline.schedule import RULES_VERSION

R = relax.op
F32 = "float32"
rng = np.random.default_rng(16)


def f32(*shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.5).astype(F32)


def _chain(shape: tuple[int, ...], with_exp: bool = True) -> relax.Function:
    """add, multiply (and exp, sigmoid) with ``y``: every stage elementwise, one fused block."""

    def body(bb: Any, x: Any, y: Any) -> Any:
        v = bb.emit(R.add(x, y))
        v = bb.emit(R.multiply(v, y))
        if with_exp:
            v = bb.emit(R.sigmoid(bb.emit(R.exp(v))))
        v = bb.emit(R.subtract(v, y))
        return R.multiply(v, y)

    return build("main", [("x", shape, F32), ("y", shape, F32)], body)


def _chain_numpy(x: np.ndarray, y: np.ndarray, with_exp: bool = True) -> np.ndarray:
    v = (x + y) * y
    if with_exp:
        v = 1 / (1 + np.exp(-np.exp(v)))
    return (v - y) * y


def _vector_lanes(cached: CachedFunc) -> list[int]:
    """Extents of the vectorized loops of the scheduled function."""
    sch = cached.schedule
    lanes = []
    for block in sch.get_child_blocks(sch.get_sblock("root")):
        for loop in sch.get_loops(block):
            node = sch.get(loop)
            if node.kind == tvm.tirx.ForKind.VECTORIZED:
                lanes.append(int(node.extent))
    return lanes


def _run(engine: CompileEngine, func: relax.Function, target: Any, *arrays: np.ndarray) -> Any:
    kernel = engine.jit(func, target)
    out = np.empty_like(arrays[0])
    kernel(*arrays, out)
    return out


@pytest.mark.parametrize(
    ("shape", "with_exp", "lanes"),
    [
        ((64, 64), True, 4),  # small, calls exp: narrow vectors (see _CALL_VECTOR_WIDTHS)
        ((64, 64), False, 16),  # small, arithmetic only: full vectors
        ((16, 40), False, 16),
        ((256, 256), True, 16),  # large: the injective rule (parallel, vectorized)
    ],
    ids=["small_exp", "small_arith", "small_16x40", "large_exp"],
)
def test_vectorized_elementwise_kernels_build_at_o1_and_match_numpy(
    engine: CompileEngine, shape: tuple[int, ...], with_exp: bool, lanes: int
) -> None:
    func = _chain(shape, with_exp)
    cached = engine.lower(func, "llvm")
    assert cached.llvm_opt_level == _opt_level.LIGHT_OPT_LEVEL == 1
    assert int(cached.target.attrs["opt-level"]) == 1
    assert set(_vector_lanes(cached)) == {lanes}
    x, y = f32(*shape), f32(*shape)
    out = _run(engine, func, "llvm", x, y)
    np.testing.assert_allclose(out, _chain_numpy(x, y, with_exp), rtol=1e-5, atol=1e-6)


def test_the_o1_target_is_the_key_target_plus_the_opt_level(engine: CompileEngine) -> None:
    func = _chain((64, 64))
    cached = engine.lower(func, "llvm")
    key = engine.get_current_ccache_key()
    assert key is not None and "opt-level" not in key.target.attrs
    expected = {**dict(key.target.export()), "opt-level": 1}
    assert str(cached.target) == str(tvm.target.Target(expected))
    # One Target object per (target, level): cache keys and build-pool groups read its text.
    assert _opt_level.with_opt_level(key.target, 1) is cached.target


def _conv() -> relax.Function:
    return build(
        "main",
        [("x", (1, 8, 20, 24), F32), ("w", (16, 8, 3, 3), F32)],
        lambda bb, x, w: R.nn.conv2d(x, w, padding=[1, 1]),
    )


@pytest.mark.parametrize(
    "make",
    [
        lambda: dense_bias_relu(48, 96, 80),
        _conv,
        lambda: build("main", [("x", (128, 300), F32)], lambda bb, x: R.sum(x, axis=[1])),
        # A broadcast and a transpose: vectorized, but not elementwise.
        lambda: build(
            "main", [("x", (64, 256), F32), ("y", (256,), F32)], lambda bb, x, y: R.add(x, y)
        ),
        lambda: build(
            "main",
            [("x", (256, 128), F32), ("y", (128, 256), F32)],
            lambda bb, x, y: R.add(x, R.permute_dims(y)),
        ),
        # Elementwise, but no vector width divides 2x3 or the 131x127 rows: not vectorized.
        lambda: _chain((2, 3)),
        lambda: build("main", [("x", (131, 127), F32)], lambda bb, x: R.nn.relu(x)),
    ],
    ids=["dense", "conv2d", "reduction", "broadcast", "transpose", "tiny", "odd_rows"],
)
def test_every_other_kernel_keeps_llvm_default_level(engine: CompileEngine, make: Any) -> None:
    cached = engine.lower(make(), "llvm")
    assert cached.llvm_opt_level is None
    assert "opt-level" not in cached.target.attrs
    key = engine.get_current_ccache_key()
    assert key is not None and cached.target is key.target


def test_gemm_and_conv_kernels_are_scheduled_and_built_as_before(engine: CompileEngine) -> None:
    # They stay at -O3 with the very rules of RULES_VERSION 6: the packed GEMM rule.
    for func in (dense_bias_relu(48, 96, 80), _conv()):
        cached = engine.lower(func, "llvm")
        assert 'scope="local"' in cached.funcs.script()  # the register tile
        assert cached.llvm_opt_level is None
    x, w, b = f32(48, 96), f32(96, 80), f32(80)
    out = np.empty((48, 80), F32)
    engine.jit(dense_bias_relu(48, 96, 80), "llvm")(x, w, b, out)
    np.testing.assert_allclose(out, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [0, 2, 3])
def test_an_opt_level_the_user_sets_is_kept(engine: CompileEngine, level: int) -> None:
    func = _chain((64, 64))
    cached = engine.lower(func, {"kind": "llvm", "opt-level": level})
    assert cached.llvm_opt_level is None
    assert int(cached.target.attrs["opt-level"]) == level
    assert "mcpu" in cached.target.attrs or "mtriple" in cached.target.attrs
    x, y = f32(64, 64), f32(64, 64)
    out = _run(engine, func, {"kind": "llvm", "opt-level": level}, x, y)
    np.testing.assert_allclose(out, _chain_numpy(x, y), rtol=1e-5, atol=1e-6)


def test_a_user_level_1_is_the_users_not_the_shims(engine: CompileEngine) -> None:
    cached = engine.lower(dense_bias_relu(48, 96, 80), {"kind": "llvm", "opt-level": 1})
    assert cached.llvm_opt_level is None  # the shim chose nothing: the user did
    assert int(cached.target.attrs["opt-level"]) == 1


@pytest.mark.parametrize(
    "config",
    [{"config": {"tirx.disable_vectorize": True}}, {"disabled_pass": ["tirx.VectorizeLoop"]}],
    ids=["disable_vectorize", "VectorizeLoop_disabled"],
)
def test_no_o1_when_the_pass_context_undoes_the_vectorization(
    engine: CompileEngine, config: dict[str, Any]
) -> None:
    func = _chain((64, 64), with_exp=False)
    with tvm.transform.PassContext(**config):
        cached = engine.lower(func, "llvm")
        x, y = f32(64, 64), f32(64, 64)
        out = _run(engine, func, "llvm", x, y)
    assert cached.llvm_opt_level is None
    np.testing.assert_allclose(out, _chain_numpy(x, y, False), rtol=1e-5, atol=1e-6)
    assert engine.lower(func, "llvm").llvm_opt_level == 1  # outside: another entry


def test_a_non_llvm_target_is_left_alone() -> None:
    scheduled = _schedule.RuleOutcome(None, ("a",), {"a": "flat_vectorized"})
    assert _opt_level.choose_opt_level(tvm.target.Target("llvm"), scheduled) == 1
    assert _opt_level.choose_opt_level(tvm.target.Target("c"), scheduled) is None
    assert _opt_level.choose_opt_level(tvm.target.Target("llvm"), scheduled, {"a"}) is None
    mixed = _schedule.RuleOutcome(None, ("a", "b"), {"a": "flat_vectorized"})
    assert _opt_level.choose_opt_level(tvm.target.Target("llvm"), mixed) is None


def test_schedule_blocks_names_the_rule_each_block_kept(engine: CompileEngine) -> None:
    cases = {
        "flat_vectorized": _chain((64, 64)),
        "injective_vectorized": _chain((256, 256)),
        "injective": build(
            "main", [("x", (64, 256), F32), ("y", (256,), F32)], lambda bb, x, y: R.add(x, y)
        ),
        "flat": _chain((2, 3)),
        "packed_gemm": dense_bias_relu(48, 96, 80),
    }
    target = tvm.target.Target("llvm")
    for rule, func in cases.items():
        cached = engine.lower(func, target)
        name = cached.prim_fn_var.name_hint
        result = _schedule.schedule_blocks(_lower.inline_injective(cached.prim_func, name), target)
        assert rule in result.rules.values(), (rule, dict(result.rules))
        assert set(result.rules) <= set(result.blocks)


# -- cache keys ------------------------------------------------------------------------------------


def test_the_in_memory_entries_of_o1_and_o3_builds_differ(engine: CompileEngine) -> None:
    func = _chain((64, 64))
    light = engine.jit(func, "llvm")
    default = engine.jit(func, {"kind": "llvm", "opt-level": 3})
    assert light is not default
    assert engine.jit(func, "llvm") is light
    targets = sorted(str(v.cached_func.target.attrs.get("opt-level")) for _, v in engine.items())
    assert targets == ["1", "3"]


def test_the_persistent_cache_key_holds_the_chosen_level(
    engine: CompileEngine, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "kernels"
    root.mkdir(mode=0o700)
    monkeypatch.setenv(_disk_cache.CACHE_DIR_ENV, str(root))
    func = _chain((64, 64))
    cached = engine.lower(func, "llvm")
    name = cached.prim_fn_var.name_hint
    light = _disk_cache.entry_key(cached.funcs, name, cached.target, (2, 1), RULES_VERSION)
    untiered = _opt_level.without_opt_level(cached.target)
    default = _disk_cache.entry_key(cached.funcs, name, untiered, (2, 1), RULES_VERSION)
    assert light.digest != default.digest
    assert '"opt-level":1' in light.material
    # A jit stores the O1 kernel under the O1 key, and a fresh engine loads it back.
    x, y = f32(64, 64), f32(64, 64)
    expected = _chain_numpy(x, y)
    np.testing.assert_allclose(_run(engine, func, "llvm", x, y), expected, rtol=1e-5, atol=1e-6)
    (entry,) = [p for p in (root / _disk_cache.LAYOUT).iterdir() if not p.name.startswith(".")]
    assert entry.name == light.digest
    assert '"opt-level":1' in json.loads((entry / "meta.json").read_text())["material"]
    engine.clear()
    np.testing.assert_allclose(_run(engine, func, "llvm", x, y), expected, rtol=1e-5, atol=1e-6)


def test_jit_many_builds_o1_and_o3_kernels_apart_and_right(engine: CompileEngine) -> None:
    funcs = [_chain((64, 64)), dense_bias_relu(48, 96, 80), _chain((16, 40), with_exp=False)]
    chain, dense, arith = engine.jit_many(funcs, "llvm")
    x, y = f32(64, 64), f32(64, 64)
    out = np.empty_like(x)
    chain(x, y, out)
    np.testing.assert_allclose(out, _chain_numpy(x, y), rtol=1e-5, atol=1e-6)
    a, w, b = f32(48, 96), f32(96, 80), f32(80)
    product = np.empty((48, 80), F32)
    dense(a, w, b, product)
    np.testing.assert_allclose(product, np.maximum(a @ w + b, 0), rtol=1e-4, atol=1e-4)
    p, q = f32(16, 40), f32(16, 40)
    small = np.empty_like(p)
    arith(p, q, small)
    np.testing.assert_allclose(small, _chain_numpy(p, q, False), rtol=1e-5, atol=1e-6)
    levels = [engine.lower(f, "llvm").llvm_opt_level for f in funcs]
    assert levels == [1, None, 1]
    # One tvm.compile builds for one target: the -O3 kernel never shares the -O1 ones' module.
    assert dense.module is not chain.module and dense.module is not arith.module


def test_the_unscheduled_fallback_builds_at_the_targets_own_level(
    engine: CompileEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    func = _chain((64, 64), with_exp=False)
    cached = engine.lower(func, "llvm")
    assert cached.llvm_opt_level == 1
    real_compile = tvm.compile
    targets: list[str] = []

    def scheduled_build_fails(mod: Any, target: Any = None, **kwargs: Any) -> Any:
        targets.append(str(target))
        if len(targets) == 1:
            raise RuntimeError("Instruction does not dominate all uses (simulated)")
        return real_compile(mod, target=target, **kwargs)

    monkeypatch.setattr(tvm, "compile", scheduled_build_fails)
    kernel = _kernels.kernel_for(cached)
    assert len(targets) == 2
    assert '"opt-level":1' in targets[0]
    assert "opt-level" not in targets[1]  # the plain PrimFunc is not vectorized: LLVM's default
    x, y = f32(64, 64), f32(64, 64)
    out = np.empty_like(x)
    kernel(x, y, out)
    np.testing.assert_allclose(out, _chain_numpy(x, y, False), rtol=1e-5, atol=1e-6)
