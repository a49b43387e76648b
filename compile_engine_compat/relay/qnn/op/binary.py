"""``qnn.add``, ``qnn.subtract``, ``qnn.mul`` and ``qnn.concatenate`` as rows of the op table,
lowered by :mod:`..lowering.binary`."""

from __future__ import annotations

from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow
from compile_engine_compat.relay.qnn.lowering import binary as lowering
from compile_engine_compat.relay.qnn.lowering.emit import lowered_emit
from compile_engine_compat.relay.qnn.op.conversions import LOWERED

__all__ = ["ROWS"]

_BINARY_INPUTS = (
    "lhs",
    "rhs",
    "lhs_scale",
    "lhs_zero_point",
    "rhs_scale",
    "rhs_zero_point",
    "output_scale",
    "output_zero_point",
)

ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(
            f"qnn.{name}",
            _BINARY_INPUTS,
            (("lhs_axis", -1), ("rhs_axis", -1)),
            LOWERED,
            lowered_emit(lower),
            "relay.attrs.BroadcastAttrs",
            normalize={"lhs_axis": int, "rhs_axis": int},
        )
        for name, lower in (
            ("add", lowering.lower_add),
            ("subtract", lowering.lower_subtract),
            ("mul", lowering.lower_mul),
        )
    ),
    OpRow(
        "qnn.concatenate",
        ("data", "input_scales", "input_zero_points", "output_scale", "output_zero_point"),
        (("axis", REQUIRED),),
        LOWERED,
        lowered_emit(lowering.lower_concatenate),
        "relay.attrs.ConcatenateAttrs",
        normalize={"axis": int},
        tuple_input=True,
    ),
)
