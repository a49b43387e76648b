"""Emit functions of the rows that Relax has no op for: TOPI computes through ``call_te``.

Where TVM 0.27's Relax lacks a Relay op (``image.resize1d``, ``nn.deformable_conv2d``,
``searchsorted``...), TOPI still has its compute: :func:`topi_call` emits it as a
``call_tir`` of the TE function, the way ``relax.BlockBuilder.call_te`` does for hand-written
code. The rest of this module are the conversions of the level-6/10 and vision rows that are
compositions of Relax ops (``shape_of`` of a static shape, ``slice_like``, ``reverse_reshape``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tvm import relax, te, tirx, topi

from compile_engine_compat.relay._impl.convert import (
    normalized_axes,
    reshape_shape,
    static_shape,
    unset_to_none,
)
from compile_engine_compat.relay._impl.registry import Emit, UnsupportedRelayError
from compile_engine_compat.relay.expr import Attrs

__all__ = [
    "adaptive_max_pool",
    "adv_index",
    "broadcast_to_like",
    "correlation",
    "crop_and_resize",
    "deformable_conv2d",
    "dilation2d",
    "lrn",
    "ndarray_size",
    "non_max_suppression",
    "relax_scalar",
    "resize1d",
    "reverse_reshape",
    "scatter_elements",
    "scatter_nd",
    "searchsorted",
    "segment_sum",
    "shape_of",
    "slice_like",
    "sparse_to_dense",
    "stft",
    "strided_set",
    "te_reduce",
    "topi_call",
    "trilu",
    "yolo_reorg",
]


def topi_call(name: str, compute: Callable[[Attrs, list[Any]], Any]) -> Emit:
    """Emit ``compute(attrs, te_tensors)`` as one ``call_tir`` named ``name``.

    Parameters
    ----------
    name : str
        The PrimFunc's name hint (the Relay op's short name).
    compute : callable
        ``compute(attrs, te_inputs) -> te.Tensor`` (or a list of them), usually a TOPI call.
    """

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        def fn(*tensors: Any) -> Any:
            return compute(attrs, list(tensors))

        fn.__name__ = name
        return bb.call_te(fn, *args, primfunc_name_hint=name)

    return emit


def _roi(attrs: Attrs, size: int) -> tuple[float, ...]:
    """Relay's ``roi`` default: zeros (only read by ``tf_crop_and_resize``)."""
    return (0.0,) * size if attrs.roi is None else tuple(float(r) for r in attrs.roi)


resize1d = topi_call(
    "resize1d",
    lambda a, t: topi.image.resize1d(
        t[0],
        _roi(a, 2),
        [int(s) for s in a.size],
        a.layout,
        a.method,
        a.coordinate_transformation_mode,
        a.rounding_method,
        float(a.cubic_alpha),
        int(a.cubic_exclude),
        float(a.extrapolation_value),
        unset_to_none(a.out_dtype),
    ),
)


