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


# -- upstream Relay test files (test_vm): backend.vm, the rest of the Relay VM's methods ------
def _two_inputs() -> tvm.IRModule:
    a, b = relay.var("a", shape=(2, 3)), relay.var("b", shape=(2, 3))
    return tvm.IRModule.from_expr(relay.Function([a, b], relay.Tuple([a + b, relay.exp(a)])))


A = RNG.standard_normal((2, 3)).astype("float32")
B2 = RNG.standard_normal((2, 3)).astype("float32")


def test_backend_vm_is_relay_vm_under_install(installed_alias):
    from tvm.relay.backend import vm as backend_vm

    assert backend_vm.compile is relay.vm.compile
    assert backend_vm.VMCompiler is relay.vm.VMCompiler
    import tvm.runtime.vm

    assert tvm.runtime.vm.Executable is Executable


def test_stateful_calls_and_outputs_as_relays_list():
    vm = VirtualMachine(relay.vm.compile(_two_inputs(), "llvm"), tvm.cpu())
    vm.invoke_stateful("main", A, B2)  # Relay's invoke_stateful took the inputs too
    total, exp = vm.get_outputs()  # a tuple's fields, as a list
    np.testing.assert_allclose(total.numpy(), A + B2, rtol=1e-6)
    np.testing.assert_allclose(exp.numpy(), np.exp(A), rtol=1e-6)
    assert len(vm.get_outputs("main")) == 2  # with a name: the Relax VM's own answer
    single = VirtualMachine(relay.vm.compile(_module(), "llvm", params={"w": W, "b": B}), tvm.cpu())
    single.invoke_stateful("main", X)
    (out,) = single.get_outputs()
    np.testing.assert_array_equal(out.numpy(), _graph_result())


def test_input_index_and_one_input_at_a_time():
    vm = VirtualMachine(relay.vm.compile(_two_inputs(), "llvm"), tvm.cpu())
    assert [vm.get_input_index(n) for n in ("a", "b", "nope")] == [0, 1, -1]
    vm.set_one_input("main", 1, tvm.runtime.tensor(B2))
    vm.set_one_input("main", a=tvm.runtime.tensor(A))
    np.testing.assert_allclose(vm.invoke("main")[0].numpy(), A + B2, rtol=1e-6)
    vm.set_one_input("main", "a", tvm.runtime.tensor(B2))  # replaces one, keeps the other
    np.testing.assert_allclose(vm.invoke("main")[0].numpy(), 2 * B2, rtol=1e-6)
    with pytest.raises(ValueError, match="no input 'c'"):
        vm.set_one_input("main", "c", tvm.runtime.tensor(A))
    with pytest.raises(TypeError, match="one input"):
        vm.set_one_input("main", tvm.runtime.tensor(A))


def test_invoke_with_outputs_writes_the_given_tensors():
    vm = VirtualMachine(relay.vm.compile(_two_inputs(), "llvm"), tvm.cpu())
    outs = [tvm.runtime.empty((2, 3), "float32"), tvm.runtime.empty((2, 3), "float32")]
    vm.invoke_with_outputs("main", {"a": tvm.runtime.tensor(A), "b": tvm.runtime.tensor(B2)}, outs)
    np.testing.assert_allclose(outs[0].numpy(), A + B2, rtol=1e-6)
    np.testing.assert_allclose(outs[1].numpy(), np.exp(A), rtol=1e-6)
    with pytest.raises(ValueError, match="2 outputs, 1 output_args"):
        vm.invoke_with_outputs("main", {"a": A, "b": B2}, outs[:1])


def test_bytecode_is_the_relax_vms_text_and_late_bound_constants_are_refused(tmp_path):
    exe = relay.vm.compile(_two_inputs(), "llvm")
    assert "@main:" in exe.bytecode and "vm.builtin" in exe.bytecode
    with pytest.raises(NotImplementedError, match="keeps every constant inside"):
        exe.move_late_bound_consts(str(tmp_path / "consts"), byte_limit=256)
    with pytest.raises(NotImplementedError, match="late-bound constants"):
        exe.get_late_bound_consts(256)


def test_module_assignment_stores_a_relay_function(installed_alias):
    x = relay.var("x", shape=(3,))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([x], relay.exp(x))
    # Stored as its Relax function; read back as Relay by Relay-era code (the module view).
    assert isinstance(tvm.IRModule.__getitem__.__wrapped__(mod, "main"), tvm.relax.Function)
    assert mod["main"].body.op.name == "exp"
    out = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(A[0])
    np.testing.assert_allclose(out.numpy(), np.exp(A[0]), rtol=1e-6)
    with pytest.raises(TypeError, match="takes a function"):
        mod["other"] = 3
    mod["twice"] = relay.var("y", shape=(3,)) * relay.const(2.0)  # TVM 0.19: fn of free vars
    assert [p.name_hint for p in mod["twice"].params] == ["y"]


def test_calls_between_a_modules_functions(installed_alias):
    t = relay.TensorType((2, 2))
    mod = tvm.IRModule()
    times_2, times_3 = relay.GlobalVar("times_2"), relay.GlobalVar("times_3")
    x1, x2, x3 = relay.var("x1", t), relay.var("x2", t), relay.var("x3", t)
    mod[times_2] = relay.Function([x1], relay.multiply(x1, relay.const(2.0)))
    mod[times_3] = relay.Function([x2], relay.multiply(x2, relay.const(3.0)))
    c = relay.var("c", shape=(), dtype="bool")
    mod["main"] = relay.Function([c, x3], relay.If(c, times_2(x3), times_3(x3)))
    assert mod["main"].checked_type == relay.FuncType([relay.scalar_type("bool"), t], t)
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    data = A[:, :2].copy()
    np.testing.assert_allclose(run(True, data).numpy(), 2 * data, rtol=1e-6)
    np.testing.assert_allclose(run(False, data).numpy(), 3 * data, rtol=1e-6)
    assert "@times_2(%x3)" in relay.If(c, times_2(x3), times_3(x3)).astext()


