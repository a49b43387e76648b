"""The ``dyn.*`` ops whose result shape the run-time values decide: ``dyn.topk`` (a tensor
``k``), ``dyn.nn.pad`` (a tensor ``pad_width``), ``dyn.strided_slice`` (tensor bounds),
``dyn.squeeze`` and ``dyn.expand_dims`` (a tensor ``axis``), ``dyn.nn.upsampling`` and
``dyn.nn.upsampling3d`` (tensor scales).

As Relay computed such a shape with a shape function before the kernel ran, each emitter here
computes it when the function runs (Relax ops on the values, or a NumPy function of
:mod:`.host_ops` where Python's rules are the spec), reads it as shape variables (Relay's
``Any`` dimensions, :func:`.dynamic.shape_values`) and then runs a kernel of that shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax, te, tirx, topi

from compile_engine_compat.relay._impl.dynamic import any_dims, shape_values
from compile_engine_compat.relay._impl.host_ops import (
    EXPAND_DIMS_SHAPE,
    SQUEEZE_SHAPE,
    STRIDED_SLICE_BOUNDS,
    host_call,
)
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.expr import Attrs

__all__ = [
    "RUN_TIME_SHAPED",
    "expand_dims",
    "pad",
    "squeeze",
    "strided_slice",
    "topk",
    "upsampling",
]


def _dims(value: Any, what: str) -> list[Any]:
    """The shape of a tensor of known rank (its dimensions as expressions)."""
    ty = value.ty
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise UnsupportedRelayError(f"dyn.{what}: the data must be a tensor of known rank")
    return list(ty.shape.values)


def _shape_tensor(bb: relax.BlockBuilder, data: Any, axes: list[int]) -> Any:
    """The ``int64`` tensor of ``data``'s lengths along ``axes``, as the function runs."""
    shape = bb.emit(relax.op.shape_to_tensor(relax.op.shape_of(data)))
    return bb.emit(relax.op.take(shape, relax.const(np.array(axes, "int64")), axis=0))


def _vector(bb: relax.BlockBuilder, value: Any, dtype: str) -> Any:
    """A scalar or 1-d tensor as a 1-d tensor of ``dtype``."""
    return bb.emit(relax.op.reshape(bb.emit(relax.op.astype(value, dtype)), [-1]))


