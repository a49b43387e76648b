"""The integer arithmetic of ``relay.quantize``'s realize step, as Relay ops.

A quantized value is an integer tensor and a float scale (real = integer * scale). These
helpers emit what TVM 0.19's realize emitted between quantized ops: a float tensor to integers
(divide, round, clip, cast), a change of scale (a shift when the ratio is a power of two,
rounding half up when ``round_for_shift``; else a fixed-point multiply), and back to float.
Changes of scale compute in int64, then clip and cast, so no intermediate overflows.
"""

from __future__ import annotations

import math

import numpy as np

from ..expr import Expr, const
from ..op.op import builder

__all__ = ["chain", "dequantize", "quantize_constant", "quantize_float", "requantize", "shift_of"]


def chain(expr: Expr, depth: int) -> list[Expr]:
    """``expr`` and its first arguments, ``depth`` calls down (the nodes of one conversion)."""
    nodes = [expr]
    while len(nodes) < depth:
        nodes.append(nodes[-1].args[0])  # type: ignore[attr-defined]
    return nodes


def _limit(nbit: int) -> int:
    return int(2 ** (nbit - 1) - 1)


def quantize_float(data: Expr, scale: float, nbit: int, dtype: str) -> Expr:
    """``cast(clip(round(data / scale), -(2^(nbit-1)-1), 2^(nbit-1)-1), dtype)``."""
    limit = _limit(nbit)
    scaled = builder("round")(builder("divide")(data, const(scale, "float32")))
    return builder("cast")(builder("clip")(scaled, -limit, limit), dtype)


def quantize_constant(value: np.ndarray, scale: float, nbit: int, dtype: str) -> Expr:
    """A constant quantized in NumPy (the same rounding as :func:`quantize_float`)."""
    limit = _limit(nbit)
    scaled = np.clip(np.round(value.astype("float32") / np.float32(scale)), -limit, limit)
    return const(scaled.astype(dtype), dtype)


def shift_of(ratio: float) -> int | None:
    """``log2(ratio)`` when ``ratio`` is a power of two, else None."""
    if ratio <= 0:
        return None
    mantissa, exponent = math.frexp(ratio)
    return exponent - 1 if mantissa == 0.5 else None


def requantize(
    data: Expr,
    from_scale: float,
    to_scale: float,
    nbit: int | None,
    dtype: str,
    round_for_shift: bool,
) -> Expr:
    """An integer tensor at ``from_scale`` as ``dtype`` integers at ``to_scale``.

    Parameters
    ----------
    data : Expr
        An integer tensor.
    from_scale, to_scale : float
        Its scale, and the scale wanted.
    nbit : int or None
        The bit width of the result (its values are clipped to it); None: int64, unclipped.
    dtype : str
        The result's dtype.
    round_for_shift : bool
        Whether a right shift rounds half up (TVM 0.19's ``round_for_shift``).
    """
    wide = builder("cast")(data, "int64")
    ratio = from_scale / to_scale
    shift = shift_of(ratio)
    if shift is not None and shift > 0:
        wide = builder("left_shift")(wide, const(shift, "int64"))
    elif shift is not None and shift < 0:
        if round_for_shift:
            wide = builder("add")(wide, const(1 << (-shift - 1), "int64"))
        wide = builder("right_shift")(wide, const(-shift, "int64"))
    elif shift is None:
        bits = max(0, 30 - math.floor(math.log2(ratio)))
        multiplier = round(ratio * 2**bits)
        wide = builder("multiply")(wide, const(multiplier, "int64"))
        if bits:
            wide = builder("add")(wide, const(1 << (bits - 1), "int64"))
            wide = builder("right_shift")(wide, const(bits, "int64"))
    if nbit is None:
        return wide
    limit = _limit(nbit)
    return builder("cast")(builder("clip")(wide, -limit, limit), dtype)


def dequantize(data: Expr, scale: float) -> Expr:
    """``cast(data, float32) * scale``."""
    return builder("multiply")(builder("cast")(data, "float32"), const(scale, "float32"))
