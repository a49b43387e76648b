"""Whole-module builds through the facade: one path for relay.build and every executor kind,
the host CPU for a plain llvm, and the persistent cache across processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tvm
from pipeline.module_cases import (
    example_input,
    mobile_block,
    mobile_block_weights,
    numpy_mobile_block,
)
from tvm import relax, te

from compile_engine_compat.cache import disk, store_behind
from compile_engine_compat.facade import model_builds
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent


def _run(executable: object, x: np.ndarray) -> np.ndarray:
    return relax.VirtualMachine(executable, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()


def _expected(x: np.ndarray) -> np.ndarray:
    return numpy_mobile_block(x, mobile_block_weights()).astype("float32")


def _library_symbols(executable: Any) -> set[str]:
    """The kernels an executable links, by the name of their function in its libraries."""
    module = getattr(executable, "mod", executable)
    found: set[str] = set()
    for library in module.imports:
        found.update(name for name in _kernel_names() if library.implements_function(name))
    return found


def _kernel_names() -> list[str]:
    target = model_builds.resolve_target("llvm")
    from compile_engine_compat.pipeline.model import vm_executable

    bound = relax.transform.BindParams("main", mobile_block_weights())(mobile_block())
    with target:
        lowered = tvm.transform.Sequential(vm_executable.relax_passes(target))(bound)
    return [g.name_hint for g, f in lowered.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]


def test_params_are_bound_by_name_and_the_model_matches_numpy():
    x = example_input()
    executable = model_builds.build_model(mobile_block(), "llvm", mobile_block_weights())
    assert compare(_run(executable, x), _expected(x), REFERENCE_TOLERANCES) == ""


def test_a_plain_llvm_is_the_host_cpu_as_for_jit():
    from compile_engine_compat import schedules

    assert str(model_builds.resolve_target("llvm")) == str(schedules.host_target())
    assert str(model_builds.resolve_target(None)) == str(schedules.host_target())
    generic = {"kind": "llvm", "mcpu": "x86-64"}
    assert str(model_builds.resolve_target(generic)) == str(tvm.target.Target(generic))


def test_bad_input_is_refused_at_the_call():
    with pytest.raises(TypeError, match=r"tvm\.IRModule"):
        model_builds.build_model(mobile_block()["main"], "llvm")
    with pytest.raises(TypeError, match="'main'"):
        model_builds.build_model(tvm.IRModule({"other": mobile_block()["main"]}), "llvm")
    with pytest.raises((TypeError, ValueError)):
        model_builds.build_model(mobile_block(), 42)


def test_relay_build_and_every_executor_kind_take_the_shims_path():
    from compile_engine_compat import relay

    x = example_input()
    weights = mobile_block_weights()
    lib = relay.build(mobile_block(), target="llvm", params=weights)
    # The shim's schedules: its kernels take their weights packed at build time.
    prepacked = {name for name in _kernel_names() if name.endswith("_prepacked")}
    assert prepacked and prepacked <= _library_symbols(lib.get_lib())
    runner = lib["default"](tvm.cpu())
    got = runner.vm["main"](tvm.runtime.tensor(x)).numpy()
    assert compare(got, _expected(x), REFERENCE_TOLERANCES) == ""
    for kind in ("debug", "graph", "vm", "aot"):
        run = relay.create_executor(kind, mobile_block(), target="llvm", params=weights).evaluate()
        np.testing.assert_array_equal(run(x).numpy(), got)


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv(disk.CACHE_DIR_ENV, str(root))
    return root


def test_the_persistent_cache_stores_a_whole_module_and_loads_it(cache_root):
    x = example_input()
    first = model_builds.build(mobile_block(), "llvm", mobile_block_weights())
    # A miss: built here and run as built; the library is stored behind the build.
    assert isinstance(first.built, relax.VMExecutable) and first.executable is first.built
    assert first.library is None
    # A build of the same module meanwhile waits for that store, then loads what it stored.
    again = model_builds.build(mobile_block(), "llvm", mobile_block_weights())
    assert store_behind.pending() == 0
    assert again.built is None and again.library is not None  # a hit: loaded, not built
    assert again.library.is_relative_to(cache_root)
    assert not isinstance(again.executable, relax.VMExecutable)
    expected = _run(first.built, x)  # the executable as built, JIT-compiled
    np.testing.assert_array_equal(_run(again.executable, x), expected)
    # Other weights are another module: built, not loaded.
    other = {k: v * 2 for k, v in mobile_block_weights().items()}
    assert model_builds.build(mobile_block(), "llvm", other).built is not None


def test_a_store_behind_a_build_lands_in_the_cache_directory_of_the_build(cache_root, monkeypatch):
    # The writer is held until the setting has changed: the store then runs under the new one.
    release = threading.Event()
    store_behind.submit("held writer", lambda: release.wait(60))
    try:
        model_builds.build(mobile_block(), "llvm", mobile_block_weights())
        later = cache_root.parent / "configured later"
        monkeypatch.setenv(disk.CACHE_DIR_ENV, str(later))
    finally:
        release.set()
    assert store_behind.flush(60)
    assert [path for path in cache_root.rglob("*") if path.name == model_builds.LIBRARY_FILE]
    assert not later.exists()


def test_a_module_linking_external_codegen_modules_is_built_and_not_cached(cache_root):
    """RunCodegen's runtime modules (relay.build of a PartitionGraph result) have no structural
    hash in TVM: such a build skips the cache instead of failing in TVM's hashing."""
    x = te.placeholder((4,), name="x")
    out = te.compute((4,), lambda i: x[i] + 1.0, name="out")
    prim = te.create_prim_func([x, out]).with_attr("global_symbol", "external_add_one")
    bb = relax.BlockBuilder()
    arg = relax.Var("x", relax.TensorType([4], "float32"))
    with bb.function("main", [arg]):
        call = relax.call_dps_packed("external_add_one", [arg], relax.TensorType([4], "float32"))
        bb.emit_func_output(bb.emit(call))
    mod = bb.get().with_attr("external_mods", [tvm.tirx.build(prim, "llvm")])
    for _ in range(2):
        built = model_builds.build_model(mod, "llvm")
        assert isinstance(built, relax.VMExecutable)  # built each time, never loaded
        zeros = tvm.runtime.tensor(np.zeros(4, "float32"))
        np.testing.assert_array_equal(
            relax.VirtualMachine(built, tvm.cpu())["main"](zeros).numpy(), np.ones(4)
        )
    assert not [path for path in cache_root.rglob("*") if path.is_file()]  # nothing stored


