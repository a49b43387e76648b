"""``relay.vision``: the detection ops, against ``tvm.topi.testing``; the ones TVM lacks refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
import tvm.topi.testing as ref

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.op import vision

from .cases import X4, Case, check_op

#: Two regions of interest: (batch index, x1, y1, x2, y2) in pixels of the 6x6 image.
ROIS = np.array([[0, 0.5, 0.5, 4.0, 5.0], [0, 1.0, 0.0, 5.0, 3.0]], "float32")
#: Five boxes of one image: (class id, score, x1, y1, x2, y2).
BOXES = np.array(
    [
        [
            [0, 0.9, 0.1, 0.1, 0.5, 0.5],
            [1, 0.2, 0.2, 0.2, 0.6, 0.6],
            [0, 0.7, 0.12, 0.1, 0.5, 0.52],
            [1, 0.05, 0.5, 0.5, 0.9, 0.9],
            [0, 0.6, 0.6, 0.6, 0.8, 0.8],
        ]
    ],
    "float32",
)

CASES: dict[str, Case] = {
    "vision.roi_align": Case(
        [X4, ROIS],
        {"pooled_size": (2, 2), "spatial_scale": 1.0, "sample_ratio": 2},
        lambda x, r: ref.roi_align_nchw_python(x, r, (2, 2), 1.0, 2),
        rtol=1e-4,
    ),
    "vision.roi_pool": Case(
        [X4, ROIS],
        {"pooled_size": (2, 2), "spatial_scale": 1.0},
        lambda x, r: ref.roi_pool_nchw_python(x, r, 2, 1.0),
    ),
    "vision.get_valid_counts": Case(
        [BOXES],
        {"score_threshold": 0.1},
        lambda b: list(ref.get_valid_counts_python(b, 0.1, 0, 1)),
    ),
    # Two images: the gather must stay inside each one.
    "vision.yolo_reorg": Case(
        [np.arange(2 * 8 * 4 * 6, dtype="float32").reshape(2, 8, 4, 6)],
        {"stride": 2},
        lambda x: ref.reorg_python(x, 2),
    ),
}


def test_yolo_reorg_type_on_symbolic_shapes_is_relays():
    n, c, h, w = (tvm.te.var(v) for v in "nchw")
    x = relay.var("x", relay.TensorType((n, c, h, w), "float32"))
    typed = relay.testing.run_infer_type(relay.vision.yolo_reorg(x, stride=2))
    assert typed.checked_type == relay.TensorType((n, c * 4, h // 2, w // 2), "float32")


@pytest.mark.parametrize("name", sorted(CASES))
def test_vision_op_matches_topi_reference(engine: Any, name: str) -> None:
    check_op(engine, name, CASES[name])


def test_non_max_suppression_keeps_the_best_box_of_each_overlap() -> None:
    data = relay.var("data", shape=BOXES.shape)
    counts = relay.vision.get_valid_counts(data, score_threshold=0.1)
    out = relay.vision.non_max_suppression(
        counts[1], counts[0], counts[2], iou_threshold=0.5, return_indices=False
    )
    func = relay.Function([data], out)
    result = relay.create_executor("graph", mod=None, target="llvm").evaluate(func)(BOXES).numpy()
    kept = result[0][result[0][:, 0] >= 0]
    # Box 2 overlaps box 0 (same class, lower score): suppressed; box 3 is under the threshold.
    np.testing.assert_allclose(kept[:, 1], [0.9, 0.6, 0.2])


def test_all_class_nms_returns_the_selected_rows_and_their_count() -> None:
    boxes = relay.var("boxes", shape=(1, 3, 4))
    scores = relay.var("scores", shape=(1, 1, 3))
    out = relay.vision.all_class_non_max_suppression(boxes, scores, 2, 0.5, 0.1)
    func = relay.Function([boxes, scores], out.astuple())
    box_data = np.array([[[0, 0, 1, 1], [0, 0, 1, 0.95], [2, 2, 3, 3]]], "float32")
    score_data = np.array([[[0.9, 0.8, 0.3]]], "float32")
    indices, count = (
        r.numpy()
        for r in relay.create_executor("graph", target="llvm").evaluate(func)(box_data, score_data)
    )
    # Box 1 overlaps box 0 (IoU 0.95): suppressed; at most 2 per class.
    assert int(count[0]) == 2
    np.testing.assert_array_equal(indices[: int(count[0])], [[0, 0, 0], [0, 0, 2]])


@pytest.mark.parametrize("name", sorted(vision.REFUSED))
def test_ops_without_a_tvm_compute_are_refused_naming_them(name: str) -> None:
    with pytest.raises(UnsupportedRelayError, match=name.replace(".", r"\.")):
        getattr(relay.vision, name.split(".")[1])(relay.var("x", shape=(1, 3, 4, 4)))


def test_every_row_is_tested() -> None:
    tested = set(CASES) | {"vision.non_max_suppression", "vision.all_class_non_max_suppression"}
    tested.add("vision.multibox_transform_loc")  # tests/relay/_impl/test_multibox.py
    assert {row.name for row in vision.ROWS} == tested
