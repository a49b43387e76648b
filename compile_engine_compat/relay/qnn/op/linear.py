"""``qnn.conv2d``, ``qnn.conv2d_transpose``, ``qnn.dense`` and ``qnn.batch_matmul`` as rows of
the op table (TVM 0.19's signatures), lowered by :mod:`..lowering.linear`."""

from __future__ import annotations

from compile_engine_compat.relay._impl import normalize
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow
from compile_engine_compat.relay.qnn.lowering import linear as lowering
from compile_engine_compat.relay.qnn.lowering.emit import lowered_emit
from compile_engine_compat.relay.qnn.op.conversions import LOWERED

__all__ = ["ROWS"]

_QUANTIZED = ("input_zero_point", "kernel_zero_point", "input_scale", "kernel_scale")

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "qnn.conv2d",
        ("data", "kernel", *_QUANTIZED),
        (
            ("kernel_size", REQUIRED),
            ("channels", REQUIRED),
            ("strides", (1, 1)),
            ("padding", (0, 0)),
            ("dilation", (1, 1)),
            ("groups", 1),
            ("data_layout", "NCHW"),
            ("kernel_layout", "OIHW"),
            ("out_layout", ""),
            ("out_dtype", "int32"),
        ),
        LOWERED,
        lowered_emit(lowering.lower_conv2d),
        "relay.attrs.Conv2DAttrs",
        normalize=normalize.conv_normalize(2),
    ),
    OpRow(
        "qnn.conv2d_transpose",
        ("data", "weight", *_QUANTIZED),
        (
            ("strides", (1, 1)),
            ("padding", (0, 0)),
            ("dilation", (1, 1)),
            ("groups", 1),
            ("channels", None),
            ("kernel_size", None),
            ("data_layout", "NCHW"),
            ("kernel_layout", "IOHW"),
            ("out_layout", ""),
            ("output_padding", (0, 0)),
            ("out_dtype", "int32"),
        ),
        LOWERED,
        lowered_emit(lowering.lower_conv2d_transpose),
        "relay.attrs.Conv2DTransposeAttrs",
        normalize={**normalize.conv_normalize(2), "output_padding": normalize.ntuple(2)},
    ),
    OpRow(
        "qnn.dense",
        ("data", "weight", *_QUANTIZED),
        (("units", REQUIRED), ("out_dtype", "int32")),
        LOWERED,
        lowered_emit(lowering.lower_dense),
        "relay.attrs.DenseAttrs",
        normalize={"out_dtype": normalize.dtype},
    ),
    OpRow(
        "qnn.batch_matmul",
        ("x", "y", "x_zero_point", "y_zero_point", "x_scale", "y_scale"),
        (("out_dtype", "int32"), ("transpose_a", False), ("transpose_b", True)),
        LOWERED,
        lowered_emit(lowering.lower_batch_matmul),
        "relay.attrs.BatchMatmulAttrs",
        normalize={"out_dtype": normalize.dtype, "transpose_a": bool, "transpose_b": bool},
    ),
)
