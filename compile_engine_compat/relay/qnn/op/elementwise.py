"""The unary QNN ops, ``qnn.leaky_relu``, ``qnn.softmax`` and ``qnn.avg_pool2d`` as rows of the
op table (TVM 0.19's signatures), lowered by :mod:`..lowering.unary`."""

from __future__ import annotations

from compile_engine_compat.relay._impl import normalize
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow
from compile_engine_compat.relay.qnn.lowering import unary as lowering
from compile_engine_compat.relay.qnn.lowering.emit import lowered_emit
from compile_engine_compat.relay.qnn.op.conversions import LOWERED

__all__ = ["ROWS"]

_UNARY_INPUTS = ("x", "scale", "zero_point", "output_scale", "output_zero_point")

ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(f"qnn.{name}", _UNARY_INPUTS, (), LOWERED, lowered_emit(lowering.lower_unary(name)))
        for name in lowering.UNARY_FUNCTIONS
    ),
    OpRow(
        "qnn.leaky_relu",
        ("x", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
        (("alpha", REQUIRED),),
        LOWERED,
        lowered_emit(lowering.lower_leaky_relu),
        "relay.attrs.LeakyReluAttrs",
        normalize={"alpha": float},
        order=(
            "x",
            "alpha",
            "input_scale",
            "input_zero_point",
            "output_scale",
            "output_zero_point",
        ),
    ),
    OpRow(
        "qnn.softmax",
        _UNARY_INPUTS,
        (("axis", -1),),
        LOWERED,
        lowered_emit(lowering.lower_softmax),
        "relay.attrs.SoftmaxAttrs",
        normalize={"axis": int},
    ),
    OpRow(
        "qnn.avg_pool2d",
        ("data", "input_scale", "input_zero_point", "output_scale", "output_zero_point"),
        (
            ("pool_size", REQUIRED),
            ("strides", REQUIRED),
            ("padding", REQUIRED),
            ("dilation", REQUIRED),
            ("ceil_mode", False),
            ("count_include_pad", True),
            ("layout", "NHWC"),
            ("out_layout", ""),
        ),
        LOWERED,
        lowered_emit(lowering.lower_avg_pool2d),
        "relay.attrs.AvgPool2DAttrs",
        normalize={
            "pool_size": normalize.ntuple(2),
            "strides": normalize.ntuple(2),
            "dilation": normalize.ntuple(2),
            "padding": normalize.padding(2),
        },
    ),
)
