"""Relay ops whose result shape depends on the input values, computed on the host.

Relay typed such an op's results with ``Any`` dimensions and computed them at run time. Relax
has no op for them and a ``call_tir`` needs its output shapes before the call, so each is a
packed function of this module, registered with TVM on the first builder call (never at
import) and emitted as ``relax.call_pure_packed``: the Relax VM calls it with the input
tensors and it returns new tensors of whatever length the values give. It runs on the CPU, in
NumPy; a model that uses it is not exportable as a self-contained library (the function lives
in this process), as a Relay model using a Python-registered op was not.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.relay.expr import Attrs

__all__ = ["SPARSE_FILL_EMPTY_ROWS", "sparse_fill_empty_rows"]

#: The global name of ``sparse_fill_empty_rows``'s packed function.
SPARSE_FILL_EMPTY_ROWS = "compile_engine_compat.sparse_fill_empty_rows"


def _fill_empty_rows(indices: Any, values: Any, dense_shape: Any, default: Any) -> list[Any]:
    """Relay's ``sparse_fill_empty_rows`` on host tensors (indices sorted by row, as Relay's)."""
    idx = indices.numpy()
    val = values.numpy()
    rows_total = int(dense_shape.numpy().reshape(-1)[0])
    fill_value = default.numpy().reshape(-1)
    if idx.ndim != 2 or val.ndim != 1 or len(idx) != len(val) or fill_value.size < 1:
        raise ValueError(
            "sparse_fill_empty_rows needs indices of shape (N, ndim), values of shape (N,) "
            f"and a default value; got {idx.shape}, {val.shape} and {fill_value.shape}"
        )
    rows = idx[:, 0].astype(np.int64)
    if len(rows) and (rows.min() < 0 or rows.max() >= rows_total):
        raise ValueError(f"sparse_fill_empty_rows: a row index is outside [0, {rows_total})")
    empty = np.ones(rows_total, dtype=bool)
    empty[rows] = False
    filled = np.nonzero(empty)[0]
    new_rows = np.zeros((len(filled), idx.shape[1]), dtype=idx.dtype)
    new_rows[:, 0] = filled
    order = np.argsort(np.concatenate([rows, filled]), kind="stable")
    out_idx = np.concatenate([idx, new_rows])[order]
    out_val = np.concatenate([val, np.full(len(filled), fill_value[0], dtype=val.dtype)])[order]
    return [tvm.runtime.tensor(a) for a in (out_idx, out_val, empty)]


@functools.cache
def _registered(name: str) -> str:
    """Register the packed function ``name`` once, on first use; return its name."""
    functions = {SPARSE_FILL_EMPTY_ROWS: _fill_empty_rows}
    tvm.register_global_func(name, functions[name], override=True)
    return name


def sparse_fill_empty_rows(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``sparse_fill_empty_rows``: (new indices, new values, empty-row indicator), each of a
    length the values decide, as Relay's ``Any``-shaped results."""
    indices, values, dense_shape, default = args
    for name, arg in zip(("sparse_indices", "sparse_values", "dense_shape"), args):
        if not isinstance(arg.ty, relax.TensorType):
            raise TypeError(f"relay.sparse_fill_empty_rows: {name} must be a tensor")
    del dense_shape, default  # passed through to the packed function
    result = relax.TupleType(
        [
            relax.TensorType(ndim=2, dtype=indices.ty.dtype),
            relax.TensorType(ndim=1, dtype=values.ty.dtype),
            relax.TensorType(ndim=1, dtype="bool"),
        ]
    )
    return relax.call_pure_packed(_registered(SPARSE_FILL_EMPTY_ROWS), *args, ty_args=result)
