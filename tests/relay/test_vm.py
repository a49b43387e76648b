"""relay.vm.compile / VMCompiler + tvm.runtime.vm.VirtualMachine on the Relax VM, against
relay.build; exe.save() and Executable.load_exec round-trip through a library file."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.vm import Executable
from compile_engine_compat.tvm_legacy import graph_executor
from compile_engine_compat.tvm_legacy.runtime_vm import VirtualMachine

RNG = np.random.default_rng(4)
X = RNG.standard_normal((2, 5)).astype("float32")
W = RNG.standard_normal((3, 5)).astype("float32")
B = RNG.standard_normal(3).astype("float32")


def _module():
    x, w, b = relay.var("x", shape=(2, 5)), relay.var("w", shape=(3, 5)), relay.var("b", shape=(3,))
    out = relay.nn.bias_add(relay.nn.dense(x, w), b, axis=-1)
    return tvm.IRModule.from_expr(relay.Function([x, w, b], relay.tanh(out)))


def _graph_result():
    lib = relay.build(_module(), target="llvm", params={"w": W, "b": B})
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("x", X)
    module.run()
    return module.get_output(0).numpy()


def test_vm_compile_matches_relay_build():
    exe = relay.vm.compile(_module(), target="llvm", params={"w": W, "b": B})
    vm = VirtualMachine(exe, tvm.cpu())
    expected = _graph_result()
    np.testing.assert_array_equal(vm.run(X).numpy(), expected)
    np.testing.assert_array_equal(vm.invoke("main", X).numpy(), expected)
    vm.set_input("main", x=X)
    vm.invoke_stateful("main")
    np.testing.assert_array_equal(vm.get_outputs()[0].numpy(), expected)


def test_vm_compiler_lower_then_get_exec():
    compiler = relay.vm.VMCompiler()
    with pytest.raises(RuntimeError, match="before lower"):
        compiler.get_exec()
    compiler.set_params({"w": W, "b": B})
    compiler.lower(_module(), "llvm")
    vm = VirtualMachine(compiler.get_exec(), tvm.cpu())
    np.testing.assert_array_equal(vm.run(X).numpy(), _graph_result())


def test_save_and_load_exec_round_trip_through_a_library(tmp_path):
    exe = relay.vm.compile(_module(), target="llvm", params={"w": W, "b": B})
    code, lib = exe.save()
    path = str(tmp_path / "vm.so")
    lib.export_library(path)
    reloaded = Executable.load_exec(code, tvm.runtime.load_module(path))
    vm = VirtualMachine(reloaded, tvm.cpu())
    np.testing.assert_array_equal(vm.run(X).numpy(), _graph_result())
    with pytest.raises(ValueError, match="Relay VM bytecode"):
        Executable.load_exec(b"\x00\x01relay-bytecode", lib)


def test_vm_benchmark_returns_a_benchmark_result():
    exe = relay.vm.compile(_module(), target="llvm", params={"w": W, "b": B})
    vm = VirtualMachine(exe, tvm.cpu())
    result = vm.benchmark(tvm.cpu(), X, repeat=3, number=2)
    assert len(result.results) == 3 and result.mean > 0
    end_to_end = vm.benchmark(tvm.cpu(), X, repeat=2, number=1, end_to_end=True)
    assert end_to_end.mean > 0


def test_tvm_runtime_vm_under_install_is_the_relay_vm_subclass():
    from compile_engine_compat.surfaces.import_alias import install, installed, uninstall

    was = installed()
    install()
    try:
        import tvm.runtime.vm
        from tvm.relay import vm as relay_vm

        assert tvm.runtime.vm.VirtualMachine is VirtualMachine
        assert issubclass(VirtualMachine, tvm.relax.VirtualMachine)
        assert relay_vm.compile is relay.vm.compile
    finally:
        if not was:
            uninstall()
    if not was:
        assert tvm.runtime.vm.VirtualMachine is tvm.relax.VirtualMachine
