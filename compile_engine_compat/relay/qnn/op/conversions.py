"""``qnn.quantize``, ``qnn.dequantize``, ``qnn.requantize`` and the simulated pair, as rows of
the op table (TVM 0.19's signatures and attributes), each lowered by
:mod:`..lowering.requantize`."""

from __future__ import annotations

from compile_engine_compat.relay._impl import normalize
from compile_engine_compat.relay._impl.registry import OpRow
from compile_engine_compat.relay.qnn.lowering import requantize as lowering
from compile_engine_compat.relay.qnn.lowering.emit import lowered_emit

__all__ = ["ROWS"]

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
            "rounding": str,
            "compute_dtype": str,
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
