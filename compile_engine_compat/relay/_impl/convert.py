"""How a row of the op table converts to Relax: the emit functions the rows name.

An emit function is ``emit(bb, relax_args, attrs) -> relax.Expr``: it receives the Relax values
of the call's inputs and the call's (Relay) attributes, and returns the Relax expression, not yet
bound (the emitter, :mod:`.to_relax`, binds it). :func:`direct` makes
the emit function of a row whose conversion is a renaming of keywords; the others are written
once here and shared by every row that needs them (Relay's reshape codes, ``exclude``
reductions, ``bias_add``...).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax, tirx, topi

from compile_engine_compat.relay._impl.dynamic import dynamic_batch_matmul, shape_known
from compile_engine_compat.relay._impl.registry import Emit, UnsupportedRelayError
from compile_engine_compat.relay.expr import Attrs

__all__ = [
    "UPSAMPLING_METHODS",
    "arange",
    "argreduce",
    "batch_matmul",
    "bias_add",
    "clip",
    "conv_transpose",
    "cosh",
    "dense",
    "direct",
    "einsum",
    "expand_dims",
    "full",
    "gather_nd",
    "global_pool",
    "group_norm",
    "identity",
    "instance_norm",
    "l2_normalize",
    "last_index",
    "layout_transform",
    "log_base",
    "logsumexp",
    "matmul",
    "mean_and",
    "meshgrid",
    "norm_axes",
    "normalized_axes",
    "one_hot",
    "pad",
    "reduce",
    "reduced_axes",
    "relax_fn",
    "reshape",
    "reshape_like",
    "reshape_shape",
    "resize2d",
    "rounding_method",
    "scalar",
    "sinh",
    "sparse_reshape",
    "spatial_axes",
    "split",
    "split_outputs",
    "static_shape",
    "std_reduce",
    "strided_slice",
    "take",
    "unset_to_none",
    "upsampling",
    "variance",
    "variance_reduce",
]


def relax_fn(name: str) -> Callable[..., Any]:
    """The ``relax.op`` function of a Relax op name (``"relax.nn.conv2d"``)."""
    fn: Any = relax.op
    for part in name.removeprefix("relax.").split("."):
        fn = getattr(fn, part)
    return fn


def static_shape(value: Any) -> list[Any]:
    """The static shape of a Relax value (ints where known)."""
    ty = value.ty if hasattr(value, "ty") else None
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise UnsupportedRelayError(f"the value {value} has no known shape, which Relay required")
    return [int(d) if isinstance(d, tirx.IntImm) else d for d in ty.shape.values]


def normalized_axes(value: Any, axis: Any) -> list[int] | None:
    """Relay's ``axis`` (an int, a list or None) as non-negative axes of ``value``."""
    if axis is None:
        return None
    ndim = len(static_shape(value))
    axes = [int(axis)] if isinstance(axis, int | np.integer) else [int(a) for a in axis]
    return [a + ndim if a < 0 else a for a in axes]


def unset_to_none(value: Any) -> Any:
    """Relay's "unset" spellings ("" and None) as Relax's None."""
    return None if value in ("", None) else value


def scalar(value: Any) -> Any:
    """A Relay scalar attribute or constant input as a Python number."""
    if isinstance(value, tvm.ir.expr.Constant):
        return value.data.numpy().item()
    return value


def direct(relax_op: str, **kwargs: str | Callable[[Attrs, list[Any]], Any]) -> Emit:
    """Emit ``relax_op(*args, **kw)``; each ``kw`` is a Relay attribute name or a function.

    A function receives ``(attrs, relax_args)``.
    """
    fn = relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        kw = {k: (attrs[v] if isinstance(v, str) else v(attrs, args)) for k, v in kwargs.items()}
        return fn(*args, **kw)

    return emit


def reduce(relax_op: str) -> Emit:
    """Reductions: Relay's ``exclude`` picks the complement of ``axis``."""
    fn = relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        axes, keepdims = reduced_axes(args[0], attrs), bool(attrs.keepdims)
        if str(getattr(args[0].ty, "dtype", "")) == "bool":
            # Relay reduced booleans (min: all, max: any); TVM 0.27 has no bool min/max value.
            wide = bb.emit(fn(relax.op.astype(args[0], "uint8"), axes, keepdims))
            return relax.op.astype(wide, "bool")
        return fn(args[0], axes, keepdims)

    return emit


