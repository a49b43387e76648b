"""``relay.op.algorithm``: sort, argsort and topk, against NumPy."""

from __future__ import annotations

import numpy as np

from compile_engine_compat.relay.op import algorithm

from .cases import Case, data, family_tests

CASES: dict[str, Case] = {
    "sort": Case([data((2, 5))], {}, lambda x: np.sort(x, -1)),
    "argsort": Case(
        [data((2, 5))], {"is_ascend": False}, lambda x: np.argsort(-x, -1).astype("int32")
    ),
    "topk": Case(
        [data((2, 5))],
        {"k": 2},
        lambda x: [-np.sort(-x, -1)[:, :2], np.argsort(-x, -1)[:, :2].astype("int32")],
    ),
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(algorithm, CASES)
