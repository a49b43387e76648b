"""export_library -> tvm.runtime.load_module -> GraphModule / graph_executor.create, the factory's
getters, param dicts, and the timing calls on what relay.build returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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


@pytest.mark.parametrize("second", ["a cache hit (a copy)", "a fresh build (TVM's export)"])
def test_exporting_over_a_loaded_library_leaves_it_running(
    tmp_path, monkeypatch, installed_alias, second: str
):
    """Export A, load and run it; export B to the same path: A still runs as before (the file is
    replaced by a rename, never rewritten in place under the loaded library)."""
    from compile_engine_compat.cache import disk

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv(disk.CACHE_DIR_ENV, str(cache))
    deploy = tmp_path / "deploy.so"
    relay.build(_dense_module(), target="llvm", params={"w": W}).export_library(str(deploy))
    first = graph_executor.GraphModule(tvm.runtime.load_module(str(deploy))["default"](tvm.cpu()))
    first.set_input("x", X)
    first.run()
    np.testing.assert_allclose(first.get_output(0).numpy(), _expected(), rtol=1e-5)
    inode = deploy.stat().st_ino
    other = -W
    if second.startswith("a cache hit"):
        relay.build(_dense_module(), target="llvm", params={"w": other})  # builds and stores
    else:
        monkeypatch.delenv(disk.CACHE_DIR_ENV)
    lib = relay.build(_dense_module(), target="llvm", params={"w": other})
    assert (lib.library is not None) == second.startswith("a cache hit")
    lib.export_library(str(deploy))
    assert deploy.stat().st_ino != inode  # a new file renamed over the old one
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    for _ in range(3):
        first.run()
        np.testing.assert_allclose(first.get_output(0).numpy(), _expected(), rtol=1e-5)
    # dlopen hands back the library already loaded under a path it has seen: B is read under a
    # new name of the new file (the marker goes with it).
    os.link(deploy, tmp_path / "b.so")
    os.link(str(deploy) + MARKER_SUFFIX, str(tmp_path / "b.so") + MARKER_SUFFIX)
    again = graph_executor.GraphModule(
        tvm.runtime.load_module(str(tmp_path / "b.so"))["default"](tvm.cpu())
    )
    again.set_input("x", X)
    again.run()
    np.testing.assert_allclose(again.get_output(0).numpy(), np.maximum(X @ other.T, 0), rtol=1e-5)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"\xff\xfe",
        b"[" * 100_000,
        json.dumps({"format": "compile_engine_compat.relay.build/99", "inputs": []}).encode(),
        json.dumps({"format": "compile_engine_compat.relay.build/1", "inputs": "x"}).encode(),
    ],
    ids=["empty", "not-json", "not-utf8", "nested", "other-format", "inputs-not-a-list"],
)
def test_a_marker_that_cannot_be_read_says_so(tmp_path, content):
    from compile_engine_compat.relay.backend.executor_factory import read_marker

    library = tmp_path / "deploy.so"
    (tmp_path / ("deploy.so" + MARKER_SUFFIX)).write_bytes(content)
    with pytest.raises(ValueError, match=r"deploy\.so\.relay\.json: this marker .* cannot be read"):
        read_marker(library)
    assert read_marker(tmp_path / "none.so") is None


#: A Relay program end to end as a user writes it: build a small convolution, export it, reload
#: it and run it. Everything on file descriptor 2 comes back to the test.
QUIET_PROGRAM = """
import os, sys, tempfile, warnings
import numpy as np
import compile_engine_compat
compile_engine_compat.install()
import tvm
from tvm import relay
from tvm.contrib import graph_executor

warnings.simplefilter("default")
x = relay.var("x", shape=(1, 3, 16, 16))
w = relay.var("w", shape=(8, 3, 3, 3))
y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1), channels=8, kernel_size=(3, 3)))
mod = tvm.IRModule.from_expr(relay.Function([x, w], y))
weights = np.ones((8, 3, 3, 3), "float32")
for _ in range(2):  # with the compile cache: stored, then loaded
    lib = relay.build(mod, target="llvm", params={"w": weights})
    path = os.path.join(tempfile.mkdtemp(), "net.so")
    lib.export_library(path)
    module = graph_executor.GraphModule(tvm.runtime.load_module(path)["default"](tvm.cpu()))
    module.set_input("x", np.ones((1, 3, 16, 16), "float32"))
    module.run()
    assert module.get_output(0).numpy().shape == (1, 8, 16, 16)
print("ran")
"""


@pytest.mark.long
@pytest.mark.parametrize("cache", [False, True], ids=["no_cache", "compile_cache"])
def test_build_export_reload_and_run_print_only_the_legacy_warnings(tmp_path, cache):
    env = {k: v for k, v in os.environ.items() if k != "COMPILE_ENGINE_COMPAT_CACHE_DIR"}
    if cache:
        (tmp_path / "cache").mkdir(mode=0o700)
        env["COMPILE_ENGINE_COMPAT_CACHE_DIR"] = str(tmp_path / "cache")
    child = subprocess.run(
        [sys.executable, "-c", QUIET_PROGRAM], capture_output=True, text=True, env=env, timeout=600
    )
    assert child.returncode == 0 and child.stdout == "ran\n", child.stderr[-3000:]
    # Each warning is "<string>:<line>: <Category>: <message>" (a program run with -c has no
    # source lines to echo): the legacy calls' warnings, and nothing else at all.
    lines = child.stderr.splitlines()
    assert len(lines) >= 3, lines  # relay.build, tvm.runtime.load_module, GraphModule, ...
    assert all(": CompileEngineDeprecationWarning: " in line for line in lines), lines