def resize3d(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``image.resize3d``: Relax's, with Relay's ``roi`` default."""
    return relax.op.image.resize3d(
        args[0],
        tuple(int(s) for s in attrs.size),
        roi=_roi(attrs, 6),
        layout=attrs.layout,
        method=attrs.method,
        coordinate_transformation_mode=attrs.coordinate_transformation_mode,
        rounding_method=attrs.rounding_method,
        cubic_alpha=float(attrs.cubic_alpha),
        cubic_exclude=int(attrs.cubic_exclude),
        extrapolation_value=float(attrs.extrapolation_value),
        out_dtype=unset_to_none(attrs.out_dtype),
    )


crop_and_resize = topi_call(
    "crop_and_resize",
    lambda a, t: topi.image.crop_and_resize(
        t[0],
        t[1],
        t[2],
        [int(s) for s in a.crop_size],
        a.layout,
        a.method,
        float(a.extrapolation_value),
        unset_to_none(a.out_dtype),
    ),
)


def _dilation2d(attrs: Attrs, t: list[Any]) -> Any:
    layouts = {
        ("NCHW", "IHW"): topi.image.dilation2d_nchw,
        ("NHWC", "HWI"): topi.image.dilation2d_nhwc,
    }
    fn = layouts.get((attrs.data_layout, attrs.kernel_layout))
    if fn is None:
        raise UnsupportedRelayError(
            f"relay.image.dilation2d(data_layout={attrs.data_layout!r}, kernel_layout="
            f"{attrs.kernel_layout!r}): only NCHW/IHW and NHWC/HWI have a TOPI compute"
        )
    return fn(
        t[0],
        t[1],
        list(attrs.strides),
        list(attrs.padding),
        list(attrs.dilations),
        unset_to_none(attrs.out_dtype) or t[0].dtype,
    )


dilation2d = topi_call("dilation2d", _dilation2d)


def _deformable_conv2d(attrs: Attrs, t: list[Any]) -> Any:
    computes = {
        ("NCHW", "OIHW"): topi.nn.deformable_conv2d_nchw,
        ("NHWC", "HWIO"): topi.nn.deformable_conv2d_nhwc,
    }
    fn = computes.get((attrs.data_layout, attrs.kernel_layout))
    if fn is None or attrs.out_layout not in ("", attrs.data_layout):
        raise UnsupportedRelayError(
            f"relay.nn.deformable_conv2d(data_layout={attrs.data_layout!r}, kernel_layout="
            f"{attrs.kernel_layout!r}, out_layout={attrs.out_layout!r}): only NCHW/OIHW and "
            "NHWC/HWIO have a TOPI compute"
        )
    return fn(
        t[0],
        t[1],
        t[2],
        list(attrs.strides),
        list(attrs.padding),
        list(attrs.dilation),
        int(attrs.deformable_groups),
        int(attrs.groups),
        unset_to_none(attrs.out_dtype) or t[0].dtype,
    )


deformable_conv2d = topi_call("deformable_conv2d", _deformable_conv2d)


def _lrn(attrs: Attrs, t: list[Any]) -> Any:
    """``nn.lrn``: TOPI's for odd sizes; an even size sums the squares over the
    ``size // 2`` neighbours on each side (TOPI's window would be lopsided, and TOPI refuses it:
    TVM 0.19 inferred the type and failed at the build), as ``topi.testing.lrn_python`` does."""
    data = t[0]
    size, axis = int(attrs.size), int(attrs.axis) % len(data.shape)
    alpha, beta, bias = float(attrs.alpha), float(attrs.beta), float(attrs.bias)
    if size % 2:
        return topi.nn.lrn(data, size, axis, alpha, beta, bias)
    radius = size // 2
    before = [radius if i == axis else 0 for i in range(len(data.shape))]
    padded = topi.nn.pad(data, before, before)
    window = te.reduce_axis((0, 2 * radius + 1), name="window")

    def squares(*index: Any) -> Any:
        at = [i + window if dim == axis else i for dim, i in enumerate(index)]
        return te.sum(padded[tuple(at)] * padded[tuple(at)], axis=window)

    sums = te.compute(data.shape, squares, name="lrn_squares")
    dtype = data.dtype

    def const(value: float) -> Any:
        return tirx.const(value, dtype)

    scale = te.compute(
        data.shape,
        lambda *i: tirx.power(const(bias) + const(alpha) * sums[i] / const(size), const(beta)),
        name="lrn_scale",
    )
    return topi.divide(data, scale)


lrn = topi_call("lrn", _lrn)


def _strided_set(attrs: Attrs, t: list[Any]) -> Any:
    """``strided_set``: TOPI's rule, in the data's int64 index type.

    ``topi.strided_set`` mixes its int32 ``begin``/``end``/``strides`` with the shape, which is
    int64 in Relax, and TIR refuses the mix; the same selection, with the indices cast.
    """
    from tvm.topi.utils import make_idx, within_index

    data, value, begin, end, strides = t
    one, zero = tirx.const(1, "int64"), tirx.const(0, "int64")

    def entry(tensor: Any, i: int, default: Any) -> Any:
        return tirx.if_then_else(tensor.shape[0] > i, tirx.Cast("int64", tensor[i]), default)

    dims = [tirx.Cast("int64", d) for d in data.shape]
    step = [entry(strides, i, one) for i in range(len(dims))]
    first = [entry(begin, i, tirx.Select(step[i] > 0, zero, dims[i])) for i in range(len(dims))]
    last = [
        entry(end, i, tirx.Select(step[i] > 0, dims[i] + 1, -(dims[i] + 1)))
        for i in range(len(dims))
    ]
    first = [tirx.if_then_else(b < 0, b + d, b) for b, d in zip(first, dims)]
    last = [tirx.if_then_else(e < 0, e + d, e) for e, d in zip(last, dims)]

    def select(*index: Any) -> Any:
        inside = [within_index(b, e, s, i) for b, e, s, i in zip(first, last, step, index)]
        source = [make_idx(b, e, s, d, i) for b, e, s, d, i in zip(first, last, step, dims, index)]
        return tirx.if_then_else(tirx.all(*inside), value(*source), data(*index))

    return te.compute(data.shape, select, name="strided_set")


strided_set = topi_call("strided_set", _strided_set)


#: Relay's ``scatter_elements`` reductions: ``combine(old, update) -> new``.
SCATTER_REDUCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    "update": lambda old, new: new,
    "add": lambda old, new: old + new,
    "mul": lambda old, new: old * new,
    "mean": lambda old, new: (old + new) / 2,
    "min": tirx.min,
    "max": tirx.max,
}


def _nested_loops(extents: list[Any]) -> Any:
    """Enter one serial loop per extent (innermost last); the loop variables and the frames."""
    from tvm.script.ir_builder import tirx as T

    frames = [T.serial(0, extent) for extent in extents]
    return [frame.__enter__() for frame in frames], frames


def _scatter_elements_loops(data: Any, indices: Any, updates: Any, attrs: Attrs) -> Any:
    """``scatter_elements`` as two loop nests, one loop per axis: copy, then scatter in order.

    TOPI's kernel flattens the indices into one loop and recovers each position with ``//`` and
    ``%`` by the shape; on symbolic shapes of rank 4 and up, TVM 0.27's simplifier spends minutes
    on those expressions (it did not finish ``(?, ?, ?, ?)`` in 5 minutes). One loop per axis
    needs no division, and keeps the sequential order (the last duplicate index wins).
    """
    from tvm.script.ir_builder import IRBuilder
    from tvm.script.ir_builder import tirx as T

    axis = int(attrs.axis) % len(data.shape)
    combine = SCATTER_REDUCTIONS[str(attrs.reduction)]

    def body(ins: Any, outs: Any) -> Any:
        src, index, update = (T.buffer_proxy(b) for b in ins)
        out = T.buffer_proxy(outs[0])
        with IRBuilder() as ib:
            with T.seq_scope():
                position, frames = _nested_loops(list(data.shape))
                out[tuple(position)] = src[tuple(position)]
                for frame in reversed(frames):
                    frame.__exit__(None, None, None)
                position, frames = _nested_loops(list(indices.shape))
                k = tirx.Cast("int64", index[tuple(position)])
                target = list(position)
                target[axis] = tirx.if_then_else(k < 0, k + data.shape[axis], k)
                out[tuple(target)] = combine(out[tuple(target)], update[tuple(position)])
                for frame in reversed(frames):
                    frame.__exit__(None, None, None)
        return ib.get()

    return te.extern(
        [data.shape], [data, indices, updates], body, dtype=[data.dtype], name="scatter_elements"
    )


def scatter_elements(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``scatter_elements``: ``relax.scatter_elements`` on static shapes; on symbolic ones the
    loop-per-axis kernel of :func:`_scatter_elements_loops` (TOPI's does not compile in time)."""
    if attrs.reduction not in SCATTER_REDUCTIONS:
        raise UnsupportedRelayError(
            f"scatter_elements reduction {attrs.reduction!r} is not one of Relay's "
            f"{sorted(SCATTER_REDUCTIONS)}"
        )
    if all(isinstance(d, int) for a in args for d in static_shape(a)):
        return relax.op.scatter_elements(*args, axis=attrs.axis, reduction=attrs.reduction)
    kernel = topi_call(
        "scatter_elements", lambda a, t: _scatter_elements_loops(t[0], t[1], t[2], a)
    )
    return kernel(bb, args, attrs)