CHILD = """
import json, sys, time, warnings
sys.path.insert(0, {tests!r})
warnings.simplefilter("ignore")
import numpy as np, tvm
from tvm import relax
from pipeline.module_cases import example_input, mobile_block, mobile_block_weights
from compile_engine_compat.facade import model_builds
result = model_builds.build(mobile_block(), "llvm", mobile_block_weights())
vm = relax.VirtualMachine(result.executable, tvm.cpu())
out = vm["main"](tvm.runtime.tensor(example_input()))
print(json.dumps({{"built": result.built is not None, "out": out.numpy().tolist()}}))
"""


@pytest.mark.long
def test_a_second_process_loads_the_module_the_first_stored(cache_root):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = CHILD.format(tests=str(TESTS))

    def run() -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    first, second = run(), run()
    assert first["built"] is True and second["built"] is False
    assert first["out"] == second["out"]


def test_a_build_that_stores_keeps_its_source_and_exports_with_options(cache_root, tmp_path):
    from compile_engine_compat import relay

    lib = relay.build(mobile_block(), target="llvm", params=mobile_block_weights())
    assert lib.library is None  # it runs what it built, stored behind it ...
    assert "_prepacked" in lib.get_source("asm")  # ... and prints its kernels meanwhile
    lib.export_library(str(tmp_path / "model.tar"))  # options: the built executable's export
    assert (tmp_path / "model.tar").stat().st_size > 0
