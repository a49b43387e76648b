"""The ops computed on the host by a packed function (``sparse_fill_empty_rows``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay


def _args() -> list[Any]:
    return [
        relay.var("i", shape=(3, 2), dtype="int64"),
        relay.var("v", shape=(3,), dtype="float32"),
        relay.var("s", shape=(2,), dtype="int64"),
        relay.var("d", shape=(1,), dtype="float32"),
    ]


@pytest.fixture(scope="module")
def fill() -> Callable[..., list[np.ndarray]]:
    """One build of ``sparse_fill_empty_rows`` on the VM, shared by the tests."""
    args = _args()
    mod = tvm.IRModule.from_expr(relay.Function(args, relay.sparse_fill_empty_rows(*args)))
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()

    def call(indices: list[list[int]], rows: int, default: float) -> list[np.ndarray]:
        values = np.array([1.0, 2.0, 3.0], "float32")
        shape = np.array([rows, 3], "int64")
        out = run(np.array(indices, "int64"), values, shape, np.array([default], "float32"))
        return [r.numpy() for r in out]

    return call


def test_sparse_fill_empty_rows_fills_each_empty_row_in_order(fill):
    new_indices, new_values, empty = fill([[0, 1], [0, 2], [3, 0]], rows=5, default=7)
    np.testing.assert_array_equal(new_indices, [[0, 1], [0, 2], [1, 0], [2, 0], [3, 0], [4, 0]])
    np.testing.assert_array_equal(new_values, [1, 2, 7, 7, 3, 7])
    np.testing.assert_array_equal(empty, [False, True, True, False, True])


def test_sparse_fill_empty_rows_refuses_a_row_outside_the_dense_shape(fill):
    with pytest.raises(Exception, match="outside"):
        fill([[0, 0], [1, 0], [6, 0]], rows=2, default=0)


def test_sparse_fill_empty_rows_types_its_results_as_relay_did():
    out = relay.testing.run_infer_type(relay.sparse_fill_empty_rows(*_args()))
    assert isinstance(out, relay.Tuple)
    types: list[Any] = [f.checked_type for f in out.fields]
    assert [str(t.dtype) for t in types] == [
        "int64",
        "float32",
        "bool",
    ]