def topk(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.topk(data, k)``: the ``k`` (read at run time; below 1: all) largest (smallest with
    ``is_ascend``) along ``axis``, as a sort, a slice to ``k`` and a gather."""
    data, k = args
    ndim = len(_dims(data, "topk"))
    axis = int(attrs.axis) % ndim
    want = _vector(bb, k, "int64")
    length = _shape_tensor(bb, data, [axis])
    chosen = relax.op.where(relax.op.less(want, relax.const(1, "int64")), length, want)
    (count,) = shape_values(bb, bb.emit(chosen), "k")
    dtype = str(attrs.dtype)
    order = bb.emit(relax.op.argsort(data, axis, not bool(attrs.is_ascend), dtype))
    indices = any_dims(bb, relax.op.strided_slice(order, axes=[axis], begin=[0], end=[count]))
    if attrs.ret_type == "indices":
        return indices
    positions = indices if dtype == "int64" else bb.emit(relax.op.astype(indices, "int64"))
    values = bb.emit(relax.op.gather_elements(data, positions, axis))
    return values if attrs.ret_type == "values" else bb.normalize(relax.Tuple([values, indices]))


def pad(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.nn.pad(data, pad_width, pad_value)``: ``pad_width`` (``[ndim, 2]``) read as
    shape variables, then TOPI's constant (or reflecting) pad by them."""
    data, widths, value = args
    ndim = len(_dims(data, "nn.pad"))
    if attrs.pad_mode not in ("constant", "reflect"):
        raise UnsupportedRelayError(
            f"dyn.nn.pad(pad_mode={attrs.pad_mode!r}): a pad_width read at run time pads "
            "with constant or reflect only; give pad_width as numbers for edge"
        )
    flat = shape_values(bb, bb.emit(relax.op.reshape(widths, [2 * ndim])), "pad_width")
    dtype = str(data.ty.dtype)
    fill = bb.emit(relax.op.reshape(bb.emit(relax.op.astype(value, dtype)), []))
    mode = str(attrs.pad_mode)

    def compute(x: te.Tensor, v: te.Tensor, *width: Any) -> te.Tensor:
        before, after = list(width[0::2]), list(width[1::2])
        if mode == "reflect":
            return topi.nn.mirror_pad(x, before, after, mode="REFLECT")
        out = [d + b + a for d, b, a in zip(x.shape, before, after)]

        def element(*index: Any) -> Any:
            bounds = zip(index, before, x.shape)
            inside = tirx.all(*(tirx.all(b <= i, i < b + d) for i, b, d in bounds))
            source = tuple(i - b for i, b in zip(index, before))
            return tirx.if_then_else(inside, x[source], v[()])

        return te.compute(out, element, name="dyn_pad")

    return any_dims(bb, bb.call_te(compute, data, fill, *flat, primfunc_name_hint="dyn_pad"))


def strided_slice(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.strided_slice(data, begin, end, strides)``: the bounds resolved on the host
    (:func:`.host_ops._slice_bounds`: each axis's start, step and length), the sliced axes'
    lengths read as shape variables, then a gather of ``start + i * step`` on each axis."""
    data, begin, end, strides = args
    _dims(data, "strided_slice")
    # A length computed from others (2 * n) as a variable: the kernel then takes the tensor
    # as it comes (Relax's all_class_non_max_suppression returns fewer rows than it types).
    data = any_dims(bb, data)
    shape = _dims(data, "strided_slice")
    if attrs.axes is not None:
        raise UnsupportedRelayError(
            "dyn.strided_slice: axes with tensor-valued bounds (TVM 0.19 asserted it away "
            "too): give begin/end/strides for the leading axes"
        )
    sliced = _dims(begin, "strided_slice")
    if len(sliced) != 1 or not isinstance(sliced[0], tirx.IntImm):
        raise UnsupportedRelayError("dyn.strided_slice: begin must be 1-d of known length")
    count = int(sliced[0])
    size_mode = tirx.IntImm("int64", int(attrs.slice_mode == "size"))
    bounds = host_call(
        bb,
        STRIDED_SLICE_BOUNDS,
        [relax.op.shape_of(data), begin, end, strides, relax.prim_value(size_mode)],
        relax.TensorType([3, len(shape)], "int64"),
    )
    lengths = bb.emit(relax.op.strided_slice(bounds, axes=[0, 1], begin=[2, 0], end=[3, count]))
    sizes = bb.emit(relax.op.reshape(lengths, [count]))
    out = [*shape_values(bb, sizes, "strides"), *shape[count:]]

    def compute(x: te.Tensor, b: te.Tensor, *dims: Any) -> te.Tensor:
        def element(*index: Any) -> Any:
            return x[tuple(b[0, d] + i * b[1, d] for d, i in enumerate(index))]

        return te.compute(list(dims), element, name="dyn_strided_slice")

    return bb.call_te(compute, data, bounds, *out, primfunc_name_hint="dyn_strided_slice")


def _reshaped(bb: relax.BlockBuilder, data: Any, name: str, args: list[Any], rank: int) -> Any:
    """``data`` reshaped to the shape :mod:`.host_ops`'s function ``name`` gives (of ``rank``
    dimensions) from its shape and ``args``, read as shape variables."""
    result = relax.TensorType([rank], "int64")
    shape = host_call(bb, name, [relax.op.shape_of(data), *args], result)
    return relax.op.reshape(data, relax.ShapeExpr(shape_values(bb, shape, "axis")))


def squeeze(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.squeeze(data, axis)``: the shape without those axes (checked to be 1s on the host,
    :func:`.host_ops._squeezed_shape`), then a reshape to it."""
    data, axis = args
    count = _dims(axis, "squeeze")
    if len(count) > 1 or not all(isinstance(c, tirx.IntImm) for c in count):
        raise UnsupportedRelayError("dyn.squeeze: axis must be a 1-d tensor of known length")
    rank = len(_dims(data, "squeeze")) - (int(count[0]) if count else 1)
    return _reshaped(bb, data, SQUEEZE_SHAPE, [axis], rank)


def expand_dims(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.expand_dims(data, axis)``: ``num_newaxis`` 1s inserted at the axis read when the
    function runs (:func:`.host_ops._expanded_shape`), as a reshape."""
    data, axis = args
    count = int(attrs.num_newaxis)
    newaxis = relax.prim_value(tirx.IntImm("int64", count))
    return _reshaped(bb, data, EXPAND_DIMS_SHAPE, [axis, newaxis], len(_dims(data, "")) + count)


def upsampling(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.nn.upsampling(data, scale_h, scale_w)`` and ``dyn.nn.upsampling3d(data, scale_d,
    scale_h, scale_w)``: the scaled lengths ``round(length * scale)`` (Relay's shape function)
    computed as the function runs, then TOPI's upsampling to that shape."""
    data, scales = args[0], args[1:]
    shape = _dims(data, "nn.upsampling")
    layout = str(attrs.layout)
    axes = [layout.index(c) for c in "DHW"[3 - len(scales) :]]
    factors = bb.emit(relax.op.concat([_vector(bb, s, "float64") for s in scales]))
    lengths = relax.op.astype(_shape_tensor(bb, data, axes), "float64")
    sizes = relax.op.astype(relax.op.round(relax.op.multiply(lengths, factors)), "int64")
    scaled = dict(zip(axes, shape_values(bb, bb.emit(sizes), "scale")))
    out = [scaled.get(i, d) for i, d in enumerate(shape)]

    def compute(x: te.Tensor, *dims: Any) -> te.Tensor:
        if len(scales) == 2:
            return topi.nn.upsampling(
                x, 1.0, 1.0, layout, str(attrs.method), bool(attrs.align_corners), list(dims)
            )
        mode = str(attrs.coordinate_transformation_mode)
        method = str(attrs.method)
        return topi.nn.upsampling3d(x, 1.0, 1.0, 1.0, layout, method, mode, list(dims))

    return bb.call_te(compute, data, *out, primfunc_name_hint="dyn_upsampling")


#: Relay op -> the emitter of its ``dyn.`` twin (whose result shape the values decide).
RUN_TIME_SHAPED = {
    "topk": topk,
    "nn.pad": pad,
    "strided_slice": strided_slice,
    "squeeze": squeeze,
    "expand_dims": expand_dims,
    "nn.upsampling": upsampling,
    "nn.upsampling3d": upsampling,
}
