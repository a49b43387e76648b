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

__all__ = ["RESHAPE_SHAPE", "SPARSE_FILL_EMPTY_ROWS", "reshape_shape", "sparse_fill_empty_rows"]

#: The global name of ``sparse_fill_empty_rows``'s packed function.
SPARSE_FILL_EMPTY_ROWS = "compile_engine_compat.sparse_fill_empty_rows"
#: The global name of ``dyn.reshape``'s shape function.
RESHAPE_SHAPE = "compile_engine_compat.dyn_reshape_shape"


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


def _resolved_shape(shape: Any, newshape: Any, allowzero: int) -> Any:
    """``dyn.reshape``'s result shape: Relay's codes in ``newshape`` resolved against the data's
    ``shape`` when the function runs (one dimension per code, as Relay typed it)."""
    from compile_engine_compat.relay._impl.convert import reshape_shape as resolve

    in_shape = [int(d) for d in shape]
    codes = [int(c) for c in newshape.numpy().reshape(-1)]
    out = [int(d) for d in resolve(in_shape, codes, bool(allowzero))]
    if out.count(-1) > 1:
        raise ValueError(f"reshape: more than one -1 in the new shape {codes}")
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1]))
        out[out.index(-1)] = int(np.prod(in_shape)) // known if known else 0
    if len(out) != len(codes) or int(np.prod(out)) != int(np.prod(in_shape)):
        raise ValueError(f"reshape: cannot reshape data of shape {in_shape} to {codes} ({out})")
    return tvm.runtime.tensor(np.array(out, dtype="int64"))


@functools.cache
def _registered(name: str) -> str:
    """Register the packed function ``name`` once, on first use; return its name."""
    functions = {SPARSE_FILL_EMPTY_ROWS: _fill_empty_rows, RESHAPE_SHAPE: _resolved_shape}
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


def reshape_shape(bb: relax.BlockBuilder, data: Any, newshape: Any, allowzero: bool) -> Any:
    """The ``int64`` shape tensor ``dyn.reshape`` gives ``data``: ``newshape``'s codes resolved
    on the host when the function runs (the result has one dimension per code)."""
    ty = newshape.ty
    dims = [] if not isinstance(ty, relax.TensorType) or ty.shape is None else ty.shape.values
    if len(dims) != 1 or not isinstance(dims[0], tvm.tirx.IntImm):
        raise TypeError(f"reshape: a tensor-valued newshape must be 1-d of known length, got {ty}")
    shape = bb.emit(relax.op.shape_of(data))
    return bb.emit(
        relax.call_pure_packed(
            _registered(RESHAPE_SHAPE),
            shape,
            newshape,
            relax.prim_value(tvm.tirx.IntImm("int64", int(bool(allowzero)))),
            ty_args=relax.TensorType([int(dims[0])], "int64"),
        )
    )
