"""Elementwise call_tir calls raised back to Relax ops (what TVM's ONNX importer makes of Clip)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax, te, topi

from compile_engine_compat.pipeline.model.raise_calls import RaiseElementwiseCalls

F32 = "float32"


def _ops(func: relax.Function) -> list[str]:
    found: list[str] = []

    def visit(expr: object) -> None:
        if isinstance(expr, relax.Call) and hasattr(expr.op, "name"):
            found.append(str(expr.op.name))

    relax.analysis.post_order_visit(func, visit)
    return found


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _module(params, body) -> tvm.IRModule:
    """``main(params) = body(bb, *vars)`` with the PrimFuncs ``bb.emit_te`` made."""
    vars_ = [relax.Var(name, relax.TensorType(list(shape), F32)) for name, shape in params]
    bb = relax.BlockBuilder()
    with bb.function("main", vars_):
        with bb.dataflow():
            out = bb.emit_output(body(bb, *vars_))
        bb.emit_func_output(out)
    return bb.get()


def _clip_module() -> tvm.IRModule:
    def body(bb, x, low):
        y = bb.emit_te(topi.maximum, x, low)  # a 0-d tensor bound
        return bb.emit_te(topi.minimum, y, 6.0)  # a constant bound

    return _module([("x", (2, 3, 4)), ("low", ())], body)


def test_clip_calls_become_maximum_and_minimum_ops_with_the_same_results():
    mod = _clip_module()
    assert _ops(mod["main"]).count("relax.call_tir") == 2
    raised = RaiseElementwiseCalls()(mod)
    assert sorted(_ops(raised["main"])) == ["relax.maximum", "relax.minimum"]
    x = np.linspace(-10, 10, 24, dtype=F32).reshape(2, 3, 4)
    low = np.array(-1.5, F32)
    np.testing.assert_array_equal(_run(raised, x, low), np.minimum(np.maximum(x, low), 6.0))


def test_other_call_tir_calls_are_left_as_they_are():
    def body(bb, x, y):
        transposed = bb.emit_te(topi.transpose, x)  # not elementwise
        k = te.reduce_axis((0, 3), name="k")
        summed = bb.emit_te(lambda a: te.compute((4,), lambda i: te.sum(a[i, k], axis=k)),
                            transposed)  # fmt: skip
        return bb.emit_te(topi.exp, bb.emit(relax.op.add(summed, y)))  # a call, not arithmetic

    mod = _module([("x", (3, 4)), ("y", (4,))], body)
    raised = RaiseElementwiseCalls()(mod)
    assert _ops(raised["main"]).count("relax.call_tir") == 3


def test_relax_clip_becomes_minimum_then_maximum_bit_for_bit():
    mod = _module([("x", (2, 3, 4))], lambda bb, x: relax.op.clip(x, -128, 127))
    raised = RaiseElementwiseCalls()(mod)
    assert _ops(raised["main"]) == ["relax.minimum", "relax.maximum"]
    x = np.array([-300.0, -128.5, -0.5, 0.0, 126.5, 127.0, 127.5, 1e9] * 3, F32).reshape(2, 3, 4)
    np.testing.assert_array_equal(_run(raised, x), _run(mod, x))


def _int8_clip(low: int, high: int) -> tvm.IRModule:
    x = relax.Var("x", relax.TensorType([4], "int8"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(relax.op.clip(x, low, high)))
    return bb.get()


def test_an_integer_clip_is_raised_only_within_its_dtype():
    raised = RaiseElementwiseCalls()(_int8_clip(-3, 6))
    assert _ops(raised["main"]) == ["relax.minimum", "relax.maximum"]
    data = np.array([-128, -4, 5, 127], "int8")
    np.testing.assert_array_equal(_run(raised, data), np.clip(data, -3, 6))
    assert _ops(RaiseElementwiseCalls()(_int8_clip(-1000, 6))["main"]) == ["relax.clip"]
