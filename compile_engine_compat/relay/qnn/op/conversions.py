"""``qnn.quantize``, ``qnn.dequantize``, ``qnn.requantize`` and the simulated pair, as rows of
the op table (TVM 0.19's signatures and attributes), each lowered by
:mod:`..lowering.requantize`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.relay._impl import normalize
from compile_engine_compat.relay._impl.registry import OpRow
from compile_engine_compat.relay.qnn.lowering import requantize as lowering
from compile_engine_compat.relay.qnn.lowering.emit import lowered_emit

__all__ = ["ROWS"]


def _one_of(name: str, allowed: tuple[str, ...]) -> Callable[[Any], str]:
    """An attribute check: a bad value is refused at the builder call, naming the choices."""

    def check(value: Any) -> str:
        if str(value) not in allowed:
            raise ValueError(f"qnn.requantize {name} must be one of {allowed}, got {value!r}")
        return str(value)

    return check


#: What every QNN row says it becomes (no single Relax op: plain ops, as CanonicalizeOps made).
LOWERED = "plain Relay ops (qnn.transform.CanonicalizeOps), then Relax"

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "qnn.requantize",
        ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
        (("axis", -1), ("rounding", "None"), ("compute_dtype", "None"), ("out_dtype", "int8")),
        LOWERED,
        lowered_emit(lowering.lower_requantize),
        "relay.attrs.RequantizeAttrs",
        normalize={
            "axis": int,
            "rounding": _one_of("rounding", ("None", "UPWARD", "TONEAREST")),
            "compute_dtype": _one_of("compute_dtype", ("None", "int64", "float32", "float64")),
            "out_dtype": normalize.dtype,
        },
    ),
    OpRow(
        "qnn.quantize",
        ("data", "output_scale", "output_zero_point"),
        (("axis", -1), ("out_dtype", "int8")),
        LOWERED,
        lowered_emit(lowering.lower_quantize),
        "relay.attrs.QuantizeAttrs",
        normalize={"axis": int, "out_dtype": normalize.dtype},
    ),
    OpRow(
        "qnn.dequantize",
        ("data", "input_scale", "input_zero_point"),
        (("axis", -1), ("out_dtype", "float32")),
        LOWERED,
        lowered_emit(lowering.lower_dequantize),
        "relay.attrs.DequantizeAttrs",
        normalize={"axis": int, "out_dtype": normalize.dtype},
    ),
    OpRow(
        "qnn.simulated_quantize",
        ("data", "out_dtype", "output_scale", "output_zero_point"),
        (("axis", -1),),
        LOWERED,
        lowered_emit(lowering.lower_simulated_quantize),
        "relay.attrs.SimulatedQuantizeAttrs",
        normalize={"axis": int},
    ),
    OpRow(
        "qnn.simulated_dequantize",
        ("data", "in_dtype", "input_scale", "input_zero_point"),
        (("axis", -1),),
        LOWERED,
        lowered_emit(lowering.lower_simulated_dequantize),
        "relay.attrs.SimulatedDequantizeAttrs",
        normalize={"axis": int},
    ),
)
