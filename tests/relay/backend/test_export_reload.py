"""export_library -> tvm.runtime.load_module -> GraphModule / graph_executor.create, the factory's
getters, param dicts, and the timing calls on what relay.build returns."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.executor_factory import MARKER_SUFFIX, LoadedFactory
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall
from compile_engine_compat.tvm_legacy import graph_executor
from compile_engine_compat.tvm_legacy.runtime import tvm_load_module

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 4)).astype("float32")
W = RNG.standard_normal((3, 4)).astype("float32")


def _dense_module():
    x = relay.var("x", shape=(2, 4))
    w = relay.var("w", shape=(3, 4))
    return tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(relay.nn.dense(x, w))))


def _expected():
    return np.maximum(X @ W.T, 0)


def test_export_reload_graph_module_matches_in_memory(tmp_path, installed_alias):
    lib = relay.build(_dense_module(), target="llvm", params={"w": W})
    path = tmp_path / "net.so"
    lib.export_library(str(path))
    loaded = tvm.runtime.load_module(str(path))
    assert isinstance(loaded, LoadedFactory)
    module = graph_executor.GraphModule(loaded["default"](tvm.cpu()))
    module.set_input("x", X)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), _expected(), rtol=1e-5)
    assert loaded.get_lib() is loaded.module


def test_pre_08_graph_lib_params_form_after_a_reload(tmp_path, installed_alias):
    graph, lib, params = relay.build(_dense_module(), target="llvm", params={"w": W})
    path = str(tmp_path / "net.so")
    lib.export_library(path)  # the executable's own export_library: no marker
    (tmp_path / "net.json").write_text(graph)
    reloaded = tvm.runtime.load_module(path)
    module = graph_executor.create((tmp_path / "net.json").read_text(), reloaded, tvm.cpu())
    module.set_input(**params)  # "w" was bound by relay.build: skipped, as in TVM 0.19
    module.set_input("x", X)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), _expected(), rtol=1e-5)


def test_factory_getters():
    lib = relay.build(_dense_module(), target="llvm", params={"w": W})
    assert json.loads(lib.get_graph_json())["inputs"] == ["x"]
    assert set(lib.get_params()) == {"w"}
    assert lib.get_lib() is lib.executable


def test_a_plain_tvm_library_loads_exactly_as_before(tmp_path, installed_alias):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([4], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(relax.op.exp(x)))
    path = str(tmp_path / "plain.so")
    tvm.compile(bb.get(), "llvm").export_library(path)
    loaded = tvm.runtime.load_module(path)
    assert type(loaded) is type(tvm_load_module(path))
    assert not (tmp_path / ("plain.so" + MARKER_SUFFIX)).exists()
    out = relax.VirtualMachine(loaded, tvm.cpu())["main"](tvm.runtime.tensor(np.zeros(4, "f4")))
    np.testing.assert_allclose(out.numpy(), np.ones(4))


def test_load_module_probe_install_sets_and_uninstall_restores():
    """The process patch (boundary.patch_attribute through install()): on, then exactly off."""
    was = installed()
    if was:
        uninstall()
    original = tvm.runtime.load_module
    try:
        install()
        assert tvm.runtime.load_module is not original
        assert tvm.runtime.load_module.__module__ == "compile_engine_compat.tvm_legacy.runtime"
    finally:
        uninstall()
        assert tvm.runtime.load_module is original
        if was:
            install()


def test_param_dicts_round_trip_in_tvm_runtime_format():
    blob = relay.save_param_dict({"w": W, "b": tvm.runtime.tensor(X)})
    assert isinstance(blob, bytearray)  # TVM 0.19's type
    loaded = relay.load_param_dict(blob)
    np.testing.assert_array_equal(loaded["w"].numpy(), W)
    assert set(tvm.runtime.load_param_dict(blob)) == {"w", "b"}
    assert relay.load_param_dict(tvm.runtime.save_param_dict({"b": tvm.runtime.tensor(X)}))


def test_time_evaluator_on_a_jit_kernels_module(engine, installed_alias):
    from compile_engine_compat import te_compiler

    x = relay.var("x", shape=(64,))
    func = relay.Function([x], relay.exp(x))
    kernel = te_compiler.get().jit(func, "llvm")
    a = tvm.runtime.tensor(np.zeros(64, "float32"))
    out = tvm.runtime.empty((64,), "float32", tvm.cpu())
    timer = kernel.module.time_evaluator(kernel.name, tvm.cpu(), number=3, repeat=2)
    result = timer(a, out)
    assert len(result.results) == 2 and result.mean > 0


def test_a_build_loaded_from_the_compile_cache_exports_and_reloads(
    tmp_path, monkeypatch, installed_alias
):
    from compile_engine_compat.cache import disk
    from compile_engine_compat.relay import vm

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv(disk.CACHE_DIR_ENV, str(cache))
    relay.build(_dense_module(), target="llvm", params={"w": W})  # builds and stores
    hit = relay.build(_dense_module(), target="llvm", params={"w": W})
    assert hit.library is not None  # loaded from the cache: a library TVM cannot export again
    hit.export_library(str(tmp_path / "factory.so"))
    _graph, lib, _params = hit
    lib.export_library(str(tmp_path / "tuple.so"))
    code, vm_lib = vm.compile(_dense_module(), target="llvm", params={"w": W}).save()
    vm_lib.export_library(str(tmp_path / "vm.so"))
    for name in ("factory.so", "tuple.so"):
        loaded = tvm.runtime.load_module(str(tmp_path / name))
        module = graph_executor.GraphModule(loaded["default"](tvm.cpu()))
        module.set_input("x", X)
        module.run()
        np.testing.assert_allclose(module.get_output(0).numpy(), _expected(), rtol=1e-5)
    exe = vm.Executable.load_exec(code, tvm.runtime.load_module(str(tmp_path / "vm.so")))
    got = relax.VirtualMachine(exe.lib, tvm.cpu())["main"](tvm.runtime.tensor(X))
    np.testing.assert_allclose(got.numpy(), _expected(), rtol=1e-5)
    with pytest.raises(ValueError, match="loaded from the compile cache"):
        hit.export_library(str(tmp_path / "factory.tar"))