def test_a_recursive_program_runs_on_the_interpreter_behind_the_vm(installed_alias):
    total = relay.GlobalVar("total")
    i = relay.var("i", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(), dtype="int32")
    step = total(i - relay.const(1), acc + i)
    mod = tvm.IRModule()
    mod[total] = relay.Function([i, acc], relay.If(relay.equal(i, relay.const(0)), acc, step))
    n, a = relay.var("n", shape=(), dtype="int32"), relay.var("a", shape=(), dtype="int32")
    mod["main"] = relay.Function([n, a], total(n, a))
    with pytest.raises(NotImplementedError, match=r"@total.*create_executor\('debug'"):
        relay.build(mod, "llvm")
    exe = relay.vm.compile(mod, "llvm", params={"a": np.array(100, "int32")})
    assert isinstance(exe, relay.vm.InterpretedExecutable)
    assert set(exe.globals) == {"main", "total"} and exe.get_function_params("main") == ["n"]
    vm = VirtualMachine(exe, tvm.cpu())
    assert int(vm.invoke("main", np.array(4, "int32")).numpy()) == 110
    vm.set_input("main", n=np.array(3, "int32"))
    vm.invoke_stateful("main")
    assert [int(v.numpy()) for v in vm.get_outputs()] == [106]
    code, lib = exe.save()
    again = VirtualMachine(Executable.load_exec(code, lib), tvm.cpu())
    assert int(again.run(np.array(2, "int32")).numpy()) == 103
    with pytest.raises(NotImplementedError, match="no library"):
        exe.export_library("unused.so")
    with pytest.raises(TypeError, match=r"main\(n\) takes 1 inputs, got 2"):
        vm.invoke("main", np.array(1, "int32"), np.array(1, "int32"))


def test_optimize_binds_the_params_and_free_vars_reads_the_relax_body():
    compiler = relay.vm.VMCompiler()
    opt_mod, params = compiler.optimize(_module(), target="llvm", params={"w": W, "b": B})
    assert set(params) == {"w", "b"}
    assert [v.name for v in relay.analysis.free_vars(opt_mod["main"].body)] == ["x"]
    vm = VirtualMachine(relay.vm.compile(opt_mod, "llvm"), tvm.cpu())
    np.testing.assert_array_equal(vm.run(X).numpy(), _graph_result())


def test_executable_inspection_answers_from_the_relax_vm():
    exe = relay.vm.compile(_module(), target="llvm", params={"w": W, "b": B})
    assert exe.globals == ["main"]
    assert exe.primitive_ops and not any(op.startswith("vm.") for op in exe.primitive_ops)
    assert all(op in exe.primitives.splitlines() for op in exe.primitive_ops)
    assert "Globals" in exe.stats and exe.constants.startswith("Constant pool")
    assert exe.get_function_params("main") == ["x"] and exe.get_function_arity("main") == 1
    assert exe.module is exe.lib
    code, _ = exe.save()
    assert isinstance(code, bytearray)
    with pytest.raises(NotImplementedError, match="virtual devices"):
        _ = exe.virtual_devices


def _np_conv_nchw(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(padded, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::stride, ::stride]  # (n, c, oh, ow, kh, kw)
    return np.einsum("ncyxij,ocij->noyx", windows, w.astype(np.float64))


def test_a_conv_net_with_a_dynamic_batch_runs_at_batch_1_and_3():
    # relay.Any() batch: the whole-module conv legalization keeps it symbolic (it once raised
    # TypeError converting the batch to int); the convolutions take a deliberate parallel rule.
    w1 = RNG.standard_normal((16, 3, 3, 3)).astype("float32")
    w2 = RNG.standard_normal((32, 16, 1, 1)).astype("float32")
    x = relay.var("x", shape=(relay.Any(), 3, 12, 12))
    v1, v2 = relay.var("w1", shape=w1.shape), relay.var("w2", shape=w2.shape)
    hidden = relay.nn.relu(relay.nn.conv2d(x, v1, padding=(1, 1)))
    out = relay.nn.conv2d(hidden, v2, strides=(2, 2))
    mod = tvm.IRModule.from_expr(relay.Function([x, v1, v2], out))
    exe = relay.vm.compile(mod, target="llvm", params={"w1": w1, "w2": w2})
    vm = VirtualMachine(exe, tvm.cpu())
    for batch in (1, 3):
        data = RNG.standard_normal((batch, 3, 12, 12)).astype("float32")
        expected = _np_conv_nchw(np.maximum(_np_conv_nchw(data, w1, 1, 1), 0), w2, 2, 0)
        np.testing.assert_allclose(vm.run(data).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_while_loop_runs_on_the_interpreter_behind_the_vm(installed_alias):
    from tvm.relay.loops import while_loop

    i, acc = relay.var("i", shape=(), dtype="int32"), relay.var("acc", shape=(), dtype="int32")
    step = relay.var("step", shape=(), dtype="int32")  # a free variable of the loop body
    loop = while_loop(lambda i, _: i < relay.const(4), [i, acc], lambda i, a: (i + step, a + i))
    result = relay.TupleGetItem(loop(relay.const(0), relay.const(0)), 1)
    assert relay.analysis.free_vars(result) == [step]
    mod = tvm.IRModule()
    mod["main"] = relay.Function([step], result)
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    assert int(run(np.array(1, "int32")).numpy()) == 0 + 1 + 2 + 3
    assert int(run(np.array(2, "int32")).numpy()) == 0 + 2
