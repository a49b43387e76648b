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

__all__ = [
    "EXPAND_DIMS_SHAPE",
    "RESHAPE_SHAPE",
    "SPARSE_FILL_EMPTY_ROWS",
    "SQUEEZE_SHAPE",
    "STRIDED_SLICE_BOUNDS",
    "host_call",
    "reshape_shape",
    "sparse_fill_empty_rows",
]

#: The global name of ``sparse_fill_empty_rows``'s packed function.
SPARSE_FILL_EMPTY_ROWS = "compile_engine_compat.sparse_fill_empty_rows"
#: The global name of ``dyn.reshape``'s shape function.
RESHAPE_SHAPE = "compile_engine_compat.dyn_reshape_shape"
#: The global name of ``dyn.squeeze``'s shape function.
SQUEEZE_SHAPE = "compile_engine_compat.dyn_squeeze_shape"
#: The global name of ``dyn.expand_dims``'s shape function.
EXPAND_DIMS_SHAPE = "compile_engine_compat.dyn_expand_dims_shape"
#: The global name of ``dyn.strided_slice``'s bounds function.
STRIDED_SLICE_BOUNDS = "compile_engine_compat.dyn_strided_slice_bounds"


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


def _squeezed_shape(shape: Any, axis: Any) -> Any:
    """``dyn.squeeze``'s result shape: ``shape`` without the axes ``axis`` names (each of
    length 1), read when the function runs."""
    in_shape = [int(d) for d in shape]
    ndim = len(in_shape)
    axes = [int(a) for a in axis.numpy().reshape(-1)]
    if any(not -ndim <= a < ndim for a in axes):
        raise ValueError(f"squeeze: an axis of {axes} is outside a tensor of rank {ndim}")
    dropped = {a % ndim for a in axes}
    if len(dropped) != len(axes) or any(in_shape[a] != 1 for a in dropped):
        raise ValueError(f"squeeze: the axes {axes} of shape {in_shape} are not distinct 1s")
    out = [d for i, d in enumerate(in_shape) if i not in dropped]
    return tvm.runtime.tensor(np.array(out, dtype="int64"))


def _expanded_shape(shape: Any, axis: Any, num_newaxis: int) -> Any:
    """``dyn.expand_dims``'s result shape: ``num_newaxis`` 1s inserted at ``axis`` (read when
    the function runs; negative counts from the end of the result's first ``ndim + 1``)."""
    in_shape = [int(d) for d in shape]
    values = axis.numpy().reshape(-1)
    position = int(values[0]) if values.size == 1 else None
    ndim = len(in_shape)
    if position is None or not -ndim - 1 <= position <= ndim:
        raise ValueError(f"expand_dims: axis {values.tolist()} is outside [-{ndim + 1}, {ndim}]")
    position %= ndim + 1
    out = in_shape[:position] + [1] * int(num_newaxis) + in_shape[position:]
    return tvm.runtime.tensor(np.array(out, dtype="int64"))


def _slice_bounds(shape: Any, begin: Any, end: Any, strides: Any, size_mode: int) -> Any:
    """``dyn.strided_slice``'s bounds, read when the function runs: per axis its first index,
    its step and its length (``[3, ndim]``, ``int64``), Python's slicing rules as Relay's
    (negative indices count from the end, bounds are clamped); the axes past ``begin`` whole.
    With ``size_mode``, ``end`` holds sizes (-1: to the end) and the step is 1."""
    in_shape = [int(d) for d in shape]
    starts = [int(b) for b in begin.numpy().reshape(-1)]
    ends = [int(e) for e in end.numpy().reshape(-1)]
    steps = [int(s) for s in strides.numpy().reshape(-1)] or [1]
    if len(steps) == 1:
        steps = steps * len(starts)
    if len(starts) > len(in_shape) or len(ends) != len(starts) or len(steps) != len(starts):
        raise ValueError(
            f"strided_slice: begin {starts}, end {ends} and strides {steps} must have one "
            f"value per sliced axis of a tensor of shape {in_shape}"
        )
    bounds = np.array([[0] * len(in_shape), [1] * len(in_shape), in_shape], dtype="int64")
    for axis, (b, e, s) in enumerate(zip(starts, ends, steps)):
        if size_mode:
            b = b + in_shape[axis] if b < 0 else b
            e, s = (in_shape[axis] if e < 0 else b + e), 1
        if s == 0:
            raise ValueError("strided_slice: a stride is 0")
        picked = range(in_shape[axis])[slice(b, e, s)]
        bounds[:, axis] = (picked.start, picked.step, len(picked))
    return tvm.runtime.tensor(bounds)


@functools.cache
def _registered(name: str) -> str:
    """Register the packed function ``name`` once, on first use; return its name."""
    functions = {
        SPARSE_FILL_EMPTY_ROWS: _fill_empty_rows,
        RESHAPE_SHAPE: _resolved_shape,
        SQUEEZE_SHAPE: _squeezed_shape,
        EXPAND_DIMS_SHAPE: _expanded_shape,
        STRIDED_SLICE_BOUNDS: _slice_bounds,
    }
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


def host_call(bb: relax.BlockBuilder, name: str, args: list[Any], result: Any) -> Any:
    """The emitted call of this module's packed function ``name`` (registered on first use)
    on ``args``, of Relax type ``result``."""
    return bb.emit(relax.call_pure_packed(_registered(name), *args, ty_args=result))