def _stft(attrs: Attrs, t: list[Any]) -> Any:
    """``stft``: Relay's short-time Fourier transform, ``(batch, rows, frames, 2)``.

    TOPI's arithmetic, which Relay ran (the window's first ``win_length`` samples from the
    frame's start, angles over ``win_length``), as a TE reduction: TOPI's kernel vectorizes
    the frame loop, which fails to build when the frame count is symbolic. ``[..., 0]`` is the
    real part, ``[..., 1]`` the imaginary one.
    """
    data, window = t
    n_fft, hop, width = int(attrs.n_fft), int(attrs.hop_length), int(attrs.win_length)
    rows = n_fft // 2 + 1 if attrs.onesided else n_fft
    frames = (data.shape[-1] - n_fft) // hop + 1
    dtype = data.dtype
    scale = 1.0 / float(np.sqrt(n_fft)) if attrs.normalized else 1.0
    k = te.reduce_axis((0, width), name="k")

    def term(b: Any, r: Any, m: Any, part: Any) -> Any:
        angle = tirx.const(2 * np.pi / width, dtype) * tirx.Cast(dtype, r) * tirx.Cast(dtype, k)
        wave = tirx.Select(part == 0, tirx.cos(angle), -tirx.sin(angle))
        sample = data[b, m * hop + k]
        return te.sum(tirx.Cast(dtype, window[k]) * sample * wave * tirx.const(scale, dtype), k)

    return te.compute((data.shape[0], rows, frames, 2), term, name="stft")


