"""Elementwise ``call_tir`` calls raised back to Relax ops, so that layout passes see through them.

Frontends emit some ops as ready-made PrimFuncs: TVM's ONNX importer turns ``Clip`` into
``call_tir(maximum, (x, 0.0))`` and ``call_tir(minimum, (y, 6.0))`` (``bb.emit_te`` of
``topi.maximum``/``topi.minimum``). ``relax.transform.ConvertLayout`` knows no PrimFunc: it
converts every such call's inputs back to the original layout and its output forward again, two
transposes around each ReLU6 of a MobileNetV2. :func:`RaiseElementwiseCalls` replaces a
``call_tir`` whose PrimFunc is one elementwise block -- every tensor read at the output's own
indices or a 0-d tensor, combined by ``+ - * / max min`` of those reads and constants -- with the
same expression in Relax ops, which every layout pass and ``FuseOps`` handle. Anything else is
left as it is. ``relax.clip`` has no layout rule either (two transposes around every requantize
of an int8 model, which also keep its epilogue out of the convolution's kernel): it becomes
``maximum(minimum(x, high), low)``, TOPI's own ``clip`` expression (an integer clip: where
its bounds are integers its dtype holds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax, s_tir, tirx

__all__ = ["RaiseElementwiseCalls", "clip_as_min_max", "raised_expression"]

_CALL_TIR = "relax.call_tir"
_CLIP = "relax.clip"
_LOAD = tvm.ir.expr.TensorLoad
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    tirx.Add: relax.op.add,
    tirx.Sub: relax.op.subtract,
    tirx.Mul: relax.op.multiply,
    tirx.Div: relax.op.divide,
    tirx.Max: relax.op.maximum,
    tirx.Min: relax.op.minimum,
}


def raised_expression(func: tirx.PrimFunc, args: list[Any]) -> Any | None:
    """The Relax expression computing ``func(*args, out)``, or None when it is not elementwise.

    Parameters
    ----------
    func : tvm.tirx.PrimFunc
        Parameters: the inputs, then one output.
    args : list of relax.Expr
        The call's inputs, typed.
    """
    if len(func.params) != len(args) + 1:
        return None
    blocks: list[Any] = []
    tvm_ffi.structural_walk(
        func.body, [(s_tir.SBlock, lambda b: blocks.append(b) if b.name_hint != "root" else None)]
    )
    if len(blocks) != 1:
        return None
    store = blocks[0].body
    out = func.params[-1]
    if not isinstance(store, tirx.BufferStore) or not store.buffer.same_as(out):
        return None
    own = list(store.indices)
    if not all(isinstance(index, tirx.Var) for index in own):
        return None
    inputs = {param: arg for param, arg in zip(func.params, args)}

    def raise_(expr: Any) -> Any | None:
        if isinstance(expr, _LOAD):
            arg = next((a for p, a in inputs.items() if p.same_as(expr.source)), None)
            indices = list(expr.indices)
            at_own = len(indices) == len(own) and all(i.same_as(o) for i, o in zip(indices, own))
            if arg is None or not (at_own or not indices):
                return None
            return arg
        if isinstance(expr, tirx.FloatImm | tirx.IntImm):
            return relax.const(expr.value, str(expr.ty.dtype))
        make = _BINARY.get(type(expr))
        if make is None:
            return None
        a, b = raise_(expr.a), raise_(expr.b)
        return None if a is None or b is None else make(a, b)

    return raise_(store.value)


def _number(arg: Any) -> int | float | None:
    """The number an ``IntImm``/``FloatImm`` (or a ``PrimValue`` of one) holds, else None."""
    value = getattr(arg, "value", None)
    value = getattr(value, "value", value)
    return value if isinstance(value, int | float) else None


def clip_as_min_max(call: Any) -> Any | None:
    """``relax.clip(x, low, high)`` as ``maximum(minimum(x, high), low)``, or None where its
    bounds are not numbers, or (an integer ``x``) not integers its dtype holds."""
    dtype = str(getattr(call.args[0].ty, "dtype", ""))
    found = [_number(arg) for arg in call.args[1:3]]
    bounds = [b for b in found if b is not None]
    if not dtype or len(call.args) != 3 or len(bounds) != 2:
        return None
    if not dtype.startswith(("float", "bfloat")):
        info = np.iinfo(np.dtype(dtype)) if dtype.startswith(("int", "uint")) else None
        if info is None or not all(float(b).is_integer() and info.min <= b <= info.max
                                   for b in bounds):  # fmt: skip
            return None
        bounds = [int(b) for b in bounds]
    low, high = (relax.const(b, dtype) for b in bounds)
    return relax.op.maximum(relax.op.minimum(call.args[0], high), low)


@relax.expr_functor.mutator
class _Raiser(relax.PyExprMutator):
    def __init__(self, mod: tvm.IRModule) -> None:
        super().__init__(mod)
        self.mod_ = mod

    def visit_call_(self, call: Any) -> Any:
        call = super().visit_call_(call)
        if getattr(call.op, "name", None) == _CLIP:
            return self._same_type(clip_as_min_max(call), call)
        if getattr(call.op, "name", None) != _CALL_TIR or len(call.args) != 2:
            return call
        gvar = call.args[0]
        if not isinstance(gvar, tvm.ir.GlobalVar) or gvar not in self.mod_.get_global_vars():
            return call
        callee = self.mod_[gvar]
        if not isinstance(callee, tirx.PrimFunc):
            return call
        return self._same_type(raised_expression(callee, list(call.args[1].fields)), call)

    def _same_type(self, raised: Any | None, call: Any) -> Any:
        """``raised`` normalized where it has the call's result type, else the call itself."""
        if raised is None:
            return call
        normalized = self.builder_.normalize(raised)
        # The same result type as the call's, or the call stays (a broadcast it did not show).
        if not tvm_ffi.structural_equal(normalized.ty, call.ty):
            return call
        return normalized


def RaiseElementwiseCalls() -> tvm.transform.Pass:
    """A module pass raising elementwise ``call_tir`` calls to Relax ops (see the module doc)."""

    @tvm.transform.module_pass(opt_level=0, name="compile_engine_compat.RaiseElementwiseCalls")
    def raise_all(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        raiser = _Raiser(mod)
        updates = {
            gvar: raiser.visit_expr(func)
            for gvar, func in mod.functions.items()
            if isinstance(func, relax.Function)
        }
        for gvar, func in updates.items():
            mod[gvar] = func
        return relax.transform.DeadCodeElimination()(mod)

    return raise_all
