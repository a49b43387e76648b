"""``vision.multibox_transform_loc`` (TVM 0.19's loop as a TE extern kernel) against a NumPy
transcription of TVM 0.19's semantics, and the kernel's place in task extraction."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.ty import RelayTypeError
from compile_engine_compat.tvm_legacy import auto_scheduler


def _reference(cls_prob, loc_pred, anchor, clip, threshold, variances, keep_background):
    batch, _, anchors = cls_prob.shape
    out = np.full((batch, anchors, 6), -1.0, "float32")
    count = np.zeros(batch, "int32")
    for i in range(batch):
        for j in range(anchors):
            scores = cls_prob[i, (0 if keep_background else 1) :, j]
            cls = int(np.argmax(scores)) + (0 if keep_background else 1)
            score = float(scores.max())
            if cls > 0 and score < threshold:
                cls = 0
            if not keep_background and cls == 0:
                continue
            left, top, right, bottom = anchor[0, j]
            px, py, pw, ph = loc_pred[i, 4 * j : 4 * j + 4]
            w, h = right - left, bottom - top
            cx, cy = (
                px * variances[0] * w + (left + right) / 2,
                py * variances[1] * h + (top + bottom) / 2,
            )
            hw, hh = np.exp(pw * variances[2]) * w / 2, np.exp(ph * variances[3]) * h / 2
            box = np.array([cx - hw, cy - hh, cx + hw, cy + hh])
            if clip:
                box = np.clip(box, 0.0, 1.0)
            out[i, count[i]] = [cls - (0 if keep_background else 1), score, *box]
            count[i] += 1
    return out, count


def _call(shapes, **attrs):
    cls_prob = relay.var("cls_prob", shape=shapes[0])
    loc_pred = relay.var("loc_pred", shape=shapes[1])
    anchor = relay.var("anchor", shape=shapes[2])
    mtl = relay.vision.multibox_transform_loc(cls_prob, loc_pred, anchor, **attrs)
    return relay.Function([cls_prob, loc_pred, anchor], mtl.astuple())


@pytest.mark.parametrize(
    "attrs",
    [
        {},
        {
            "keep_background": True,
            "clip": False,
            "threshold": 0.3,
            "variances": (0.2, 0.2, 0.3, 0.3),
        },
    ],
)
def test_multibox_transform_loc_runs_as_tvm019_computed_it(attrs):
    rng = np.random.default_rng(0)
    shapes = [(2, 3, 5), (2, 20), (1, 5, 4)]
    cls_prob = rng.uniform(size=shapes[0]).astype("float32")
    cls_prob[0, :, 1] = [0.9, 0.05, 0.05]  # the background wins: no detection unless kept
    loc_pred = rng.uniform(-0.5, 0.5, size=shapes[1]).astype("float32")
    anchor = np.sort(rng.uniform(-0.2, 1.2, size=shapes[2]), axis=-1).astype("float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = tvm.IRModule.from_expr(_call(shapes, **attrs))
        out, count = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(
            cls_prob, loc_pred, anchor
        )
    full = {"clip": True, "threshold": 0.01, "variances": (0.1, 0.1, 0.2, 0.2),
            "keep_background": False, **attrs}  # fmt: skip
    want_out, want_count = _reference(cls_prob, loc_pred, anchor, **full)
    np.testing.assert_array_equal(count.numpy(), want_count)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)


def test_multibox_transform_loc_is_no_auto_scheduler_task():
    # TVM 0.19's was hybrid script, which Ansor's ComputeDAG refused: no task, even simple.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = tvm.IRModule.from_expr(_call([(1, 3, 3), (1, 12), (1, 3, 4)]))
        tasks, _ = auto_scheduler.extract_tasks(
            mod["main"], None, "llvm", include_simple_tasks=True
        )
    assert tasks == []


def test_multibox_transform_loc_names_bad_variances():
    with pytest.raises(RelayTypeError, match=r"multibox_transform_loc.*variances has 4 values"):
        _call([(1, 3, 3), (1, 12), (1, 3, 4)], variances=(0.1, 0.1)).__relax_function__()
