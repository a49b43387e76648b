"""``relay.op.reduce``: every reduction, against NumPy."""

from __future__ import annotations

import numpy as np

from compile_engine_compat.relay.op import reduce

from .cases import Case, data, family_tests

CASES: dict[str, Case] = {
    "sum": Case(
        [data((2, 3, 4))], {"axis": 1, "keepdims": True}, lambda x: x.sum(1, keepdims=True)
    ),
    "mean": Case([data((2, 3, 4))], {"axis": [0, 2]}, lambda x: x.mean((0, 2))),
    "max": Case([data((2, 3, 4))], {"axis": 1, "exclude": True}, lambda x: x.max((0, 2))),
    "min": Case([data((2, 3, 4))], {}, lambda x: x.min()),
    "prod": Case([data((2, 3))], {"axis": -1}, lambda x: x.prod(-1)),
    "variance": Case([data((2, 3))], {"axis": 1}, lambda x: x.var(1)),
    "std": Case([data((2, 3))], {"axis": 0, "keepdims": True}, lambda x: x.std(0, keepdims=True)),
    "argmax": Case([data((2, 5))], {"axis": 1}, lambda x: x.argmax(1).astype("int32")),
    "argmin": Case([data((2, 5))], {"axis": [0]}, lambda x: x.argmin(0).astype("int32")),
    **{
        name: Case([data((2, 3), "bool")], {"axis": 1}, lambda x, f=fn: f(x, 1))
        for name, fn in (("all", np.all), ("any", np.any))
    },
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(reduce, CASES)
