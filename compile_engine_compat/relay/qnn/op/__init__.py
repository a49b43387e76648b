"""``relay.qnn.op`` (and ``relay.qnn``'s builders): TVM 0.19's QNN dialect.

Each builder makes a real call of a ``qnn.*`` op in the front end's Relay graph (it prints,
type-checks, and ``ExprMutator`` and the pattern language see it); the op's row lowers it, the
way ``qnn.transform.CanonicalizeOps`` did, to plain Relay ops (:mod:`..lowering`), which become
Relax, so the integer results are TVM 0.19's. The rows are kept by family:
:mod:`.conversions`, :mod:`.binary`, :mod:`.linear`, :mod:`.elementwise`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from compile_engine_compat.relay._impl.registry import OpRow, builders, register_dialect
from compile_engine_compat.relay.expr import Expr, const
from compile_engine_compat.relay.qnn.lowering.config import (
    RequantizeConfig,
    current_requantize_config,
    requantize_config,
)
from compile_engine_compat.relay.qnn.lowering.requantize import SQNN_DTYPE_TO_CODE

from . import binary, canonicalizations, conversions, elementwise, legalizations, linear

#: Every QNN op's row.
ROWS: tuple[OpRow, ...] = (*conversions.ROWS, *binary.ROWS, *linear.ROWS, *elementwise.ROWS)
register_dialect(ROWS)

_BUILDERS = builders(ROWS)


def _dtype_code(value: Any, what: str) -> Expr:
    """The simulated ops' dtype argument: a dtype name becomes its int32 code constant."""
    if isinstance(value, str):
        if value not in SQNN_DTYPE_TO_CODE:
            raise ValueError(f"{what} must be one of {sorted(SQNN_DTYPE_TO_CODE)}, got {value!r}")
        return const(SQNN_DTYPE_TO_CODE[value], "int32")
    return value


def simulated_quantize(
    data: Any, output_scale: Any, output_zero_point: Any, axis: int = -1, out_dtype: Any = "int8"
) -> Any:
    """``relay.qnn.op.simulated_quantize``: quantized values kept in float (``out_dtype`` a
    dtype name or an int32 code tensor)."""
    code = _dtype_code(out_dtype, "simulated_quantize out_dtype")
    return _BUILDERS["simulated_quantize"](data, code, output_scale, output_zero_point, axis)


def simulated_dequantize(
    data: Any, input_scale: Any, input_zero_point: Any, axis: int = -1, in_dtype: Any = "int8"
) -> Any:
    """``relay.qnn.op.simulated_dequantize``: ``(x - zero_point) * scale`` in float."""
    code = _dtype_code(in_dtype, "simulated_dequantize in_dtype")
    return _BUILDERS["simulated_dequantize"](data, code, input_scale, input_zero_point, axis)


def concatenate(
    data: Sequence[Any] | Any,
    input_scales: Sequence[Any] | Any,
    input_zero_points: Sequence[Any] | Any,
    output_scale: Any,
    output_zero_point: Any,
    axis: int,
) -> Any:
    """``relay.qnn.op.concatenate``: quantized tensors joined along ``axis``, each requantized
    to the output's scale and zero point."""
    if isinstance(data, list | tuple) and not data:
        raise ValueError("relay.qnn.op.concatenate requires data to be non-empty.")
    return _BUILDERS["concatenate"](
        list(data) if isinstance(data, list | tuple) else data,
        list(input_scales) if isinstance(input_scales, list | tuple) else input_scales,
        list(input_zero_points)
        if isinstance(input_zero_points, list | tuple)
        else input_zero_points,
        output_scale,
        output_zero_point,
        axis,
    )


_WRAPPED = {"simulated_quantize", "simulated_dequantize", "concatenate"}
globals().update({name: fn for name, fn in _BUILDERS.items() if name not in _WRAPPED})

__all__ = [
    "ROWS",
    "RequantizeConfig",
    "binary",
    "canonicalizations",
    "conversions",
    "current_requantize_config",
    "elementwise",
    "legalizations",
    "linear",
    "requantize_config",
    *sorted(_BUILDERS),
]


if TYPE_CHECKING:
    # The builders are made from the rows, so a type checker cannot see them: to it, every
    # other name here is a builder.
    def __getattr__(name: str) -> Callable[..., Any]: ...
