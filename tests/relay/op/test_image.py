"""``relay.op.image``: the image ops, against the hand-written Relax op."""

from __future__ import annotations

import numpy as np
import pytest
import tvm.topi.testing as ref
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.op import image

from .cases import X4, Case, data, family_tests

R = relax.op


#: Boxes and their images for crop_and_resize (y1, x1, y2, x2 in [0, 1]).
BOXES = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0]], "float32")
BOX_INDICES = np.array([0, 0], "int32")
#: Two 2x3 affine matrices (a rotation-like and a scaling one).
THETA = np.array(
    [[[0.9, -0.1, 0.1], [0.2, 0.8, -0.2]], [[1.0, 0.0, 0.0], [0.0, 0.5, 0.0]]], "float32"
)

CASES: dict[str, Case] = {
    "image.resize1d": Case(
        [data((1, 3, 5))],
        {"size": (9,), "method": "linear", "coordinate_transformation_mode": "half_pixel"},
        ref=lambda x: ref.resize1d_python(x, (9 / 5,), "NCW", "linear", "half_pixel"),
        rtol=1e-4,
    ),
    "image.resize3d": Case(
        [data((1, 2, 3, 4, 4))],
        {
            "size": (6, 8, 8),
            "method": "nearest_neighbor",
            "coordinate_transformation_mode": "asymmetric",
        },
        ref=lambda x: ref.resize3d_python(x, (2, 2, 2), "NCDHW", "nearest_neighbor", "asymmetric"),
    ),
    "image.crop_and_resize": Case(
        [X4, BOXES, BOX_INDICES],
        {"crop_size": (3, 4), "layout": "NCHW"},
        ref=lambda x, b, i: ref.crop_and_resize_python(x, b, i, (3, 4), "NCHW"),
        rtol=1e-4,
    ),
    "image.dilation2d": Case(
        [X4, data((4, 3, 3))],
        {"padding": (1, 1)},
        # Morphological dilation: the max over the window of data + weight, per channel.
        ref=lambda x, w: _dilation2d_ref(x, w),
    ),
    "image.grid_sample": Case(
        [X4, data((1, 2, 5, 5), kind="unit")],
        {},
        ref=lambda x, g: ref.grid_sample_python(x, g, "bilinear", "NCHW", "zeros", True),
        rtol=1e-4,
    ),
    "image.affine_grid": Case(
        [THETA],
        {"target_shape": (4, 5)},
        ref=lambda t: ref.affine_grid_python(t, (4, 5)),
        rtol=1e-4,
    ),
    "image.resize2d": Case(
        [X4],
        {"size": (9, 9)},
        relax_ref=lambda x: R.image.resize2d(x, (9, 9), rounding_method="floor", cubic_alpha=-0.5),
        rtol=1e-4,
    ),
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(image, CASES)


@pytest.mark.parametrize("mode", ["asymmetric", "align_corners", "half_pixel"])
def test_nearest_resize_rounds_as_relay_did(mode):
    # Relay left rounding_method unset (""): TOPI floors, or rounds with align_corners.
    x = data((1, 2, 4, 4))
    xv = relay.var("x", shape=x.shape)
    body = relay.image.resize2d(
        xv, (8, 7), None, "NCHW", "nearest_neighbor", coordinate_transformation_mode=mode
    )
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([xv], body))(x)
    want = ref.resize2d_python(x, (2.0, 1.75), "NCHW", "nearest_neighbor", mode)
    np.testing.assert_array_equal(got.numpy(), want)


def _dilation2d_ref(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    # TOPI (and so Relay) pads with zeros, not -inf.
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, c, h, wd = x.shape
    out = np.full((n, c, h, wd), -np.inf, "float32")
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy : dy + h, dx : dx + wd] + w[None, :, dy, dx, None, None]
            out = np.maximum(out, window)
    return out
