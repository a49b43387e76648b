"""8-bit conv2d and matmul rewritten into the uint8 x int8 forms the VNNI rule runs on ``vpdpbusd``.

``vpdpbusd`` multiplies unsigned bytes by signed ones. An int8 x int8 ``conv2d`` or ``matmul``
with ``out_dtype="int32"`` is the same sum over ``x + 128`` (a uint8) less ``128 * sum(w)``::

    sum(x * w) = sum((x + 128) * w) - 128 * sum(w)

exact in int32 (the shifted products are the original ones plus ``128 * w``). The weights' sums
are a ``sum`` of the weights: on constant weights :func:`.fold.FoldConstantOps` computes them at
build time. The zero border of a padded convolution is padded before the shift (an int8 0 is a
uint8 128), so the convolution itself pads nothing. :func:`ShiftInt8Data` rewrites:

* ``nn.conv2d(x, w)`` in NHWC/OHWI (what module builds convert convolutions to), groups 1;
  uint8 data too when its channels are no multiple of 4 or its output channels of 8: the
  weights are padded with zeros (folded at build time), the data's channels with zeros, the
  padded output channels sliced off (TVM 0.19's x86 ``conv2d`` legalization padded so too);
* ``matmul(a, b)`` with ``a`` and ``b`` of 2 dimensions or more (a dense layer, ``b`` its
  weights; a batch_matmul).

It runs only for targets with VNNI or ``pmaddubsw`` (AVX-512BW, AVX2, SSSE3: the same rule, see
:func:`..schedule.cpu_int8.dot_intrinsic`; elsewhere the packed GEMM rule's widening multiplies
take int8 as it is), before legalization.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.pipeline.schedule.blocks import target_isa
from compile_engine_compat.pipeline.schedule.cpu_int8 import DOT_DEPTH

__all__ = ["ShiftInt8Data", "shifted"]

_SHIFT = 128


def _dtype(expr: Any) -> str:
    return str(getattr(expr.ty, "dtype", ""))


def _int8_product(call: Any, data: tuple[str, ...] = ("int8",)) -> bool:
    return (
        _dtype(call.args[0]) in data
        and _dtype(call.args[1]) == "int8"
        and str(call.attrs.out_dtype) == "int32"
    )


def _to_uint8(bb: relax.BlockBuilder, x: Any) -> Any:
    widened = bb.emit(relax.op.astype(x, "int32"))
    return bb.emit(relax.op.astype(relax.op.add(widened, relax.const(_SHIFT, "int32")), "uint8"))


def _less_weight_sums(
    bb: relax.BlockBuilder, product: Any, w: Any, axes: list[int], keepdims: bool = False
) -> Any:
    sums = bb.emit(relax.op.sum(relax.op.astype(w, "int32"), axis=axes, keepdims=keepdims))
    scaled = bb.emit(relax.op.multiply(sums, relax.const(_SHIFT, "int32")))
    return relax.op.subtract(product, scaled)


def _static(dim: Any) -> int | None:
    return int(dim) if isinstance(dim, tvm.tirx.IntImm) else None


def _conv2d(bb: relax.BlockBuilder, call: Any) -> Any | None:
    """The VNNI form of an NHWC/OHWI 8-bit conv2d: int8 data shifted, the input channels padded
    with zeros to a multiple of 4, the output channels to a multiple of 16 (then sliced off)
    unless 8 divide them; None when it needs none of these."""
    attrs = call.attrs
    if (
        not _int8_product(call, ("int8", "uint8"))
        or attrs.data_layout != "NHWC"
        or attrs.kernel_layout != "OHWI"
        or attrs.out_layout != "NHWC"
        or int(attrs.groups) != 1
    ):
        return None
    x, w = call.args
    out_c, in_c = _static(w.ty.shape[0]), _static(w.ty.shape[3])
    if out_c is None or in_c is None:
        return None
    pad_in = -in_c % DOT_DEPTH
    pad_out = -out_c % 16 if out_c % 8 else 0
    shift = _dtype(x) == "int8"
    if not (shift or pad_in or pad_out):
        return None
    padding = [int(p) for p in attrs.padding]  # top, left, bottom, right
    top, left, bottom, right = padding if shift else (0, 0, 0, 0)
    if top or left or bottom or right or pad_in:
        # An int8 0 is a uint8 128: the border is padded before the shift, never by the conv.
        x = bb.emit(relax.op.nn.pad(x, [0, 0, top, bottom, left, right, 0, pad_in]))
    if pad_in or pad_out:
        w = bb.emit(relax.op.nn.pad(w, [0, pad_out, 0, 0, 0, 0, 0, pad_in]))
    product = relax.op.nn.conv2d(
        _to_uint8(bb, x) if shift else x,
        w,
        strides=attrs.strides,
        padding=[0, 0, 0, 0] if shift else padding,
        dilation=attrs.dilation,
        data_layout="NHWC",
        kernel_layout="OHWI",
        out_layout="NHWC",
        out_dtype="int32",
    )
    if shift:
        product = _less_weight_sums(bb, bb.emit(product), w, [1, 2, 3])
    if pad_out:
        product = relax.op.strided_slice(bb.emit(product), axes=[3], begin=[0], end=[out_c])
    # The last op is returned as a call, bound to the original variable: an alias binding
    # (``lv = lv1``) would end FuseOps' group there and keep a requantize epilogue out of the
    # kernel.
    return product


def shifted(bb: relax.BlockBuilder, call: Any) -> Any | None:
    """The VNNI form of the 8-bit ``conv2d``/``matmul`` ``call`` (module doc), or None."""
    op = getattr(call.op, "name", None)
    if op == "relax.nn.conv2d":
        return _conv2d(bb, call)
    if op == "relax.matmul" and _int8_product(call):
        a, b = call.args
        rank = len(b.ty.shape)
        if len(a.ty.shape) < 2 or rank < 2:
            return None
        product = bb.emit(relax.op.matmul(_to_uint8(bb, a), b, out_dtype="int32"))
        # The sums over b's rows: [N] for a dense layer's weights, [..., 1, N] for a batch.
        return _less_weight_sums(bb, product, b, [rank - 2], keepdims=rank > 2)
    return None


@relax.expr_functor.mutator
class _Shifter(relax.PyExprMutator):
    def visit_call_(self, call: Any) -> Any:
        call = super().visit_call_(call)
        found = shifted(self.builder_, call)
        return call if found is None else self.builder_.normalize(found)


def ShiftInt8Data(target: tvm.target.Target) -> tvm.transform.Pass:
    """The module pass (see the module doc); it changes nothing for targets without VNNI or
    ``pmaddubsw``."""

    @tvm.transform.module_pass(opt_level=0, name="compile_engine_compat.ShiftInt8Data")
    def shift(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        isa = target_isa(target) if target.kind.name == "llvm" else None
        if isa is None or not (isa.dot_bits or isa.madd_bits):
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
