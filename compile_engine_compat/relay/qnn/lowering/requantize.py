"""The lowerings of ``qnn.requantize``, ``qnn.quantize``, ``qnn.dequantize`` and the simulated
pair, as TVM 0.19's canonicalization wrote them.

Requantize computes ``zp_out + in_scale / out_scale * (q - zp_in)`` either in floating point
(``compute_dtype`` float32/float64: a multiply, then ``UPWARD`` = ``floor(x + 0.5)`` or
``TONEAREST`` = ``round(x)``, halves away from zero) or in 64-bit fixed point (``int64``: the
multiplier as an int32 significand and a shift, ``(x << ls) * m`` plus the rounding term, shifted
right by ``31 + rs``; ``TONEAREST`` rounds negative halves down). Every step is a plain Relay op,
so the result is TVM 0.19's bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compile_engine_compat.relay.expr import Attrs, Constant, Expr, const
from compile_engine_compat.relay.qnn.lowering.common import (
    ArgType,
    call,
    clip_cast,
    constant_values,
    expand_to_axis,
    fixed_point_multiplier_shift,
    float_scalars,
    is_scalar_equal,
    normalized_axis,
    per_axis,
    qrange,
    round_half_away,
)
from compile_engine_compat.relay.qnn.lowering.config import (
    resolved_compute_dtype,
    resolved_rounding,
)

__all__ = [
    "SQNN_DTYPE_TO_CODE",
    "dequantize",
    "fixed_point_multiply",
    "lower_dequantize",
    "lower_quantize",
    "lower_requantize",
    "lower_simulated_dequantize",
    "lower_simulated_quantize",
    "quantize",
    "requantize",
]

#: TVM 0.19's codes of the simulated ops' dtype argument (``topi.nn.qnn.SQNN_DTYPE_TO_CODE``).
SQNN_DTYPE_TO_CODE = {"disable": 0, "int8": 1, "uint8": 2, "int32": 3}


def _multipliers(in_scale: Expr, out_scale: Expr) -> tuple[list[float], bool]:
    """The requantize multipliers (double, from float scales) and whether per-tensor."""
    ins = constant_values(in_scale, "qnn.requantize input_scale")
    out = float_scalars(constant_values(out_scale, "qnn.requantize output_scale").ravel()[:1])[0]
    if out == 0.0:
        raise ValueError("QNN requantize output scale can not be equal to 0.0")
    scalar = ins.ndim == 0
    return [s / out for s in float_scalars(ins.ravel())], scalar


def fixed_point_multiply(tensor: Expr, multipliers: list[float], rank: int, axis: int,
                         rounding: str) -> Expr:  # fmt: skip
    """Relay's int64 fixed-point multiply of an int32 tensor (per tensor or per ``axis``)."""
    pairs = [fixed_point_multiplier_shift(m) for m in multipliers]
    fixed = np.array([p[0] for p in pairs], "int64")
    lshift = np.array([max(p[1], 0) for p in pairs], "int64")
    total_rshift = np.array([max(-p[1], 0) + 31 for p in pairs], "int64")
    pos = np.left_shift(np.int64(1), total_rshift - 1)

    def values(array: np.ndarray) -> Expr:
        if len(multipliers) == 1:
            return const(np.int64(array[0]), "int64")
        return expand_to_axis(const(array, "int64"), rank, axis)

    x = call("cast", tensor, "int64")
    if lshift.any():
        x = call("left_shift", x, values(lshift))
    x = call("multiply", x, values(fixed))
    if rounding == "UPWARD":
        rounder = values(pos)
    else:  # negative values round their halves down
        zero = const(np.int64(0), "int64")
        rounder = call("where", call("greater_equal", x, zero), values(pos), values(pos - 1))
    x = call("add", x, rounder)
    x = call("right_shift", x, values(total_rshift))
    return call("cast", x, "int32")


def requantize(data: Expr, dtype_shape: ArgType, in_scale: Expr, in_zp: Expr, zp_type: ArgType,
               out_scale: Expr, out_zp: Expr, axis: int, rounding: str, compute_dtype: str,
               out_dtype: str) -> Expr:  # fmt: skip
    """Relay's ``RequantizeLower``: plain ops computing the requantized tensor."""
    rounding = resolved_rounding(rounding)
    compute = resolved_compute_dtype(compute_dtype)
    shape = dtype_shape.shape
    rank = len(shape)
    ax = normalized_axis(axis, rank)
    multipliers, scalar = _multipliers(in_scale, out_scale)
    same = is_scalar_equal(in_scale, out_scale)
    work = "int32" if compute == "int64" else compute
    x = call("cast", data, work)
    if not is_scalar_equal(in_zp, 0):
        zp = per_axis(in_zp, ArgType(zp_type.shape or (1,), zp_type.dtype), rank, ax)
        x = call("subtract", x, call("cast", zp, work))
    if compute == "int64":
        if not (scalar and same):
            x = fixed_point_multiply(x, multipliers, rank, ax, rounding)
        if not is_scalar_equal(out_zp, 0):
            x = call("add", call("cast", out_zp, "int32"), x)
    else:
        if scalar:
            if not same:
                x = call("multiply", const(np.array(multipliers[0], compute), compute), x)
        else:
            factor = expand_to_axis(const(np.array(multipliers, compute), compute), rank, ax)
            x = call("multiply", x, factor)
        if not is_scalar_equal(out_zp, 0):
            x = call("add", x, call("cast", out_zp, compute))
        if rounding == "UPWARD":
            x = call("floor", call("add", x, const(np.array(0.5, compute), compute)))
        else:
            x = round_half_away(x, compute)
        x = call("cast", x, "int32")
    if out_dtype == "int32":
        return x
    return clip_cast(x, out_dtype)


