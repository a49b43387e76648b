"""The lowerings of the unary QNN ops, ``qnn.leaky_relu``, ``qnn.avg_pool2d`` and
``qnn.softmax``.

The element-wise ops (``sigmoid``, ``tanh``, ``exp``, ``sqrt``, ``rsqrt``, ``erf``, ``log``,
``abs``, ``hardswish``) are TVM 0.19's table lookups: every value of the 8-bit input dtype is
dequantized, the float function applied (NumPy's, as TVM 0.19 did), and the result quantized
(float32 division, rounding halves away from zero, clipping), so the op is one ``take`` of a
256-entry table.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.expr import Attrs, Expr, const
from compile_engine_compat.relay.qnn.lowering.common import (
    ArgType,
    call,
    clip_cast,
    constant_values,
    is_scalar_equal,
    qrange,
)
from compile_engine_compat.relay.qnn.lowering.requantize import (
    dequantize,
    fixed_point_multiply,
    quantize,
    requantize,
)

__all__ = [
    "UNARY_FUNCTIONS",
    "lookup_table",
    "lower_avg_pool2d",
    "lower_leaky_relu",
    "lower_softmax",
    "lower_unary",
    "quantized_values",
    "round_half_away_from_zero",
    "table_lookup",
]


def _hardswish(x: np.ndarray) -> np.ndarray:
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy import special  # TVM 0.19 used scipy's erf for qnn.erf's table

    return special.erf(x)


#: The float function of each unary QNN op (TVM 0.19's NumPy functions).
UNARY_FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sqrt": np.sqrt,
    "rsqrt": lambda a: 1 / np.sqrt(a),
    "exp": np.exp,
    "sigmoid": lambda a: 1 / (1 + np.exp(-a)),
    "hardswish": _hardswish,
    "tanh": np.tanh,
    "log": np.log,
    "abs": np.abs,
    "erf": _erf,
}


def round_half_away_from_zero(x: np.ndarray) -> np.ndarray:
    """TVM's ``round`` (LLVM ``llvm.round``): halves away from zero, exactly."""
    whole = np.trunc(x)
    frac = x - whole
    return whole + np.sign(x) * (np.abs(frac) >= 0.5)


def quantized_values(func: Callable[[np.ndarray], np.ndarray], values: np.ndarray,
                     in_scale: float, in_zp: int, out_scale: float, out_zp: int,
                     out_dtype: str) -> np.ndarray:  # fmt: skip
    """``quantize(func(dequantize(values)))`` as TVM 0.19 computed its lookup tables: float32
    dequantization, NumPy's ``func``, float32 division, rounding halves away from zero."""
    low, high = qrange(out_dtype)
    real = (values.astype("int32") - np.int32(in_zp)).astype("float32") * np.float32(in_scale)
    with np.errstate(all="ignore"):
        out = np.asarray(func(real), dtype="float32")
        scaled = round_half_away_from_zero(out / np.float32(out_scale)) + np.float32(out_zp)
        clipped = np.clip(scaled, low, high)
    return np.nan_to_num(clipped, nan=0.0).astype(out_dtype)


def lookup_table(func: Callable[[np.ndarray], np.ndarray], in_scale: float, in_zp: int,
                 out_scale: float, out_zp: int, dtype: str,
                 out_dtype: str | None = None) -> np.ndarray:  # fmt: skip
    """The quantized results of ``func`` for every value of ``dtype``, smallest value first."""
    low, high = qrange(dtype)
    values = np.arange(low, high + 1, dtype="int64").astype(dtype)
    return quantized_values(func, values, in_scale, in_zp, out_scale, out_zp, out_dtype or dtype)


def table_lookup(data: Expr, table: np.ndarray, in_dtype: str) -> Expr:
    """``table[data - min(in_dtype)]``: a value-ordered table read at each input."""
    index = call("subtract", call("cast", data, "int32"), const(np.int32(qrange(in_dtype)[0])))
    return call("take", const(table), index, 0)


def lower_unary(name: str) -> Callable[[list[Expr], Attrs, list[ArgType]], Expr]:
    """The lowering of ``qnn.<name>(x, scale, zero_point, output_scale, output_zero_point)``."""
    func = UNARY_FUNCTIONS[name]

    def lower(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
        dtype = types[0].dtype
        if dtype not in ("int8", "uint8", "int16", "uint16"):
            raise UnsupportedRelayError(
                f"qnn.{name} takes an 8- or 16-bit integer input, got {dtype}"
            )
        what = f"qnn.{name}"
        scalars = [constant_values(a, f"{what} {n}").reshape(-1)[0] for a, n in zip(
            args[1:], ("scale", "zero_point", "output_scale", "output_zero_point"))]  # fmt: skip
        table = lookup_table(
            func, float(scalars[0]), int(scalars[1]), float(scalars[2]), int(scalars[3]), dtype
        )
        return table_lookup(args[0], table, dtype)

    return lower


def lower_leaky_relu(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.leaky_relu``: ``requantize(q)`` where ``q >= zp``, else
    ``alpha * requantize(q) + (1 - alpha) * zp_out`` in fixed point."""
    data, in_scale, in_zp, out_scale, out_zp = args
    alpha = float(attrs.alpha)
    shape = types[0].shape
    data32 = call("cast", data, "int32")
    in_zp32 = call("cast", in_zp, "int32")
    out_zp32 = call("cast", out_zp, "int32")
    if is_scalar_equal(in_scale, out_scale) and is_scalar_equal(in_zp, out_zp):
        requantized = data32
    else:
        requantized = requantize(
            data32, ArgType(shape, "int32"), in_scale, in_zp, types[2], out_scale, out_zp, -1,
            "None", "None", "int32",
        )  # fmt: skip
    product = fixed_point_multiply(requantized, [alpha], len(shape), 0, "UPWARD")
    scaled_zp = fixed_point_multiply(out_zp32, [1 - alpha], 0, 0, "UPWARD")
    negative = call("add", product, scaled_zp)
    out = call("where", call("less", data32, in_zp32), negative, requantized)
    return clip_cast(out, types[0].dtype)


def lower_avg_pool2d(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.avg_pool2d``: the input requantized to the output's parameters (int32), an int32
    ``nn.avg_pool2d``, clipped and cast back."""
    data, in_scale, in_zp, out_scale, out_zp = args
    if is_scalar_equal(in_scale, out_scale) and is_scalar_equal(in_zp, out_zp):
        shifted = call("cast", data, "int32")
    else:
        shifted = requantize(
            data, types[0], in_scale, in_zp, types[2], out_scale, out_zp, -1, "None", "None",
            "int32",
        )  # fmt: skip
    fields = {name: attrs[name] for name in attrs.keys()}
    pooled = call("nn.avg_pool2d", shifted, **fields)
    return clip_cast(pooled, types[0].dtype)


def lower_softmax(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.softmax``: dequantize, float softmax, quantize.

    TVM 0.19 computed it with an integer approximation (its own C++ lowering); this is the
    closest honest substitute, equal to the real softmax of the dequantized input to one step
    of the output's scale.
    """
    data, scale, zp, out_scale, out_zp = args
    real = dequantize(data, types[0], scale, types[1], zp, types[2], -1)
    soft = call("nn.softmax", real, int(attrs.axis))
    return quantize(
        soft, ArgType(types[0].shape, "float32"), out_scale, types[3], out_zp, types[4], -1,
        types[0].dtype,
    )  # fmt: skip
