"""``relay.vision`` (also ``relay.op.vision``): Relay's detection ops, as rows of the op table.

Served by Relax's ``relax.op.vision`` ops (TOPI's computes, as Relay's were). ``multibox_prior``
and ``proposal`` have no compute in TVM 0.27: they are refused at the call.
``multibox_transform_loc`` (Relax's returns TFLite's boxes and scores, not Relay's detections)
is TVM 0.19's loop over the anchors, a TE extern kernel
(:mod:`compile_engine_compat.relay._impl.multibox`).
``all_class_non_max_suppression`` (ONNX format) returns only the selected rows of the indices,
where Relay padded them to ``batch * classes * boxes`` rows: the first ``num_total_detection``
rows, the ones Relay's callers read, are the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from compile_engine_compat.relay._impl import convert, convert_te, multibox, normalize
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op

from .. import expr  # noqa: F401 (re-exported, as TVM 0.19's relay.op.vision did)

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "vision.get_valid_counts",
        ("data",),
        (("score_threshold", REQUIRED), ("id_index", 0), ("score_index", 1)),
        "relax.vision.get_valid_counts",
        convert.direct(
            "relax.vision.get_valid_counts",
            score_threshold=lambda a, _: float(a.score_threshold),
            id_index="id_index",
            score_index="score_index",
        ),
        "relay.attrs.GetValidCountsAttrs",
        normalize={"score_threshold": normalize.scalar_value},
        outputs=lambda a: 3,
    ),
    OpRow(
        "vision.multibox_transform_loc",
        ("cls_prob", "loc_pred", "anchor"),
        (
            ("clip", True),
            ("threshold", 0.01),
            ("variances", (0.1, 0.1, 0.2, 0.2)),
            ("keep_background", False),
        ),
        "(a TE extern: TVM 0.19's loop over the anchors)",
        multibox.multibox_transform_loc,
        "relay.attrs.MultiBoxTransformLocAttrs",
        normalize={"threshold": normalize.scalar_value},
        outputs=lambda a: 2,
    ),
    OpRow(
        "vision.non_max_suppression",
        ("data", "valid_count", "indices"),
        (
            ("max_output_size", -1),
            ("iou_threshold", 0.5),
            ("force_suppress", False),
            ("top_k", -1),
            ("coord_start", 2),
            ("score_index", 1),
            ("id_index", 0),
            ("return_indices", True),
            ("invalid_to_bottom", False),
        ),
        "relax.vision.non_max_suppression",
        convert_te.non_max_suppression,
        "relay.attrs.NonMaximumSuppressionAttrs",
        normalize={
            "max_output_size": normalize.scalar_value,
            "iou_threshold": normalize.scalar_value,
        },
        outputs=lambda a: 2 if a.return_indices else 0,
    ),
    OpRow(
        "vision.all_class_non_max_suppression",
        ("boxes", "scores"),
        (
            ("max_output_boxes_per_class", -1),
            ("iou_threshold", -1.0),
            ("score_threshold", -1.0),
            ("output_format", "onnx"),
        ),
        "relax.vision.all_class_non_max_suppression",
        convert.direct(
            "relax.vision.all_class_non_max_suppression",
            max_output_boxes_per_class=lambda a, _: convert_te.relax_scalar(
                a.max_output_boxes_per_class, "int64"
            ),
            iou_threshold=lambda a, _: convert_te.relax_scalar(a.iou_threshold, "float32"),
            score_threshold=lambda a, _: convert_te.relax_scalar(a.score_threshold, "float32"),
            output_format="output_format",
        ),
        "relay.attrs.AllClassNonMaximumSuppressionAttrs",
        normalize={
            "max_output_boxes_per_class": normalize.scalar_value,
            "iou_threshold": normalize.scalar_value,
            "score_threshold": normalize.scalar_value,
        },
        outputs=lambda a: 2 if a.output_format == "onnx" else 3,
    ),
    OpRow(
        "vision.roi_align",
        ("data", "rois"),
        (
            ("pooled_size", REQUIRED),
            ("spatial_scale", REQUIRED),
            ("sample_ratio", -1),
            ("layout", "NCHW"),
            ("mode", "avg"),
        ),
        "relax.vision.roi_align",
        convert.direct(
            "relax.vision.roi_align",
            pooled_size="pooled_size",
            spatial_scale=lambda a, _: float(a.spatial_scale),
            sample_ratio="sample_ratio",
            layout="layout",
            mode="mode",
        ),
        "relay.attrs.ROIAlignAttrs",
        normalize={"pooled_size": normalize.ntuple(2)},
    ),
    OpRow(
        "vision.roi_pool",
        ("data", "rois"),
        (("pooled_size", REQUIRED), ("spatial_scale", REQUIRED), ("layout", "NCHW")),
        "relax.vision.roi_pool",
        convert.direct(
            "relax.vision.roi_pool",
            pooled_size="pooled_size",
            spatial_scale=lambda a, _: float(a.spatial_scale),
            layout="layout",
        ),
        "relay.attrs.ROIPoolAttrs",
        normalize={"pooled_size": normalize.ntuple(2)},
    ),
    OpRow(
        "vision.yolo_reorg",
        ("data",),
        (("stride", REQUIRED),),
        "(a TE gather: darknet's reorg)",
        convert_te.yolo_reorg,
        "relay.attrs.YoloReorgAttrs",
    ),
)

_NO_TOPI = "TVM 0.27 has no TOPI or Relax compute for it: write it with relax.op or te and call_te"

#: Relay's vision ops with no compute in TVM 0.27.
REFUSED: dict[str, str] = {
    "vision.multibox_prior": _NO_TOPI,
    "vision.proposal": _NO_TOPI,
}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted([*BUILDERS, "expr"])

if TYPE_CHECKING:

    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("vision", __name__)
