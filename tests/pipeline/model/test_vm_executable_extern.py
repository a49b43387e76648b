"""Whole-module builds of extern kernels and of kernels a Relax function carries."""

from __future__ import annotations

import numpy as np
import tvm
import tvm_ffi
from tvm import relax, topi

from compile_engine_compat import relay
from compile_engine_compat.pipeline.model.vm_executable import PRIM_FUNCS_ATTR, attach_prim_funcs


def test_an_extern_kernel_builds_in_a_module_without_weights() -> None:
    # topk is an extern (ir_builder) kernel: TVM's SplitLayoutRewritePreproc failed an internal
    # check on it, so the module build runs that pass only when weights are to be packed.
    x = relay.var("x", shape=(2, 5))
    out = relay.topk(x, k=2, ret_type="values")
    data = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], "float32")
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([x], out))(data)
    np.testing.assert_array_equal(got.numpy(), [[5, 4], [9, 6]])


def test_carried_kernels_are_attached_under_the_called_global_vars() -> None:
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    with bb.function("main", [x]):
        out = bb.emit(bb.call_te(topi.nn.relu, x, primfunc_name_hint="relu_kernel"))
        bb.emit_func_output(out)
    built = bb.get()
    kernel = built["relu_kernel"]
    alone = tvm.IRModule(
        {"main": built["main"].with_attr(PRIM_FUNCS_ATTR, {"relu_kernel": kernel})}
    )
    attached = attach_prim_funcs(alone)
    assert PRIM_FUNCS_ATTR not in (attached["main"].attrs or {})
    assert tvm_ffi.structural_equal(attached["relu_kernel"], kernel)
    ex = tvm.compile(attached, target="llvm")
    data = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(data)).numpy()
    np.testing.assert_array_equal(got, np.maximum(data, 0))


def test_a_module_carrying_nothing_is_returned_as_is() -> None:
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    assert attach_prim_funcs(mod) is mod