def _is_half(value: Any) -> bool:
    return str(getattr(value.ty, "dtype", "")) == "float16"


def mean(bb: relax.BlockBuilder, data: Any, axes: list[int] | None, keepdims: bool) -> Any:
    """Relay's ``mean``: a float16 input is summed in float32 and the mean cast back (a float16
    sum of 16K halves stops growing at 2048: their mean came out 0.125)."""
    if not _is_half(data):
        return relax.op.mean(data, axes, keepdims)
    wide = bb.emit(relax.op.mean(relax.op.astype(data, "float32"), axes, keepdims))
    return relax.op.astype(wide, "float16")


def batch_norm(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """Relay's inference ``batch_norm``; float16/bfloat16 inputs are normalized in float32 and
    the result cast back (TVM 0.27's legalization of a half-precision batch_norm mixes
    float32 into it and fails to build)."""
    kw = {
        "axis": int(attrs.axis),
        "epsilon": float(attrs.epsilon),
        "center": bool(attrs.center),
        "scale": bool(attrs.scale),
        "training": False,
    }
    dtype = str(getattr(args[0].ty, "dtype", ""))
    if dtype not in ("float16", "bfloat16"):
        return relax.op.nn.batch_norm(*args, **kw)
    wide = [bb.emit(relax.op.astype(a, "float32")) for a in args]
    out = bb.emit(relax.op.nn.batch_norm(*wide, **kw))
    # In inference the other two results are the moving mean and variance, as given.
    normalized = bb.emit(relax.op.astype(relax.TupleGetItem(out, 0), dtype))
    return relax.Tuple([normalized, args[3], args[4]])


def where(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """Relay's ``where``: a condition of any dtype selects where it is nonzero (Relax's takes a
    boolean condition only)."""
    cond, x, y = args
    dtype = str(getattr(cond.ty, "dtype", "bool"))
    if dtype != "bool":
        cond = bb.emit(relax.op.not_equal(cond, relax.const(0, dtype)))
    return relax.op.where(cond, x, y)


def reduced_axes(value: Any, attrs: Attrs) -> list[int] | None:
    """The axes a Relay reduction reduces over (``axis``, or its complement with ``exclude``)."""
    axes = normalized_axes(value, attrs.axis)
    if "exclude" in attrs and attrs.exclude:
        ndim = len(static_shape(value))
        axes = [a for a in range(ndim) if a not in (axes or [])]
    return axes


def mean_reduce(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``mean``: Relay's reduction, float16 summed in float32 (:func:`mean`)."""
    return mean(bb, args[0], reduced_axes(args[0], attrs), bool(attrs.keepdims))


def variance(bb: relax.BlockBuilder, data: Any, attrs: Attrs, keepdims: bool) -> Any:
    """Relay's ``_variance``: ``relax.variance``, or with ``unbiased`` the sum of squared
    deviations over ``n - 1`` (``n`` counted as a sum of ones, so symbolic axes work too)."""
    axes = reduced_axes(data, attrs)
    unbiased = "unbiased" in attrs and bool(attrs.unbiased)
    if not unbiased and not _is_half(data):
        return relax.op.variance(data, axes, keepdims)
    # As Relay's VarianceCompute: deviations in the input's dtype, their squares summed in
    # float32 for float16 input, the variance cast back.
    centre = bb.emit(mean(bb, data, axes, keepdims=True))
    deviation = bb.emit(relax.op.subtract(data, centre))
    squares = bb.emit(relax.op.multiply(deviation, deviation))
    dtype = "float32" if _is_half(data) else str(data.ty.dtype)
    total = bb.emit(relax.op.sum(relax.op.astype(squares, dtype), axes, keepdims))
    count = bb.emit(relax.op.sum(relax.op.ones_like(relax.op.astype(data, dtype)), axes, keepdims))
    if unbiased:
        count = bb.emit(relax.op.subtract(count, relax.const(1, dtype)))
    return relax.op.astype(relax.op.divide(total, count), str(data.ty.dtype))


def variance_reduce(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``variance``: Relay's, biased or (``unbiased=True``) not."""
    return variance(bb, args[0], attrs, bool(attrs.keepdims))


def std_reduce(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``std``: the square root of Relay's variance."""
    return relax.op.sqrt(variance(bb, args[0], attrs, bool(attrs.keepdims)))


def mean_and(spread: str) -> Emit:
    """``mean_variance``/``mean_std``: the tuple ``(mean, variance or std)``, as Relay made."""

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        keepdims = bool(attrs.keepdims)
        centre = bb.emit(mean(bb, args[0], reduced_axes(args[0], attrs), keepdims))
        second = variance(bb, args[0], attrs, keepdims)
        if spread == "std":
            second = relax.op.sqrt(second)
        return relax.Tuple([centre, bb.emit(second)])

    return emit


def logsumexp(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``logsumexp``: ``log(sum(exp(x - max))) + max``, Relay's composition."""
    data = args[0]
    axes = normalized_axes(data, attrs.axis)
    top = bb.emit(relax.op.max(data, axes, keepdims=True))
    total = bb.emit(relax.op.sum(relax.op.exp(relax.op.subtract(data, top)), axes, keepdims=True))
    out = relax.op.add(relax.op.log(total), top)
    if attrs.keepdims:
        return out
    ndim = len(static_shape(data))
    return relax.op.squeeze(bb.emit(out), list(range(ndim)) if axes is None else axes)


def l2_normalize(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.l2_normalize``: ``x / sqrt(max(sum(x * x, axis, keepdims=True), eps))``, Relay's."""
    data = args[0]
    axes = normalized_axes(data, attrs.axis)
    squares = bb.emit(relax.op.sum(relax.op.multiply(data, data), axes, keepdims=True))
    floor = relax.const(float(attrs.eps), data.ty.dtype)
    return relax.op.divide(data, relax.op.sqrt(relax.op.maximum(squares, floor)))


def _row_major_strides(bb: relax.BlockBuilder, shape: Any) -> Any:
    """The row-major strides of a shape held in a 1-D int64 tensor: ``prod(shape[j + 1:])``.

    A product over the strict upper triangle of a ``(rank, rank)`` mask rather than a scan:
    the rank is a handful, and a scan of symbolic length does not build here.
    """
    rank = static_shape(shape)[0]
    ones = relax.op.ones(relax.ShapeExpr([rank, rank]), "int64")
    later = bb.emit(relax.op.triu(ones, 1))  # later[j, k] = 1 where k > j
    one = relax.const(1, "int64")
    factors = relax.op.where(relax.op.equal(later, one), relax.op.expand_dims(shape, 0), one)
    return bb.emit(relax.op.prod(factors, 1))


def sparse_reshape(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``sparse_reshape``: the COO indices of ``prev_shape`` as indices of ``new_shape``.

    Relax ops on the shape tensors (TVM 0.27's ``topi.sparse_reshape`` fails to build): the one
    ``-1`` of ``new_shape`` becomes ``prod(prev_shape) / prod(the others)``, each index is
    flattened with ``prev_shape``'s strides and unflattened with the new ones. Returns
    ``(new_indices, new_shape)`` in the dtypes of ``sparse_indices`` and ``new_shape``.
    """
    indices, prev_shape, new_shape = args
    wide = "int64"
    columns = static_shape(indices)[1]
    # prev_shape has one entry per index column: say so, or Relax cannot type the products
    # (and TVM does not legalize an op of unknown shape).
    prev = bb.emit(relax.op.astype(prev_shape, wide))
    if not (isinstance(columns, int) and static_shape(prev_shape) == [columns]):
        prev = bb.match_cast(prev, relax.TensorType([columns], wide))
    new = bb.emit(relax.op.astype(new_shape, wide))
    unknown = bb.emit(relax.op.equal(new, relax.const(-1, wide)))
    known = bb.emit(relax.op.prod(relax.op.where(unknown, relax.const(1, wide), new), 0, True))
    missing = bb.emit(relax.op.floor_divide(relax.op.prod(prev, 0, True), known))
    out_shape = bb.emit(relax.op.where(unknown, missing, new))
    flat = bb.emit(
        relax.op.sum(
            relax.op.multiply(
                relax.op.astype(indices, wide),
                relax.op.expand_dims(_row_major_strides(bb, prev), 0),
            ),
            1,
            keepdims=True,
        )
    )
    new_indices = relax.op.floor_mod(
        relax.op.floor_divide(flat, relax.op.expand_dims(_row_major_strides(bb, out_shape), 0)),
        relax.op.expand_dims(out_shape, 0),
    )
    if static_shape(new_shape) == [columns]:
        # An unchanged shape returns the indices as they are, out-of-range ones included (TOPI's
        # sparse_reshape, which Relay ran, copies them then).
        differing = relax.op.sum(relax.op.astype(relax.op.not_equal(prev, out_shape), wide))
        unchanged = bb.emit(relax.op.equal(differing, relax.const(0, wide)))
        new_indices = relax.op.where(unchanged, relax.op.astype(indices, wide), new_indices)
    return relax.Tuple(
        [
            bb.emit(relax.op.astype(new_indices, indices.ty.dtype)),
            bb.emit(relax.op.astype(out_shape, new_shape.ty.dtype)),
        ]
    )


def meshgrid(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``meshgrid``: a 0-d input counts as one element, as in Relay (and NumPy)."""
    vectors = [
        relax.op.reshape(a, [1]) if not static_shape(a) else a
        for a in (args[0].fields if isinstance(args[0], relax.Tuple) else [args[0]])
    ]
    return relax.op.meshgrid(relax.Tuple([bb.emit(v) for v in vectors]), str(attrs.indexing))


def _to_layout(bb: relax.BlockBuilder, value: Any, source: str, target: str) -> Any:
    """``value`` laid out as ``source`` permuted to ``target`` (itself when they agree)."""
    if source == target:
        return value
    return bb.emit(relax.op.permute_dims(value, [source.index(c) for c in target]))


def _transpose_output_padding(attrs: Attrs, nd: int) -> tuple[list[int], list[int], list[int]]:
    """(padding, output_padding, zero rows to add after) of a transposed convolution.

    Relax refuses an output padding of a stride or more; TVM 0.19 took it: the extra rows were
    rows of the whole transposed convolution that the end padding cropped, then zeros past its
    end. So such an axis has its end padding lessened by the output padding, and the rest of
    the output padding added as zeros.
    """
    padding = [int(p) for p in attrs.padding]
    if len(padding) == nd:
        padding = padding * 2
    output_padding = [int(p) for p in attrs.output_padding]
    zeros = [0] * nd
    for axis, (stride, extra) in enumerate(zip(attrs.strides, output_padding)):
        if extra < int(stride):
            continue
        cropped = min(extra, padding[nd + axis])
        padding[nd + axis] -= cropped
        zeros[axis], output_padding[axis] = extra - cropped, 0
    return padding, output_padding, zeros


def conv_transpose(nd: int) -> Emit:
    """``nn.conv{nd}d_transpose`` in any of Relay's layouts.

    TVM 0.27 lowers Relax's transposed convolutions only in the channels-first layouts
    (``NCHW`` data, ``IOHW`` weight); the others reach the VM unlowered. The data and weight
    are permuted into those, and the result into ``out_layout``.
    """
    fn = relax_fn(f"relax.nn.conv{nd}d_transpose")
    spatial = "DHW"[3 - nd :]
    data_first, weight_first = "NC" + spatial, "IO" + spatial

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        data_layout, kernel_layout = str(attrs.data_layout), str(attrs.kernel_layout)
        out_layout = unset_to_none(attrs.out_layout) or data_layout
        padding, output_padding, zeros = _transpose_output_padding(attrs, nd)
        out = fn(
            _to_layout(bb, args[0], data_layout, data_first),
            _to_layout(bb, args[1], kernel_layout, weight_first),
            strides=attrs.strides,
            padding=padding,
            output_padding=output_padding,
            dilation=attrs.dilation,
            groups=attrs.groups,
            data_layout=data_first,
            kernel_layout=weight_first,
            out_dtype=unset_to_none(attrs.out_dtype),
        )
        if any(zeros):
            widths = [0, 0, 0, 0, *(w for z in zeros for w in (0, z))]
            out = relax.op.nn.pad(bb.emit(out), widths)
        if out_layout == data_first:
            return out
        return relax.op.permute_dims(bb.emit(out), [data_first.index(c) for c in str(out_layout)])

    return emit


def argreduce(relax_op: str) -> Emit:
    """``argmax``/``argmin``: Relax takes one axis (or none) and returns int64; Relay, int32."""
    fn = relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        axes = normalized_axes(args[0], attrs.axis)
        if axes is not None and len(axes) != 1:
            # Several axes: Relay's TOPI kernel, the index into the reduced axes flattened.
            topi_fn = getattr(topi, relax_op.removeprefix("relax."))
            index = bb.emit_te(
                topi_fn, args[0], axes, bool(attrs.keepdims), bool(attrs.select_last_index)
            )
            return relax.op.astype(index, "int32")
        axis = None if axes is None else axes[0]
        if attrs.select_last_index:
            index = last_index(bb, fn, args[0], axis, attrs)
        else:
            index = fn(args[0], axis, bool(attrs.keepdims))
        return relax.op.astype(bb.emit(index), "int32")  # Relay's indices were int32

    return emit


def last_index(bb: relax.BlockBuilder, fn: Any, data: Any, axis: int | None, attrs: Attrs) -> Any:
    """``select_last_index=True``: ``n - 1 - arg(flip(x))`` along the axis (static length)."""
    shape = static_shape(data)
    if axis is None:
        data, axis = bb.emit(relax.op.reshape(data, [-1])), 0
        length = int(np.prod([d for d in shape if isinstance(d, int)]))
        if not all(isinstance(d, int) for d in shape):
            length = -1
    else:
        length = shape[axis] if isinstance(shape[axis], int) else -1
    if length < 0:
        raise UnsupportedRelayError(
            "select_last_index=True needs a static length on the reduced axis here: compute "
            "n - 1 - relax.op.argmax(relax.op.flip(x, axis), axis) with a known n"
        )
    flat = attrs.axis is None  # reduced over the flattened data
    index = bb.emit(fn(relax.op.flip(data, axis), axis, bool(attrs.keepdims) and not flat))
    last = relax.op.subtract(relax.const(length - 1, index.ty.dtype), index)
    if attrs.keepdims and flat:
        return relax.op.reshape(bb.emit(last), [1] * len(shape))
    return last


def reshape_shape(in_shape: list[Any], newshape: Sequence[int], allowzero: bool) -> list[Any]:
    """Resolve Relay's reshape codes (0 copy, -2 copy rest, -3 merge two, -4 split one).

    One -1 is left for Relax to infer.
    """
    out: list[Any] = []
    src = 0
    codes = [int(c) for c in newshape]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code > 0 or (code == 0 and allowzero):
            out.append(code)
            src += 1
        elif code == 0:
            out.append(in_shape[src])
            src += 1
        elif code == -1:
            out.append(-1)
            src += 1
        elif code == -2:
            out.extend(in_shape[src:])
            src = len(in_shape)
        elif code == -3:
            out.append(in_shape[src] * in_shape[src + 1])
            src += 2
        elif code == -4:
            whole, first, second = in_shape[src], codes[i + 1], codes[i + 2]
            if first == -1:
                first = whole // second
            if second == -1:
                second = whole // first
            out.extend([first, second])
            src += 1
            i += 2
        else:
            raise UnsupportedRelayError(f"relay.reshape: unknown shape code {code}")
        i += 1
    return out


def reshape(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``reshape``, with Relay's shape codes resolved (:func:`reshape_shape`)."""
    newshape = attrs.newshape
    codes = [newshape] if isinstance(newshape, int) else list(newshape)
    return relax.op.reshape(args[0], reshape_shape(static_shape(args[0]), codes, attrs.allowzero))


def expand_dims(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``expand_dims(axis, num_newaxis)``: Relax takes the list of new axes."""
    ndim = len(static_shape(args[0]))
    axis = int(attrs.axis)
    axis = axis + ndim + 1 if axis < 0 else axis
    if attrs.num_newaxis == 0:
        return args[0]
    return relax.op.expand_dims(args[0], [axis + k for k in range(int(attrs.num_newaxis))])


def take(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``take``; with no axis, Relay flattened the data first."""
    data, indices = args
    axis = attrs.axis
    if axis is None and len(static_shape(data)) != 1:
        # Relay flattened the data when no axis was given; Relax requires 1-D data then.
        data = bb.emit(relax.op.reshape(data, [-1]))
        axis = 0
    return relax.op.take(data, indices, axis, attrs.mode)


def strided_slice(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``strided_slice``, including Relay's ``slice_mode="size"``."""
    shape = static_shape(args[0])
    begin = [int(b) for b in attrs.begin]
    axes = list(range(len(begin))) if attrs.axes is None else [int(a) for a in attrs.axes]
    end = [int(e) for e in attrs.end]
    strides = [1] * len(begin) if attrs.strides is None else [int(s) for s in attrs.strides]
    if len(strides) == 1 and len(begin) > 1:
        strides = strides * len(begin)
    if attrs.slice_mode == "size":
        end = [shape[a] if e < 0 else b + e for a, b, e in zip(axes, begin, end)]
        strides = [1] * len(begin)
    return relax.op.strided_slice(args[0], axes, begin, end, strides)


def dense(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.dense``: ``matmul`` with the transposed weight."""
    weight_t = bb.emit(relax.op.permute_dims(args[1]))
    return relax.op.matmul(args[0], weight_t, unset_to_none(attrs.out_dtype))


def matmul(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.matmul`` with Relay's ``transpose_a``/``transpose_b``."""
    a, b = args
    if attrs.transpose_a:
        a = bb.emit(_swap_last_two(a))
    if attrs.transpose_b:
        b = bb.emit(_swap_last_two(b))
    return relax.op.matmul(a, b, unset_to_none(attrs.out_dtype))


def _swap_last_two(value: Any) -> Any:
    """Relay's matmul transposes: the last two axes swap, the leading ones stay."""
    axes = list(range(len(static_shape(value))))
    axes[-2:] = axes[:-3:-1]
    return relax.op.permute_dims(value, axes)


def batch_matmul(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.batch_matmul`` with Relay's transposes (``transpose_b=True`` by default)."""
    a, b = args
    # -- upstream Relay test files (test_any): batches Relax cannot prove broadcastable -----
    out = bb.normalize(
        relax.op.matmul(
            bb.emit(relax.op.permute_dims(a, [0, 2, 1])) if attrs.transpose_a else a,
            bb.emit(relax.op.permute_dims(b, [0, 2, 1])) if attrs.transpose_b else b,
            unset_to_none(attrs.out_dtype),
        )
    )
    if shape_known(out) or not (shape_known(a) and shape_known(b)):
        return out
    return dynamic_batch_matmul(
        bb, a, b, bool(attrs.transpose_a), bool(attrs.transpose_b), unset_to_none(attrs.out_dtype)
    )


def bias_add(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.bias_add`` along ``axis``."""
    data, bias = args
    ndim = len(static_shape(data))
    axis = int(attrs.axis) % ndim
    if axis != ndim - 1:
        # Relay broadcast the bias along `axis`; Relax broadcasts trailing dimensions only.
        shape = [1] * ndim
        shape[axis] = static_shape(bias)[0]
        bias = bb.emit(relax.op.reshape(bias, shape))
    return relax.op.add(data, bias)


def spatial_axes(layout: str) -> list[int]:
    """The D/H/W axes of a layout string."""
    return [i for i, c in enumerate(layout) if c in "DHW"]


def global_pool(relax_op: str) -> Emit:
    """``nn.global_*_pool2d``: a reduction over the spatial axes, keeping them."""
    fn = relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        return fn(args[0], spatial_axes(attrs.layout), True)

    return emit


def norm_axes(args: list[Any], channel: int) -> list[int]:
    """The axes a group or instance norm normalizes: all but batch and channel."""
    ndim = len(static_shape(args[0]))
    channel %= ndim
    return [a for a in range(1, ndim) if a != channel]


def group_norm(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.group_norm``."""
    return relax.op.nn.group_norm(
        *args,
        num_groups=int(attrs.num_groups),
        channel_axis=int(attrs.axis),
        axes=norm_axes(args, int(attrs.axis)),
        epsilon=float(attrs.epsilon),
        center=bool(attrs.center),
        scale=bool(attrs.scale),
    )


def instance_norm(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.instance_norm``."""
    return relax.op.nn.instance_norm(
        *args,
        channel_axis=int(attrs.axis),
        axes=norm_axes(args, int(attrs.axis)),
        epsilon=float(attrs.epsilon),
        center=bool(attrs.center),
        scale=bool(attrs.scale),
    )


def pad(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.pad``; the pad value may be a constant input, as in Relay."""
    flat = [int(v) for pair in attrs.pad_width for v in pair]
    value = float(scalar(args[1])) if len(args) > 1 else float(attrs.pad_value)
    return relax.op.nn.pad(args[0], flat, attrs.pad_mode, value)


#: Relay's upsampling method names -> Relax resize2d's.
UPSAMPLING_METHODS = {
    "nearest_neighbor": "nearest_neighbor",
    "bilinear": "linear",
    "bicubic": "cubic",
}


def upsampling(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``nn.upsampling``: ``image.resize2d`` to the scaled size."""
    shape = static_shape(args[0])
    h, w = attrs.layout.index("H"), attrs.layout.index("W")
    size = (int(shape[h] * attrs.scale_h), int(shape[w] * attrs.scale_w))
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    # Nearest upsampling by an integer factor repeats each pixel: floor, not round.
    rounding = "floor" if attrs.method == "nearest_neighbor" else "round"
    return relax.op.image.resize2d(
        args[0],
        size,
        layout=attrs.layout,
        method=UPSAMPLING_METHODS[attrs.method],
        coordinate_transformation_mode=mode,
        rounding_method=rounding,
    )


def rounding_method(attrs: Attrs) -> str:
    """Relay's unset ``rounding_method`` (``""``) as TOPI resolved it for ``nearest_neighbor``:
    ``"round"`` with ``align_corners``, else ``"floor"`` (Relax's default is ``"round"``)."""
    if attrs.rounding_method:
        return str(attrs.rounding_method)
    return "round" if attrs.coordinate_transformation_mode == "align_corners" else "floor"


def resize2d(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``image.resize2d`` (a size read at run time: its shape variables)."""
    size = attrs.size
    return relax.op.image.resize2d(
        args[0],
        tuple(s if isinstance(s, tvm.ir.expr.Expr) else int(s) for s in size),
        roi=None if attrs.roi is None else tuple(float(r) for r in attrs.roi),
        layout=attrs.layout,
        method=attrs.method,
        coordinate_transformation_mode=attrs.coordinate_transformation_mode,
        rounding_method=rounding_method(attrs),
        cubic_alpha=float(attrs.cubic_alpha),
        cubic_exclude=int(attrs.cubic_exclude),
        extrapolation_value=float(attrs.extrapolation_value),
        out_dtype=unset_to_none(attrs.out_dtype),
    )


def identity(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """The input itself (``nn.dropout`` at inference, ``copy``)."""
    return args[0]


def full(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``full``; with no dtype, the fill value's (a shape read at run time: its variables)."""
    shape = [d if isinstance(d, tvm.ir.expr.Expr) else int(d) for d in attrs.shape]
    return relax.op.full(shape, args[0], unset_to_none(attrs.dtype) or args[0].ty.dtype)


def clip(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``clip``, its bounds in the input's dtype."""
    dtype = args[0].ty.dtype
    low = relax.prim_value(tirx.const(attrs.a_min, dtype))
    high = relax.prim_value(tirx.const(attrs.a_max, dtype))
    return relax.op.clip(args[0], low, high)


def split_outputs(attrs: Attrs) -> int:
    """The number of outputs of ``split`` (sections, or indices plus one)."""
    ios = attrs.indices_or_sections
    return int(ios) if isinstance(ios, int | np.integer) else len(ios) + 1


def split(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``split``; on a symbolic shape, Relay's part shapes (Relax leaves them unknown)."""
    ios = attrs.indices_or_sections
    ios = int(ios) if isinstance(ios, int | np.integer) else [int(i) for i in ios]
    if ios == 1 or ios == []:
        # One part: Relax's split gives the tensor itself, Relay's a tuple of it.
        return relax.Tuple([args[0]])
    parts = relax.op.split(args[0], ios, int(attrs.axis))
    shape = static_shape(args[0])
    if all(isinstance(d, int) for d in shape):
        return parts
    axis = int(attrs.axis) % len(shape)
    if isinstance(ios, int):
        extents = [tirx.floordiv(shape[axis], ios)] * ios
    else:
        bounds = [0, *ios, shape[axis]]
        extents = [hi - lo for lo, hi in itertools.pairwise(bounds)]
    fields = [
        relax.TensorType([*shape[:axis], extent, *shape[axis + 1 :]], args[0].ty.dtype)
        for extent in extents
    ]
    return bb.match_cast(bb.emit(parts), relax.TupleType(fields))


def log_base(base: float) -> Emit:
    """Relax has no log2/log10: log(x) / log(base), in the input's dtype."""

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        dtype = args[0].ty.dtype
        lv = bb.emit(relax.op.log(args[0]))
        return relax.op.divide(lv, relax.const(np.log(base), dtype))

    return emit


def _exp_half(x: Any, op: Any) -> Any:
    """``(exp(x) op exp(-x)) / 2``."""
    both = op(relax.op.exp(x), relax.op.exp(relax.op.negative(x)))
    return relax.op.multiply(relax.const(0.5, x.ty.dtype), both)


def cosh(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``cosh`` as ``(exp(x) + exp(-x)) / 2``: TVM 0.27's LLVM code generation has no
    vectorized ``tirx.cosh`` (and no float16 one), and the sum loses no precision."""
    return _exp_half(args[0], relax.op.add)


def sinh(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``sinh`` without ``tirx.sinh`` (see :func:`cosh`): ``2t / (1 - t^2)`` with
    ``t = tanh(x / 2)`` where ``|x| < 1`` (no cancellation near 0), else
    ``(exp(x) - exp(-x)) / 2``."""
    x = args[0]
    dtype = x.ty.dtype
    t = bb.emit(relax.op.tanh(relax.op.multiply(x, relax.const(0.5, dtype))))
    one = relax.const(1.0, dtype)
    small = relax.op.divide(relax.op.add(t, t), relax.op.subtract(one, relax.op.multiply(t, t)))
    near_zero = relax.op.less(relax.op.abs(x), one)
    return relax.op.where(near_zero, small, _exp_half(x, relax.op.subtract))


def one_hot(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``one_hot``, its on/off values in ``dtype``."""
    dtype = attrs.dtype
    on = relax.prim_value(tirx.const(attrs.on_value, dtype))
    off = relax.prim_value(tirx.const(attrs.off_value, dtype))
    return relax.op.one_hot(args[0], on, off, int(attrs.depth), int(attrs.axis))


def arange(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``arange(start, stop=None, step=None)``: with no stop, ``start`` is the stop."""
    start, stop, step = attrs.start, attrs.stop, attrs.step
    if stop is None:
        start, stop = 0, start
    return relax.op.arange(start, stop, 1 if step is None else step, attrs.dtype)


def gather_nd(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``gather_nd``: Relay puts the index tuple first, Relax last."""
    data, indices = args
    # Relay indexes with indices[:, y...] (the index tuple first); Relax, like ONNX, with
    # indices[y..., :] (the index tuple last).
    rank = len(static_shape(indices))
    if rank > 1:
        indices = bb.emit(relax.op.permute_dims(indices, [*range(1, rank), 0]))
    if indices.ty.dtype != "int64":  # Relax's gather_nd takes int64 indices only
        indices = bb.emit(relax.op.astype(indices, "int64"))
    return relax.op.gather_nd(data, indices, int(attrs.batch_dims))


def reshape_like(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``reshape_like`` (whole shapes only): ``reshape`` to the other's shape."""
    return relax.op.reshape(args[0], static_shape(args[1]))


def layout_transform(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``layout_transform``: a permutation between plain layouts (``NCHW`` to ``NHWC``);
    ``relax.op.layout_transform`` on the index map of TVM's bijective layout where one is
    blocked (``NCHW`` to ``NCHW16c``, ``OIHW`` to ``OIHW4i4o``, and back)."""
    src, dst = str(attrs.src_layout), str(attrs.dst_layout)
    if src.isalpha() and src.isupper() and sorted(src) == sorted(dst):
        return relax.op.permute_dims(args[0], [src.index(c) for c in dst])
    layout = tvm.s_tir.sbijective_layout(src, dst)
    index_map = tirx.IndexMap.from_func(
        lambda *index: list(layout.forward_index(list(index))), ndim=len(static_shape(args[0]))
    )
    return relax.op.layout_transform(args[0], index_map)


def einsum(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``einsum`` of a tuple of tensors."""
    return relax.op.einsum(args[0], attrs.equation)