def lower_requantize(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.requantize(data, input_scale, input_zero_point, output_scale, output_zero_point)``."""
    return requantize(
        args[0], types[0], args[1], args[2], types[2], args[3], args[4],
        int(attrs.axis), str(attrs.rounding), str(attrs.compute_dtype), str(attrs.out_dtype),
    )  # fmt: skip


def quantize(data: Expr, dtype_shape: ArgType, scale: Expr, scale_type: ArgType, zp: Expr,
             zp_type: ArgType, axis: int, out_dtype: str) -> Expr:  # fmt: skip
    """Relay's ``QuantizeLower``: ``clip(round(x / scale) + zp)`` cast to ``out_dtype``."""
    rank = len(dtype_shape.shape)
    ax = normalized_axis(axis, rank)
    if scale_type.shape and not (len(scale_type.shape) == 1 and scale_type.shape[0] == 1):
        scale = expand_to_axis(scale, rank, ax)
    if zp_type.shape and not (len(zp_type.shape) == 1 and zp_type.shape[0] == 1):
        zp = expand_to_axis(zp, rank, ax)
    low, high = qrange(out_dtype)
    scaled = round_half_away(call("divide", data, scale), "float32")
    shifted = call("add", scaled, call("cast", zp, "float32"))
    return call("cast", call("clip", shifted, low, high), out_dtype)


def lower_quantize(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.quantize(data, output_scale, output_zero_point)``."""
    return quantize(
        args[0], types[0], args[1], types[1], args[2], types[2],
        int(attrs.axis), str(attrs.out_dtype),
    )  # fmt: skip


def dequantize(data: Expr, dtype_shape: ArgType, scale: Expr, scale_type: ArgType, zp: Expr,
               zp_type: ArgType, axis: int, out_dtype: str = "float32") -> Expr:  # fmt: skip
    """Relay's ``DequantizeLower``: ``(int32(q) - zp) * scale`` in float32."""
    rank = len(dtype_shape.shape)
    ax = normalized_axis(axis, rank)
    if scale_type.shape and not (len(scale_type.shape) == 1 and scale_type.shape[0] == 1):
        scale = expand_to_axis(scale, rank, ax)
    if zp_type.shape and not (len(zp_type.shape) == 1 and zp_type.shape[0] == 1):
        zp = expand_to_axis(zp, rank, ax)
    shift = call("subtract", call("cast", data, "int32"), call("cast", zp, "int32"))
    out = call("multiply", call("cast", shift, "float32"), scale)
    return out if out_dtype == "float32" else call("cast", out, out_dtype)


def lower_dequantize(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.dequantize(data, input_scale, input_zero_point)``."""
    return dequantize(
        args[0], types[0], args[1], types[1], args[2], types[2],
        int(attrs.axis), str(attrs.out_dtype),
    )  # fmt: skip


def _by_code(dtype_code: Expr, data: Expr, make: Any) -> Expr:
    """A simulated op's result: for a constant dtype code, the one variant it names; for a
    run-time code (TVM 0.19 compiled the op once for every dtype), every variant, selected by
    the code."""
    if isinstance(dtype_code, Constant):
        code = int(np.asarray(dtype_code.data.numpy()).reshape(-1)[0])
        if code not in SQNN_DTYPE_TO_CODE.values():
            raise ValueError(f"unknown simulated-QNN dtype code {code} ({SQNN_DTYPE_TO_CODE})")
        return data if code == 0 else make(_code_dtype(code))
    code_t = call("reshape", call("cast", dtype_code, "int32"), [])
    out = data
    for name, code in SQNN_DTYPE_TO_CODE.items():
        if code:
            chosen = call("equal", code_t, const(np.int32(code), "int32"))
            out = call("where", chosen, make(name), out)
    return out


def _code_dtype(code: int) -> str:
    return next(name for name, c in SQNN_DTYPE_TO_CODE.items() if c == code)


def _channel(value: Expr, vtype: ArgType, rank: int, axis: int) -> Expr:
    """A simulated op's scale/zero point: TOPI indexed it ``[index[axis] % len]``."""
    if not vtype.shape or vtype.shape == (1,) or rank == 0:
        return call("reshape", value, []) if vtype.shape else value
    return expand_to_axis(value, rank, normalized_axis(axis, rank))


def lower_simulated_quantize(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.simulated_quantize(data, out_dtype, output_scale, output_zero_point)``: the
    quantized values kept in float (TOPI's ``simulated_quantize``)."""
    data, dtype_code, scale, zp = args
    rank = len(types[0].shape)
    s = _channel(scale, types[2], rank, int(attrs.axis))
    z = call("cast", _channel(zp, types[3], rank, int(attrs.axis)), types[0].dtype)

    def make(dtype: str) -> Expr:
        low, high = qrange(dtype)
        value = call("add", round_half_away(call("divide", data, s), types[0].dtype), z)
        return call("clip", value, low, high)

    return _by_code(dtype_code, data, make)


def lower_simulated_dequantize(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.simulated_dequantize(data, in_dtype, input_scale, input_zero_point)``:
    ``(x - zp) * scale`` in float (TOPI's ``simulated_dequantize``)."""
    data, dtype_code, scale, zp = args
    rank = len(types[0].shape)
    s = _channel(scale, types[2], rank, int(attrs.axis))
    z = call("cast", _channel(zp, types[3], rank, int(attrs.axis)), types[0].dtype)
    return _by_code(dtype_code, data, lambda _: call("multiply", call("subtract", data, z), s))
