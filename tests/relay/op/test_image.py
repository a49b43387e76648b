"""``relay.op.image``: the image ops, against the hand-written Relax op."""

from __future__ import annotations

from tvm import relax

from compile_engine_compat.relay.op import image

from .cases import X4, Case, family_tests

R = relax.op


CASES: dict[str, Case] = {
    "image.resize2d": Case(
        [X4],
        {"size": (9, 9)},
        relax_ref=lambda x: R.image.resize2d(x, (9, 9), rounding_method="round", cubic_alpha=-0.5),
        rtol=1e-4,
    ),
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(image, CASES)
