"""Float ONNX ops that Relax's importer lacks or converts unlike TVM 0.19's Relay importer.

* ``Scatter`` (opset 9/10) with negative indices: Relax's converter builds ``scatter_nd``
  coordinates from the indices as given, and ``scatter_nd`` does not wrap negative ones, so
  the kernel wrote before the start of its output (heap corruption: the upstream ONNX file's
  later aborts and its segfault at exit). TVM 0.19 wrapped them (``scatter_elements``); here
  they are wrapped (``index + dim`` where negative) before the importer's own converter runs.
* ``Reshape`` to a shape computed at run time (a graph input, say): Relax's converter takes
  only a constant shape; here ONNX's rule (``0`` copies the input's dimension unless
  ``allowzero``, ``-1`` takes the rest) is computed on the shape tensor and the result is
  reshaped to it (``tensor_to_shape``), as TVM 0.19's dynamic ``reshape`` did.
* ``Celu`` (opset 12), which Relax's importer does not convert:
  ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.
* ``TopK`` with ``K`` computed at run time (a graph input): sorted, then sliced.
* ``Resize`` with an empty ``scales`` or ``sizes`` (left out): given as absent.
* com.microsoft ``Attention`` with ``unidirectional`` or ``past`` (:mod:`.onnx_qattention`).
* ``ReverseSequence`` (Relax's ``reverse_sequence``) and ai.onnx.ml's ``LinearRegressor``,
  which Relax's importer does not convert.
* ``RNN``, ``LSTM``, ``GRU``, unrolled (:mod:`.onnx_rnn`).
* the random ops, on TVM 0.19's Threefry generator (:mod:`.onnx_random`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import boundary

from .onnx_integer import value_of
from .onnx_qattention import attention
from .onnx_random import CONVERTERS as RANDOM_CONVERTERS
from .onnx_rnn import CONVERTERS as RECURRENT_CONVERTERS

__all__ = ["CONVERTERS"]

R = relax.op
Converter = Callable[[Any, Any, dict[str, Any], Any, int], Any]


def _wrapped_indices(bb: Any, indices: Any, dim: Any) -> Any:
    """``indices`` with each negative value ``v`` as ``v + dim`` (ONNX's counting from the end)."""
    dtype = str(indices.ty.dtype)
    size = relax.const(int(dim), dtype)
    negative = R.less(indices, relax.const(0, dtype))
    return bb.normalize(R.where(negative, R.add(indices, size), indices))


def _scatter(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    data, indices, updates = inputs[0], inputs[1], inputs[2]
    shape = data.ty.shape
    axis = int(attrs.get("axis", 0))
    if shape is not None:
        dim = shape[axis % len(shape)]
        if isinstance(dim, int) or hasattr(dim, "value"):
            indices = _wrapped_indices(bb, indices, int(dim))
    convert = boundary.onnx_float_converter("Scatter", opset)
    return convert(bb, [data, indices, updates], attrs, params)


def _reshape(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    data, shape = inputs[0], inputs[1]
    convert = boundary.onnx_float_converter("Reshape", opset)
    computed = isinstance(shape, relax.Var | relax.Call) and shape.ty.shape is not None
    if not computed or isinstance(data, relax.ShapeExpr) or shape.ty.ndim != 1:
        return convert(bb, inputs, attrs, params)
    length = int(shape.ty.shape[0])
    target = bb.normalize(R.astype(shape, "int64"))
    dims = bb.normalize(R.shape_to_tensor(R.shape_of(data)))
    rank = int(data.ty.ndim)
    if length <= rank:
        copied = R.strided_slice(dims, axes=[0], begin=[0], end=[length])
    else:
        copied = R.concat([dims, R.ones((length - rank,), "int64")], axis=0)
    zero = relax.const(0, "int64")
    if not attrs.get("allowzero", 0):
        target = bb.normalize(R.where(R.equal(target, zero), copied, target))
    minus_one = relax.const(-1, "int64")
    unknown = R.equal(target, minus_one)
    known = R.prod(R.where(unknown, relax.const(1, "int64"), target))
    rest = R.floor_divide(R.prod(dims), known)
    target = bb.normalize(R.where(unknown, rest, target))
    # Named dimensions (not an unknown shape), so that the ops after it legalize.
    computed_shape = bb.emit(R.tensor_to_shape(target))
    dims_vars = [tvm.tirx.Var(f"reshape_dim_{i}", "int64") for i in range(length)]
    bb.match_cast(computed_shape, relax.ShapeType(dims_vars))
    return R.reshape(data, relax.ShapeExpr(dims_vars))


def _celu(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    x = inputs[0]
    dtype = str(x.ty.dtype)
    alpha = relax.const(float(attrs.get("alpha", 1.0)), dtype)
    zero = relax.const(0.0, dtype)
    one = relax.const(1.0, dtype)
    negative = R.multiply(alpha, R.subtract(R.exp(R.divide(x, alpha)), one))
    return R.add(R.maximum(zero, x), R.minimum(zero, negative))


def _reverse_sequence(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """The first ``sequence_lens[b]`` steps of each batch entry reversed (Relax's op)."""
    return R.reverse_sequence(
        inputs[0],
        R.astype(inputs[1], "int64"),
        seq_axis=int(attrs.get("time_axis", 0)),
        batch_axis=int(attrs.get("batch_axis", 1)),
    )


def _linear_regressor(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """ai.onnx.ml ``LinearRegressor``: ``X C^T + intercepts``, ``C`` the coefficients as
    ``(targets, features)``; as TVM 0.19 did, an input with more features than the
    coefficients cover is cut to the first ones."""
    if attrs.get("post_transform", b"NONE") not in (b"NONE", "NONE"):
        raise ValueError("LinearRegressor's post_transform (PROBIT) is not supported")
    data = inputs[0]
    targets = int(attrs.get("targets", 1))
    coefficients = np.asarray(attrs.get("coefficients", ()), "float32")
    features = coefficients.size // targets
    if int(data.ty.shape[-1]) > features:
        data = R.strided_slice(data, axes=[-1], begin=[0], end=[features])
    weights = relax.const(np.ascontiguousarray(coefficients.reshape(targets, features).T))
    result = R.matmul(R.astype(data, "float32"), weights)
    if "intercepts" in attrs:
        result = R.add(result, relax.const(np.asarray(attrs["intercepts"], "float32")))
    return result


def _topk(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """``TopK`` with ``K`` computed at run time (Relax's converter takes a constant only): the
    axis sorted, the first ``K`` kept (``dynamic_strided_slice``), as TVM 0.19's dynamic
    ``topk`` returned them."""
    data, k = inputs[0], inputs[1]
    if opset < 10 or value_of(k, params) is not None or data.ty.shape is None:
        return boundary.onnx_float_converter("TopK", opset)(bb, inputs, attrs, params)
    dims = [int(d) for d in data.ty.shape]
    axis = int(attrs.get("axis", -1)) % len(dims)
    largest = bool(attrs.get("largest", 1))
    order = bb.emit(R.argsort(data, axis=axis, descending=largest, dtype="int64"))
    ordered = bb.emit(R.gather_elements(data, order, axis=axis))
    count = R.reshape(R.astype(k, "int64"), (1,))
    before, after = dims[:axis], dims[axis + 1 :]
    pieces = [relax.const(np.array(before), "int64")] if before else []
    pieces += [count] + ([relax.const(np.array(after), "int64")] if after else [])
    end = R.concat(pieces, axis=0)
    begin = relax.const(np.zeros(len(dims)), "int64")
    strides = relax.const(np.ones(len(dims)), "int64")
    end = bb.emit(end)
    return relax.Tuple(
        [bb.emit(R.dynamic_strided_slice(part, begin, end, strides)) for part in (ordered, order)]
    )


def _resize(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """``Resize`` whose unused ``scales`` or ``sizes`` is an empty tensor (ONNX's way of leaving
    an input out before opset 13): passed to Relax's converter as absent, as TVM 0.19 did; and
    opset 10's ``Resize(X, scales)``, whose coordinates are ``asymmetric`` (TVM 0.19's too)."""
    operands = list(inputs)
    if opset < 11:
        operands = [operands[0], None, operands[1] if len(operands) > 1 else None]
        attrs = {**attrs, "coordinate_transformation_mode": b"asymmetric", "nearest_mode": b"floor"}
    for index in (2, 3):
        if index < len(operands) and operands[index] is not None:
            known = value_of(operands[index], params)
            if known is not None and known.size == 0:
                operands[index] = None
    return boundary.onnx_float_converter("Resize", opset)(bb, operands, attrs, params)


def _attention(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """com.microsoft ``Attention``: the ``unidirectional``, ``scale`` and ``past`` forms by the
    shim's (:func:`.onnx_qattention.attention`), the rest by Relax's converter."""
    # Relax's converter refuses these attributes even at their defaults (unidirectional=0).
    if "unidirectional" in attrs or "scale" in attrs or (len(inputs) > 4 and inputs[4] is not None):
        return attention(bb, inputs, attrs, params, opset)
    return boundary.onnx_float_converter("Attention", opset)(bb, inputs, attrs, params)


#: The shim's float converters, by ONNX op type.
CONVERTERS: dict[str, Converter] = {
    "Scatter": _scatter,
    "Reshape": _reshape,
    "Celu": _celu,
    "ReverseSequence": _reverse_sequence,
    "TopK": _topk,
    "Resize": _resize,
    "Attention": _attention,
    "LinearRegressor": _linear_regressor,
    **RECURRENT_CONVERTERS,
    **RANDOM_CONVERTERS,
}
