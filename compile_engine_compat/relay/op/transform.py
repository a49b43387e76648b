"""``relay.op.transform``: Relay's shape and data movement ops, as rows of the op table.

Reshapes, slices, gathers and scatters, casts and fills (``relay.reshape``,
``relay.op.transform.reshape``). Not to be confused with ``relay.transform``, the passes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax, tirx, topi

from compile_engine_compat.relay._impl import convert, convert_te, host_ops, normalize
from compile_engine_compat.relay._impl.registry import (
    REQUIRED,
    OpRow,
    Refusal,
    builders,
    missing_op,
)

from ..expr import Expr, Tuple, TupleWrapper, const

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "reshape",
        ("data",),
        (("newshape", REQUIRED), ("allowzero", False)),
        "relax.reshape",
        convert.reshape,
        "relay.attrs.ReshapeAttrs",
        dynamic=("newshape",),
    ),
    OpRow(
        "transpose",
        ("data",),
        (("axes", None),),
        "relax.permute_dims",
        convert.direct("relax.permute_dims", axes="axes"),
        "relay.attrs.TransposeAttrs",
        normalize={"axes": normalize.int_list},
    ),
    OpRow(
        "squeeze",
        ("data",),
        (("axis", None),),
        "relax.squeeze",
        convert.direct("relax.squeeze", axis="axis"),
        "relay.attrs.SqueezeAttrs",
        normalize={"axis": lambda v: [v] if isinstance(v, int) else normalize.int_list(v)},
        dynamic=("axis",),
    ),
    OpRow(
        "expand_dims",
        ("data",),
        (("axis", REQUIRED), ("num_newaxis", 1)),
        "relax.expand_dims",
        convert.expand_dims,
        "relay.attrs.ExpandDimsAttrs",
        dynamic=("axis",),
    ),
    OpRow(
        "stack",
        ("data",),
        (("axis", REQUIRED),),
        "relax.stack",
        convert.direct("relax.stack", axis="axis"),
        "relay.attrs.StackAttrs",
        tuple_input=True,
    ),
    OpRow(
        "split",
        ("data",),
        (("indices_or_sections", REQUIRED), ("axis", 0)),
        "relax.split",
        convert.split,
        "relay.attrs.SplitAttrs",
        outputs=convert.split_outputs,
    ),
    OpRow(
        "take",
        ("data", "indices"),
        (("axis", None), ("batch_dims", 0), ("mode", "clip")),
        "relax.take",
        convert.take,
        "relay.attrs.TakeAttrs",
        refusals=(
            Refusal("batch_dims", lambda v: v == 0, "use relax.op.gather_nd with batch_dims"),
            Refusal("mode", lambda v: v in ("clip", "wrap", "fast"), "use clip or wrap"),
        ),
    ),
    OpRow(
        "strided_slice",
        ("data",),
        (
            ("begin", REQUIRED),
            ("end", REQUIRED),
            ("strides", None),
            ("axes", None),
            ("slice_mode", "end"),
        ),
        "relax.strided_slice",
        convert.strided_slice,
        "relay.attrs.StridedSliceAttrs",
        normalize={
            "begin": normalize.static_ints("begin"),
            "end": normalize.static_ints("end"),
            "strides": normalize.static_ints("strides"),
            "axes": normalize.int_list,
        },
        dynamic=("begin", "end", "strides"),
    ),
    OpRow("where", ("condition", "x", "y"), (), "relax.where", convert.where),
    OpRow(
        "cast",
        ("data",),
        (("dtype", REQUIRED),),
        "relax.astype",
        convert.direct("relax.astype", dtype="dtype"),
        "relay.attrs.CastAttrs",
        normalize={"dtype": normalize.dtype},
    ),
    OpRow(
        "full",
        ("fill_value",),
        (("shape", ()), ("dtype", "")),
        "relax.full",
        convert.full,
        "relay.attrs.InitOpAttrs",
        normalize={"shape": normalize.static_ints("shape"), "dtype": normalize.dtype},
        dynamic=("shape",),
    ),
    OpRow(
        "full_like",
        ("data", "fill_value"),
        (),
        "relax.full_like",
        convert.direct("relax.full_like"),
    ),
    OpRow(
        "broadcast_to",
        ("data",),
        (("shape", REQUIRED),),
        "relax.broadcast_to",
        convert.direct("relax.broadcast_to", shape="shape"),
        "relay.attrs.InitOpAttrs",
        normalize={"shape": normalize.static_ints("shape")},
        dynamic=("shape",),
    ),
    OpRow(
        "tile",
        ("data",),
        (("reps", REQUIRED),),
        "relax.tile",
        convert.direct("relax.tile", repeats="reps"),
        "relay.attrs.TileAttrs",
        normalize={"reps": normalize.static_ints("reps")},
        dynamic=("reps",),
    ),
    OpRow(
        "repeat",
        ("data",),
        (("repeats", REQUIRED), ("axis", REQUIRED)),
        "relax.repeat",
        convert.direct("relax.repeat", repeats="repeats", axis="axis"),
        "relay.attrs.RepeatAttrs",
    ),
    OpRow(
        "reverse",
        ("data",),
        (("axis", REQUIRED),),
        "relax.flip",
        convert.direct("relax.flip", axis="axis"),
        "relay.attrs.ReverseAttrs",
    ),
    *(
        OpRow(
            n,
            ("data",),
            (("axis", None), ("dtype", None), ("exclusive", None)),
            f"relax.{n}",
            convert.direct(
                f"relax.{n}",
                axis="axis",
                dtype=lambda a, _: convert.unset_to_none(a.dtype),
                exclusive=lambda a, _: bool(a.exclusive),
            ),
            "relay.attrs.ScanopAttrs",
        )
        for n in ("cumsum", "cumprod")
    ),
    OpRow(
        "gather",
        ("data", "indices"),
        (("axis", REQUIRED),),
        "relax.gather_elements",
        convert.direct("relax.gather_elements", axis="axis"),
        "relay.attrs.GatherAttrs",
        order=("data", "axis", "indices"),
    ),
    OpRow(
        "gather_nd",
        ("data", "indices"),
        (("batch_dims", 0), ("index_rank", None)),
        "relax.gather_nd",
        convert.gather_nd,
        "relay.attrs.GatherNDAttrs",
    ),
    OpRow(
        "scatter_elements",
        ("data", "indices", "updates"),
        (("axis", 0), ("reduction", "update")),
        "relax.scatter_elements",
        convert_te.scatter_elements,
        "relay.attrs.ScatterElementsAttrs",
    ),
    OpRow(
        "one_hot",
        ("indices",),
        (
            ("on_value", REQUIRED),
            ("off_value", REQUIRED),
            ("depth", REQUIRED),
            ("axis", REQUIRED),
            ("dtype", REQUIRED),
        ),
        "relax.one_hot",
        convert.one_hot,
        "relay.attrs.OneHotAttrs",
        normalize={
            "on_value": normalize.scalar_value,
            "off_value": normalize.scalar_value,
            "dtype": normalize.dtype,
        },
        dynamic=("on_value", "off_value", "depth"),
    ),
    OpRow(
        "arange",
        (),
        (("start", REQUIRED), ("stop", None), ("step", None), ("dtype", "float32")),
        "relax.arange",
        convert.arange,
        "relay.attrs.ArangeAttrs",
        normalize={
            "start": normalize.scalar_value,
            "stop": normalize.scalar_value,
            "step": normalize.scalar_value,
        },
    ),
    OpRow(
        "reshape_like",
        ("data", "shape_like"),
        (
            ("lhs_begin", 0),
            ("lhs_end", None),
            ("rhs_begin", 0),
            ("rhs_end", None),
        ),
        "relax.reshape",
        convert.reshape_like,
        "relay.attrs.ReshapeLikeAttrs",
        refusals=tuple(
            Refusal(name, normalize.equals(default), "reshape to a static shape with relay.reshape")
            for name, default in (
                ("lhs_begin", 0),
                ("lhs_end", None),
                ("rhs_begin", 0),
                ("rhs_end", None),
            )
        ),
    ),
    OpRow(
        "layout_transform",
        ("data",),
        (("src_layout", REQUIRED), ("dst_layout", REQUIRED)),
        "relax.permute_dims",
        convert.layout_transform,
        "relay.attrs.LayoutTransformAttrs",
    ),
    OpRow(
        "collapse_sum_like",
        ("data", "collapse_type"),
        (),
        "relax.collapse_sum_like",
        convert.direct("relax.collapse_sum_like"),
    ),
    OpRow(
        "collapse_sum_to",
        ("data",),
        (("shape", REQUIRED),),
        "relax.collapse_sum_to",
        convert.direct("relax.collapse_sum_to", shape=lambda a, _: list(a.shape)),
        "relay.attrs.InitOpAttrs",
        normalize={"shape": normalize.static_ints("shape")},
    ),
    OpRow(
        "broadcast_to_like",
        ("data", "broadcast_type"),
        (),
        "relax.broadcast_to",
        convert_te.broadcast_to_like,
    ),
    OpRow(
        "slice_like",
        ("data", "shape_like"),
        (("axes", None),),
        "relax.strided_slice",
        convert_te.slice_like,
        "relay.attrs.SliceLikeAttrs",
        normalize={"axes": normalize.int_list},
    ),
    OpRow(
        "reverse_reshape",
        ("data",),
        (("newshape", REQUIRED),),
        "relax.reshape",
        convert_te.reverse_reshape,
        "relay.attrs.ReshapeAttrs",
    ),
    OpRow(
        "sequence_mask",
        ("data", "valid_length"),
        (("mask_value", 0), ("axis", 0)),
        "topi.sequence_mask",
        convert_te.topi_call(
            "sequence_mask",
            lambda a, t: topi.sequence_mask(t[0], t[1], float(a.mask_value), int(a.axis)),
        ),
        "relay.attrs.SequenceMaskAttrs",
    ),
    OpRow(
        "matrix_set_diag",
        ("data", "diagonal"),
        (("k", 0), ("align", "RIGHT_LEFT")),
        "topi.matrix_set_diag",
        convert_te.topi_call(
            "matrix_set_diag",
            lambda a, t: topi.matrix_set_diag(
                t[0], t[1], a.k if isinstance(a.k, int) else tuple(a.k), a.align
            ),
        ),
        "relay.attrs.MatrixSetDiagAttrs",
    ),
    OpRow(
        "searchsorted",
        ("sorted_sequence", "values"),
        (("right", False), ("dtype", "int32")),
        "(a TE count)",
        convert_te.searchsorted,
        "relay.attrs.SearchSortedAttrs",
        normalize={"dtype": normalize.dtype},
    ),
    OpRow(
        "shape_of",
        ("data",),
        (("dtype", "int32"),),
        "relax.shape_of",
        convert_te.shape_of,
        "relay.attrs.ShapeOfAttrs",
        normalize={"dtype": normalize.dtype},
    ),
    OpRow(
        "ndarray_size",
        ("data",),
        (("dtype", "int32"),),
        "(a constant: the element count)",
        convert_te.ndarray_size,
        "relay.attrs.NdarraySizeAttrs",
        normalize={"dtype": normalize.dtype},
    ),
    OpRow(
        "trilu",
        ("data",),
        (("k", REQUIRED), ("upper", True)),
        "relax.triu",
        convert_te.trilu,
        "relay.attrs.TriluAttrs",
        normalize={"k": normalize.scalar_value},
    ),
    OpRow(
        "unravel_index",
        ("indices", "shape"),
        (),
        "topi.unravel_index",
        convert_te.topi_call("unravel_index", lambda a, t: topi.unravel_index(t[0], t[1])),
    ),
    OpRow(
        "reverse_sequence",
        ("data", "seq_lengths"),
        (("seq_axis", 1), ("batch_axis", 0)),
        "topi.reverse_sequence",
        convert_te.topi_call(
            "reverse_sequence",
            lambda a, t: topi.reverse_sequence(t[0], t[1], int(a.seq_axis), int(a.batch_axis)),
        ),
        "relay.attrs.ReverseSequenceAttrs",
    ),
    OpRow(
        "sparse_reshape",
        ("sparse_indices", "prev_shape", "new_shape"),
        (),
        "topi.sparse_reshape",
        convert.sparse_reshape,
        outputs=lambda attrs: 2,
    ),
    OpRow(
        "meshgrid",
        ("data",),
        (("indexing", "ij"),),
        "relax.meshgrid",
        convert.meshgrid,
        "relay.attrs.MeshgridAttrs",
        tuple_input=True,
    ),
    OpRow(
        "stft",
        ("data", "window"),
        (
            ("n_fft", REQUIRED),
            ("hop_length", REQUIRED),
            ("win_length", REQUIRED),
            ("normalized", False),
            ("onesided", True),
        ),
        "topi.stft",
        convert_te.stft,
        "relay.attrs.StftAttrs",
        order=("data", "n_fft", "hop_length", "win_length", "window", "normalized", "onesided"),
    ),
    OpRow(
        "segment_sum",
        ("data", "segment_ids"),
        (("num_segments", None),),
        "(scatter_elements add into zeros)",
        convert_te.segment_sum,
    ),
    OpRow(
        "sparse_to_dense",
        ("sparse_indices", "sparse_values", "default_value"),
        (("output_shape", REQUIRED),),
        "topi.sparse_to_dense",
        convert_te.sparse_to_dense,
        "relay.attrs.SparseToDenseAttrs",
        order=("sparse_indices", "output_shape", "sparse_values", "default_value"),
        normalize={"output_shape": normalize.static_ints("output_shape")},
        dynamic=("output_shape",),
    ),
    OpRow(
        "sparse_fill_empty_rows",
        ("sparse_indices", "sparse_values", "dense_shape", "default_value"),
        (),
        "(host packed function: the result length depends on the values)",
        host_ops.sparse_fill_empty_rows,
        outputs=lambda _: 3,
    ),
    OpRow(
        "adv_index",
        ("inputs",),
        (),
        "topi.adv_index",
        convert_te.adv_index,
        tuple_input=True,
    ),
    OpRow(
        "sliding_window",
        ("data",),
        (("axis", REQUIRED), ("window_shape", REQUIRED), ("strides", REQUIRED)),
        "topi.sliding_window",
        convert_te.topi_call(
            "sliding_window",
            lambda a, t: topi.sliding_window(
                t[0], int(a.axis), [int(w) for w in a.window_shape], [int(s) for s in a.strides]
            ),
        ),
        "relay.attrs.SlidingWindowAttrs",
    ),
    OpRow(
        "fixed_point_multiply",
        ("data",),
        (("multiplier", REQUIRED), ("shift", REQUIRED)),
        "topi.fixed_point_multiply",
        convert_te.topi_call(
            "fixed_point_multiply",
            lambda a, t: topi.fixed_point_multiply(t[0], int(a.multiplier), int(a.shift)),
        ),
        "relay.attrs.FixedPointMultiplyAttrs",
    ),
    OpRow(
        "reinterpret",
        ("data",),
        (("dtype", REQUIRED),),
        "topi.reinterpret",
        convert_te.topi_call("reinterpret", lambda a, t: topi.reinterpret(t[0], str(a.dtype))),
        "relay.attrs.CastAttrs",
        normalize={"dtype": normalize.dtype},
    ),
    OpRow(
        "strided_set",
        ("data", "v", "begin", "end", "strides"),
        (),
        "topi.strided_set",
        convert_te.strided_set,
    ),
    OpRow(
        "scatter_nd",
        ("data", "indices", "updates"),
        (("mode", "update"),),
        "relax.scatter_nd",
        convert_te.scatter_nd,
        "relay.attrs.ScatterNDAttrs",
    ),
    # The inverse of a permutation is its argsort (in the input's dtype, as Relay's).
    OpRow(
        "invert_permutation",
        ("data",),
        (),
        "relax.argsort",
        lambda bb, args, _: relax.op.argsort(args[0], dtype=str(args[0].ty.dtype)),
    ),
    # (n, ndim) int32 coordinates of the true elements: Relax's nonzero is (ndim, n) int64.
    OpRow("argwhere", ("condition",), (), "relax.nonzero", lambda bb, args, _: _argwhere(bb, args)),
    OpRow(
        "dft",
        ("re_data", "im_data"),
        (("inverse", False),),
        "topi.signal.dft",
        convert_te.topi_call("dft", lambda a, t: topi.signal.dft(t[0], t[1], bool(a.inverse))),
        "relay.attrs.DFTAttrs",
        outputs=lambda a: 2,
    ),
)


def _argwhere(bb: relax.BlockBuilder, args: list[Any]) -> Any:
    ndim = len(convert.static_shape(args[0]))
    found = tirx.Var("num_true", "int64")  # the count, known when it runs
    coordinates = bb.match_cast(
        bb.emit(relax.op.nonzero(args[0])), relax.TensorType((ndim, found), "int64")
    )
    return relax.op.astype(bb.emit(relax.op.permute_dims(coordinates)), "int32")


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
_strided_set = BUILDERS["strided_set"]


def strided_set(data: Expr, v: Expr, begin: Expr, end: Expr, strides: Expr | None = None) -> Any:
    """Relay's ``strided_set``: ``strides`` default to ones (``const([1])``, as Relay's did)."""
    return _strided_set(data, v, begin, end, const([1], "int32") if strides is None else strides)


BUILDERS["strided_set"] = strided_set
_meshgrid = BUILDERS["meshgrid"]


def meshgrid(data: Any, indexing: str = "ij") -> Any:
    """Relay's ``meshgrid``: one grid per input (a ``TupleWrapper`` of ``len(data)``)."""
    return TupleWrapper(_meshgrid(data, indexing), len(data))