stft = topi_call("stft", _stft)


def segment_sum(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``segment_sum``: rows of ``data`` added into row ``segment_ids[i]`` of a zero tensor.

    Relay's composition (a ``scatter_elements`` add into zeros); without ``num_segments`` the
    row count is ``max(segment_ids) + 1``, known only at run time, which Relax carries as a
    shape variable (``tensor_to_shape`` and a ``match_cast``).
    """
    data, ids = args
    shape = static_shape(data)
    count = attrs.num_segments
    if count is None:
        top = bb.emit(relax.op.max(relax.op.astype(ids, "int64"), keepdims=True))
        size = bb.emit(relax.op.tensor_to_shape(relax.op.add(top, relax.const(1, "int64"))))
        count = tirx.Var("num_segments", "int64")
        bb.match_cast(size, relax.ShapeType([count]))
    elif not isinstance(count, int | np.integer):
        raise UnsupportedRelayError(
            "segment_sum takes num_segments as an int (or None: max(segment_ids) + 1); for a "
            "tensor, read it on the host first"
        )
    zeros = bb.emit(relax.op.zeros(relax.ShapeExpr([count, *shape[1:]]), data.ty.dtype))
    column = relax.op.reshape(ids, [-1] + [1] * (len(shape) - 1))
    # One index per element of the rows that segment_ids covers (the first len(ids) rows).
    rows = relax.ShapeExpr([static_shape(ids)[0], *shape[1:]])
    index = bb.emit(relax.op.broadcast_to(column, rows))
    add = Attrs("relay.attrs.ScatterElementsAttrs", {"axis": 0, "reduction": "add"})
    kernel = topi_call("segment_sum", lambda a, t: _scatter_elements_loops(t[0], t[1], t[2], add))
    return kernel(bb, [zeros, index, data], attrs)


def _yolo_reorg(attrs: Attrs, t: list[Any]) -> Any:
    """``vision.yolo_reorg``: darknet's reorg, ``(b, c, h, w) -> (b, c * s * s, h / s, w / s)``.

    TVM 0.27 dropped TOPI's kernel; this is its gather (the input read as
    ``(b, c / s**2, h * s, w * s)``, as ``tvm.topi.testing.reorg_python`` spells it), then the
    reshape.
    """
    data = t[0]
    s = int(attrs.stride)
    batch, channels, height, width = data.shape
    groups = channels // (s * s)
    flat = topi.reshape(data, [batch * channels * height * width])

    def gather(b: Any, k: Any, j: Any, i: Any) -> Any:
        offset = k // groups
        column = i * s + offset % s
        row = j * s + offset // s
        return flat[column + width * s * (row + height * s * (k % groups + groups * b))]

    spread = te.compute(data.shape, gather, name="reorg")
    return topi.reshape(spread, [batch, channels * (s * s), height // s, width // s])


yolo_reorg = topi_call("yolo_reorg", _yolo_reorg)


def sparse_to_dense(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``sparse_to_dense``: TOPI's, the default value in the values' dtype (Relay's rule)."""
    indices, values, default = args
    default = bb.emit(relax.op.astype(default, values.ty.dtype))
    if any(isinstance(d, tirx.Var) for d in attrs.output_shape):
        # dyn.sparse_to_dense: the shape's variables go to the kernel with the tensors.
        return bb.call_te(
            lambda i, v, d, *dims: topi.sparse_to_dense(i, list(dims), v, d),
            indices,
            values,
            default,
            *attrs.output_shape,
            primfunc_name_hint="sparse_to_dense",
        )
    shape = [int(d) for d in attrs.output_shape]
    return bb.call_te(
        lambda i, v, d: topi.sparse_to_dense(i, shape, v, d),
        indices,
        values,
        default,
        primfunc_name_hint="sparse_to_dense",
    )


