"""What every QNN lowering uses: the input types, constant reading, dtype ranges, Relay's
fixed-point multiplier, and the few plain Relay ops the lowerings are written with.

A lowering is ``lower(args, attrs, types) -> relay.Expr``: ``args`` are the call's Relay
arguments (scales and zero points are ``relay.Constant`` where the program gave constants),
``types`` their :class:`ArgType`, and the result is a graph of plain Relay ops (the ones the
front end serves), as TVM 0.19's ``qnn.transform.CanonicalizeOps`` produced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.expr import Constant, Expr, const
from compile_engine_compat.relay.op.op import builder

__all__ = [
    "ArgType",
    "call",
    "clip_cast",
    "constant_values",
    "expand_to_axis",
    "fixed_point_multiplier_shift",
    "float_scalars",
    "is_scalar_equal",
    "normalized_axis",
    "per_axis",
    "qrange",
    "round_half_away",
]


@dataclass(frozen=True)
class ArgType:
    """The static type of one argument: its shape and dtype (a tuple argument: ``fields``)."""

    shape: tuple[int, ...]
    dtype: str
    fields: tuple[ArgType, ...] = ()


def call(op_name: str, *args: Any, **attrs: Any) -> Expr:
    """A call of the plain Relay op ``op_name`` built with its builder (Relay's attributes)."""
    return builder(op_name)(*args, **attrs)


def constant_values(expr: Expr, what: str) -> np.ndarray:
    """The value of a constant argument (a scale, a zero point), as a NumPy array.

    Raises
    ------
    UnsupportedRelayError
        When ``expr`` is not a constant: TVM 0.19's lowering read these values at compile time.
    """
    if not isinstance(expr, Constant):
        raise UnsupportedRelayError(
            f"{what} must be a constant (relay.const) to lower the QNN op to integer arithmetic, "
            f"as in TVM 0.19; got {type(expr).__name__}: bind the parameters first "
            "(relay.build_module.bind_params_by_name)"
        )
    return np.asarray(expr.data.numpy())


def is_scalar_equal(a: Expr, b: Expr | float) -> bool:
    """Relay's ``IsEqualScalar``: both constants holding one and the same value."""
    if not isinstance(a, Constant):
        return False
    left = np.asarray(a.data.numpy())
    if isinstance(b, Constant):
        right = np.asarray(b.data.numpy())
    elif isinstance(b, Expr):
        return False
    else:
        right = np.asarray(b)
    if left.size != 1 or right.size != 1:
        return False
    return bool(left.reshape(()).astype("float64") == right.reshape(()).astype("float64"))


def qrange(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype (Relay's ``GetQmin``/``GetQmax``)."""
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def round_half_away(x: Expr, dtype: str) -> Expr:
    """TVM 0.19's ``round`` (LLVM's ``llvm.round``: halves away from zero) in plain ops.

    TVM 0.27's ``round`` rounds halves to even; ``trunc(x)`` plus ``sign(x)`` where the dropped
    fraction is at least one half is exact (the fraction ``x - trunc(x)`` is representable).
    """
    whole = call("trunc", x)
    frac = call("abs", call("subtract", x, whole))
    half = const(np.array(0.5, dtype), dtype)
    zero = const(np.array(0.0, dtype), dtype)
    return call(
        "add", whole, call("where", call("greater_equal", frac, half), call("sign", x), zero)
    )


def clip_cast(value: Expr, dtype: str) -> Expr:
    """Clip to ``dtype``'s range, then cast (Relay's ``ConvertDtype``)."""
    low, high = qrange(dtype)
    return call("cast", call("clip", value, low, high), dtype)


def normalized_axis(axis: int, rank: int) -> int:
    """A negative axis counted from the end (a scalar input's axis is 0)."""
    if axis < 0:
        return rank + axis if rank > 0 else 0
    return axis


def expand_to_axis(value: Expr, rank: int, axis: int) -> Expr:
    """A 1-D tensor shaped to broadcast along ``axis`` of a ``rank``-D tensor
    (Relay's ``ExpandBiasToMatchAxis``)."""
    trailing = rank - 1 - axis
    if trailing > 0:
        return call("expand_dims", value, 1, trailing)
    return value


def per_axis(value: Expr, vtype: ArgType, rank: int, axis: int) -> Expr:
    """A scale or zero point broadcast along ``axis``: as is when it is a scalar (0-d), else
    reshaped to 1-D and expanded to match ``axis`` of a ``rank``-D tensor."""
    if not vtype.shape:
        return value
    if rank == 0:
        return call("reshape", value, [])
    return expand_to_axis(call("reshape", value, [-1]), rank, normalized_axis(axis, rank))


def round_half_away_scalar(x: float) -> float:
    """C's ``std::round``: halves away from zero."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def fixed_point_multiplier_shift(multiplier: float) -> tuple[int, int]:
    """Relay's ``GetFixedPointMultiplierShift``: ``multiplier = m * 2**(shift - 31)`` with
    ``m`` an int32 whose point sits between bits 31 and 30."""
    if multiplier == 0.0:
        return 0, 0
    significand, exponent = math.frexp(multiplier)
    fixed = int(round_half_away_scalar(significand * (1 << 31)))
    if fixed == 1 << 31:
        fixed //= 2
        exponent += 1
    return fixed, exponent


def float_scalars(values: Any) -> list[float]:
    """Scale values as C++ read them (``float``), widened to double."""
    return [float(np.float32(v)) for v in values]