BUILDERS["meshgrid"] = meshgrid
_stft = BUILDERS["stft"]


def stft(
    data: Expr,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Expr | None = None,
    normalized: bool = False,
    onesided: bool = True,
) -> Any:
    """Relay's ``stft``: ``hop_length`` defaults to ``n_fft // 4``, ``win_length`` to ``n_fft``
    and ``window`` to ones of ``n_fft``, as Relay's did."""
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    window = const(np.ones([n_fft], "int32")) if window is None else window
    return _stft(data, n_fft, hop_length, win_length, window, normalized, onesided)


BUILDERS["stft"] = stft
_sparse_to_dense = BUILDERS["sparse_to_dense"]


def sparse_to_dense(
    sparse_indices: Expr, output_shape: Any, sparse_values: Expr, default_value: Any = 0
) -> Any:
    """Relay's ``sparse_to_dense``: ``default_value`` a number or a 0-d tensor (0 by default)."""
    return _sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value)


BUILDERS["sparse_to_dense"] = sparse_to_dense
_sparse_fill_empty_rows = BUILDERS["sparse_fill_empty_rows"]


def sparse_fill_empty_rows(
    sparse_indices: Expr, sparse_values: Expr, dense_shape: Expr, default_value: Expr
) -> Tuple:
    """Relay's ``sparse_fill_empty_rows``: a ``relay.Tuple`` (new indices, new values, the
    empty-row indicator), as Relay's returned."""
    parts = _sparse_fill_empty_rows(sparse_indices, sparse_values, dense_shape, default_value)
    return Tuple(list(parts))


BUILDERS["sparse_fill_empty_rows"] = sparse_fill_empty_rows
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)


__getattr__ = missing_op("", __name__)  # an op this family lacks is refused, naming it