def adv_index(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``adv_index``: NumPy's ``data[tuple(indices)]`` (TOPI's), the inputs one tuple."""
    inputs = args[0].fields if isinstance(args[0], relax.Tuple) else [args[0]]
    return bb.call_te(
        lambda data, *indices: topi.adv_index(data, list(indices)),
        *inputs,
        primfunc_name_hint="adv_index",
    )


def _correlation(attrs: Attrs, t: list[Any]) -> Any:
    """``nn.correlation`` (FlowNet's), TOPI's NCHW compute; ``padding`` one int, as Relay's."""
    padding = attrs.padding
    pad = int(padding) if isinstance(padding, int | np.integer) else int(padding[0])
    return topi.nn.correlation_nchw(
        t[0],
        t[1],
        int(attrs.kernel_size),
        int(attrs.max_displacement),
        int(attrs.stride1),
        int(attrs.stride2),
        pad,
        bool(attrs.is_multiply),
    )


correlation = topi_call("correlation", _correlation)


def te_reduce(name: str) -> Emit:
    """``all``/``any``: TOPI's reductions, with Relay's ``exclude``."""
    fn = getattr(topi, name)

    def compute(attrs: Attrs, t: list[Any]) -> Any:
        ndim = len(t[0].shape)
        axes = None if attrs.axis is None else [a % ndim for a in _as_list(attrs.axis)]
        if attrs.exclude:
            axes = [a for a in range(ndim) if a not in (axes or [])]
        return fn(t[0], axes, bool(attrs.keepdims))

    return topi_call(name, compute)


def _as_list(value: Any) -> list[int]:
    return [int(value)] if isinstance(value, int | np.integer) else [int(v) for v in value]


def shape_of(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``shape_of``: Relay's is a tensor of ``dtype`` (a constant for a static shape)."""
    shape = static_shape(args[0])
    if all(isinstance(d, int) for d in shape):
        return relax.const(np.array(shape, dtype=attrs.dtype), attrs.dtype)
    tensor = bb.emit(relax.op.shape_to_tensor(relax.op.shape_of(args[0])))
    return relax.op.astype(tensor, attrs.dtype)


def ndarray_size(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``ndarray_size``: the element count, a 0-d tensor of ``dtype`` (static shapes)."""
    shape = static_shape(args[0])
    if not all(isinstance(d, int) for d in shape):
        raise UnsupportedRelayError(
            "relay.ndarray_size of a dynamic shape: use relax.op.shape_of and multiply"
        )
    return relax.const(np.array(int(np.prod(shape)), dtype=attrs.dtype), attrs.dtype)


def broadcast_to_like(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``broadcast_to_like``: ``broadcast_to`` the other's (static) shape."""
    return relax.op.broadcast_to(args[0], static_shape(args[1]))


def slice_like(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``slice_like``: slice ``data`` from 0 to ``shape_like``'s extent on ``axes`` (all: None)."""
    like = static_shape(args[1])
    axes = normalized_axes(args[1], attrs.axes)
    if axes is None:
        axes = list(range(min(len(like), len(static_shape(args[0])))))
    # Relay's type is shape_like's extents on those axes: the slice is in bounds by contract
    # (unprovable on a symbolic data shape without saying so).
    return relax.op.strided_slice(
        args[0], axes, [0] * len(axes), [like[a] for a in axes], assume_inbound=True
    )


def reverse_reshape(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``reverse_reshape``: Relay's shape codes, read from the right."""
    codes = _as_list(attrs.newshape)
    shape = static_shape(args[0])
    if -4 in codes:
        raise UnsupportedRelayError("relay.reverse_reshape with code -4: use relay.reshape")
    out = reshape_shape(shape[::-1], codes[::-1], False)[::-1]
    return relax.op.reshape(args[0], out)


def non_max_suppression(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``vision.non_max_suppression``: Relax's, its thresholds given as attributes.

    Without ``return_indices``, TVM 0.19 never read ``indices`` (any tensor was taken); Relax
    checks it is ``(batch, anchors)``: a tensor of another shape is replaced by zeros then.
    """
    indices = args[2]
    batch_anchors = static_shape(args[0])[:2]
    static = all(isinstance(d, int) for d in batch_anchors)
    if static and not bool(attrs.return_indices) and static_shape(indices) != batch_anchors:
        indices = relax.const(np.zeros(batch_anchors, "int32"))
    return relax.op.vision.non_max_suppression(
        args[0],
        args[1],
        indices,
        max_output_size=int(attrs.max_output_size),
        iou_threshold=float(attrs.iou_threshold),
        force_suppress=bool(attrs.force_suppress),
        top_k=int(attrs.top_k),
        coord_start=int(attrs.coord_start),
        score_index=int(attrs.score_index),
        id_index=int(attrs.id_index),
        return_indices=bool(attrs.return_indices),
        invalid_to_bottom=bool(attrs.invalid_to_bottom),
    )


def relax_scalar(value: Any, dtype: str) -> Any:
    """A Relay scalar attribute as the 0-d Relax constant a Relax op takes as an input."""
    return relax.const(value, dtype)


def _searchsorted(attrs: Attrs, t: list[Any]) -> Any:
    # TOPI's searchsorted is an extern (ir_builder) kernel, which the shim's module pipeline
    # cannot schedule; as a count it is a plain reduction: the position of v in a sorted row is
    # the number of entries below it (left), or not above it (right).
    seq, values = t
    width = seq.shape[-1]
    j = te.reduce_axis((0, width), "j")

    def count(*idx: Any) -> Any:
        row = [*idx[: len(seq.shape) - 1], j] if len(seq.shape) > 1 else [j]
        below = seq[tuple(row)] <= values[idx] if attrs.right else seq[tuple(row)] < values[idx]
        return te.sum(tirx.Cast(attrs.dtype, below), axis=j)

    return te.compute(values.shape, count, name="searchsorted")


searchsorted = topi_call("searchsorted", _searchsorted)


def scatter_nd(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``scatter_nd``: Relay puts the index tuple first, Relax (as ONNX) last."""
    data, indices, updates = args
    rank = len(static_shape(indices))
    if rank > 1:
        indices = bb.emit(relax.op.permute_dims(indices, [*range(1, rank), 0]))
    if indices.ty.dtype != "int64":
        indices = bb.emit(relax.op.astype(indices, "int64"))
    return relax.op.scatter_nd(data, indices, updates, attrs.mode)


def trilu(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``trilu(data, k, upper)``: Relax's ``triu``/``tril``."""
    fn = relax.op.triu if attrs.upper else relax.op.tril
    return fn(args[0], int(attrs.k))


def adaptive_max_pool(nd: int) -> Emit:
    """``nn.adaptive_max_pool{1,2,3}d``: TOPI's adaptive pool; a None size keeps the input's."""
    compute = {1: topi.nn.adaptive_pool1d, 2: topi.nn.adaptive_pool, 3: topi.nn.adaptive_pool3d}[nd]

    def pool(attrs: Attrs, t: list[Any]) -> Any:
        spatial = [t[0].shape[attrs.layout.index(c)] for c in "DHW"[3 - nd :]]
        size = attrs.output_size
        sizes = [size] * nd if size is None or isinstance(size, int | np.integer) else list(size)
        out = [dim if s is None else int(s) for s, dim in zip(sizes, spatial)]
        return compute(t[0], out, "max", attrs.layout)

    return topi_call(f"adaptive_max_pool{nd}d", pool)
