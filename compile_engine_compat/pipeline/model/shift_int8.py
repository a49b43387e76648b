"""int8 x int8 -> int32 products rewritten as uint8 x int8 ones, so that they run on VNNI.

``vpdpbusd`` multiplies unsigned bytes by signed ones. An int8 x int8 ``conv2d`` or ``matmul``
with ``out_dtype="int32"`` is the same sum over ``x + 128`` (a uint8) less ``128 * sum(w)``::

    sum(x * w) = sum((x + 128) * w) - 128 * sum(w)

exact in int32 (the shifted products are the original ones plus ``128 * w``). The weights' sums
are a ``sum`` of the weights: on constant weights :func:`.fold.FoldConstantOps` computes them at
build time. The zero border of a padded convolution is padded before the shift (an int8 0 is a
uint8 128), so the convolution itself pads nothing. :func:`ShiftInt8Data` rewrites:

* ``nn.conv2d(x, w)`` in NHWC/OHWI (what module builds convert convolutions to), groups 1;
* ``matmul(a, b)`` with ``b`` of 2 dimensions (a dense layer: ``b`` its weights).

It runs only for targets with VNNI (elsewhere the packed GEMM rule's widening multiplies take
int8 as it is), before legalization.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.pipeline.schedule.blocks import target_isa

__all__ = ["ShiftInt8Data", "shifted"]

_SHIFT = 128


def _dtype(expr: Any) -> str:
    return str(getattr(expr.ty, "dtype", ""))


def _int8_product(call: Any) -> bool:
    return (
        _dtype(call.args[0]) == "int8"
        and _dtype(call.args[1]) == "int8"
        and str(call.attrs.out_dtype) == "int32"
    )


def _to_uint8(bb: relax.BlockBuilder, x: Any) -> Any:
    widened = bb.emit(relax.op.astype(x, "int32"))
    return bb.emit(relax.op.astype(relax.op.add(widened, relax.const(_SHIFT, "int32")), "uint8"))


def _less_weight_sums(bb: relax.BlockBuilder, product: Any, w: Any, axes: list[int]) -> Any:
    sums = bb.emit(relax.op.sum(relax.op.astype(w, "int32"), axis=axes))
    scaled = bb.emit(relax.op.multiply(sums, relax.const(_SHIFT, "int32")))
    return relax.op.subtract(product, scaled)


def shifted(bb: relax.BlockBuilder, call: Any) -> Any | None:
    """The uint8 form of the int8 ``conv2d``/``matmul`` ``call`` (module doc), or None."""
    op = getattr(call.op, "name", None)
    if op == "relax.nn.conv2d" and _int8_product(call):
        attrs = call.attrs
        if (
            attrs.data_layout != "NHWC"
            or attrs.kernel_layout != "OHWI"
            or attrs.out_layout != "NHWC"
            or int(attrs.groups) != 1
        ):
            return None
        x, w = call.args
        top, left, bottom, right = (int(p) for p in attrs.padding)
        if top or left or bottom or right:
            pads = [0, 0, top, bottom, left, right, 0, 0]
            x = bb.emit(relax.op.nn.pad(x, pads, pad_value=0.0))
        product = bb.emit(
            relax.op.nn.conv2d(
                _to_uint8(bb, x),
                w,
                strides=attrs.strides,
                padding=[0, 0, 0, 0],
                dilation=attrs.dilation,
                data_layout="NHWC",
                kernel_layout="OHWI",
                out_layout="NHWC",
                out_dtype="int32",
            )
        )
        return _less_weight_sums(bb, product, w, [1, 2, 3])
    if op == "relax.matmul" and _int8_product(call) and len(call.args[1].ty.shape) == 2:
        a, b = call.args
        product = bb.emit(relax.op.matmul(_to_uint8(bb, a), b, out_dtype="int32"))
        return _less_weight_sums(bb, product, b, [0])
    return None


@relax.expr_functor.mutator
class _Shifter(relax.PyExprMutator):
    def visit_call_(self, call: Any) -> Any:
        call = super().visit_call_(call)
        found = shifted(self.builder_, call)
        return call if found is None else self.builder_.normalize(found)


def ShiftInt8Data(target: tvm.target.Target) -> tvm.transform.Pass:
    """The module pass (see the module doc); it changes nothing for targets without VNNI."""

    @tvm.transform.module_pass(opt_level=0, name="compile_engine_compat.ShiftInt8Data")
    def shift(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        if target.kind.name != "llvm" or not target_isa(target).dot_bits:
            return mod
        shifter = _Shifter(mod)
        updates = {
            gvar: shifter.visit_expr(func)
            for gvar, func in mod.functions.items()
            if isinstance(func, relax.Function)
        }
        for gvar, func in updates.items():
            mod[gvar] = func
        return mod

    return shift
