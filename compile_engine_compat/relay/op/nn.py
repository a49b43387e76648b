"""``relay.nn`` (also ``relay.op.nn``): Relay's neural-network ops, as rows of the op table.

Convolutions, pools, dense and matmul, activations, norms, padding and upsampling
(``relay.nn.conv2d``). The ops Relax has no equivalent for are listed in :data:`REFUSED`:
their builders raise, naming what to write instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import tvm
from tvm import relax, te, topi
from tvm.topi.nn import winograd_util

from compile_engine_compat.relay._impl import convert, convert_te, normalize, type_relations
from compile_engine_compat.relay._impl.registry import (
    REQUIRED,
    OpRow,
    Refusal,
    builders,
    missing_op,
)

from .. import expr  # noqa: F401 (re-exported, as TVM 0.19's relay.op.nn did)
from ..expr import Constant, Expr, const  # noqa: F401 (const: re-exported, as above)
from . import tensor, transform


def _convolutions() -> list[OpRow]:
    """``nn.conv1d``-``conv3d`` and ``nn.conv1d_transpose``-``conv3d_transpose``."""
    rows = []
    conv_common = (
        ("groups", 1),
        ("channels", None),
        ("kernel_size", None),
    )
    for nd, data_layout, kernel_layout in (
        (1, "NCW", "OIW"),
        (2, "NCHW", "OIHW"),
        (3, "NCDHW", "OIDHW"),
    ):
        one = (1,) * nd if nd > 1 else 1
        zero = (0,) * nd if nd > 1 else 0
        rows.append(
            OpRow(
                f"nn.conv{nd}d",
                ("data", "weight"),
                (
                    ("strides", one),
                    ("padding", zero),
                    ("dilation", one),
                    *conv_common,
                    ("data_layout", data_layout),
                    ("kernel_layout", kernel_layout),
                    ("out_layout", ""),
                    ("out_dtype", ""),
                ),
                f"relax.nn.conv{nd}d",
                convert.direct(
                    f"relax.nn.conv{nd}d",
                    strides="strides",
                    padding="padding",
                    dilation="dilation",
                    groups="groups",
                    data_layout="data_layout",
                    kernel_layout="kernel_layout",
                    out_layout=lambda a, _: convert.unset_to_none(a.out_layout),
                    out_dtype=lambda a, _: convert.unset_to_none(a.out_dtype),
                ),
                f"relay.attrs.Conv{nd}DAttrs",
                infer_inputs=type_relations.conv_weight(False),
                normalize=normalize.conv_normalize(nd),
            )
        )
    for nd, layout, kernel_layout in (
        (1, "NCW", "IOW"),
        (2, "NCHW", "IOHW"),
        (3, "NCDHW", "IODHW"),
    ):
        rows.append(
            OpRow(
                f"nn.conv{nd}d_transpose",
                ("data", "weight"),
                (
                    ("strides", (1,) * nd),
                    ("padding", (0,) * nd),
                    ("dilation", (1,) * nd),
                    *conv_common,
                    ("data_layout", layout),
                    ("kernel_layout", kernel_layout),
                    ("out_layout", ""),
                    ("output_padding", (0,) * nd),
                    ("out_dtype", ""),
                ),
                f"relax.nn.conv{nd}d_transpose",
                convert.conv_transpose(nd),
                f"relay.attrs.Conv{nd}DTransposeAttrs",
                infer_inputs=type_relations.conv_weight(True),
                normalize={**normalize.conv_normalize(nd), "output_padding": normalize.ntuple(nd)},
            )
        )
    return rows


def _pool_grad(kind: str) -> Callable[[Any, list[Any]], Any]:
    """TOPI's gradient of a 2-D pool, on Relay's attributes."""

    def compute(a: Any, t: list[Any]) -> Any:
        return topi.nn.pool_grad(
            t[0],
            t[1],
            [int(k) for k in a.pool_size],
            [int(s) for s in a.strides],
            [int(p) for p in a.padding],
            kind,
            bool(a.ceil_mode),
            bool(getattr(a, "count_include_pad", False)),
            str(a.layout),
        )

    return compute


def _cross_entropy(bb: Any, args: list[Any], attrs: Any, logits: bool) -> Any:
    """``nn.cross_entropy`` (``logits``: ``nn.cross_entropy_with_logits``)."""
    predictions, targets = args
    log_p = predictions if logits else bb.emit(relax.op.log(predictions))
    total = bb.emit(relax.op.sum(bb.emit(relax.op.multiply(log_p, targets))))
    batch = convert.static_shape(predictions)[0]
    scale = relax.const(-1.0 / int(batch), str(predictions.ty.dtype))
    return relax.op.multiply(total, scale)


def _conv2d_nchwc(a: Any, t: list[Any]) -> Any:
    """TOPI's blocked-layout (``NCHW{c}c`` data, ``OIHW{i}i{o}o`` kernel) convolution."""
    # TOPI asks for a current target while it only defines the compute (the same on every
    # target): a plain host one is given where the program set none.
    current = tvm.target.Target.current(allow_none=True)
    with current if current is not None else tvm.target.Target("llvm"):
        return topi.nn.conv2d_NCHWc(
            t[0],
            t[1],
            [int(v) for v in a.strides],
            [int(v) for v in a.padding],
            [int(v) for v in a.dilation],
            str(a.data_layout),
            str(a.out_layout or a.data_layout),
            a.out_dtype or str(t[0].dtype),
        )


def _depthwise_nchwc(a: Any, t: list[Any]) -> Any:
    """A depthwise convolution (channel multiplier 1) in blocked layouts: data
    ``NCHW{c}c`` (``[N, C/c, H, W, c]``), kernel ``OIHW1i{o}o`` (``[C/o, 1, KH, KW, 1, o]``);
    the output is laid out as the data."""
    data, kernel = t
    top, left, bottom, right = (int(p) for p in a.padding)
    padded = topi.nn.pad(data, [0, 0, top, left, 0], [0, 0, bottom, right, 0])
    (stride_h, stride_w), (dil_h, dil_w) = a.strides, a.dilation
    batch, chunks, height, width, block = (int(d) for d in data.shape)
    out_chunks, _, k_h, k_w, _, out_block = (int(d) for d in kernel.shape)
    if out_chunks * out_block != chunks * block:
        raise ValueError(
            f"a depthwise kernel of {out_chunks * out_block} channels for data of "
            f"{chunks * block} (the channel multiplier must be 1)"
        )
    out_h = (height + top + bottom - (k_h - 1) * dil_h - 1) // stride_h + 1
    out_w = (width + left + right - (k_w - 1) * dil_w - 1) // stride_w + 1
    dtype = a.out_dtype or str(data.dtype)
    ry, rx = te.reduce_axis((0, k_h), name="ky"), te.reduce_axis((0, k_w), name="kx")

    def compute(n: Any, oc: Any, y: Any, x: Any, ob: Any) -> Any:
        channel = oc * out_block + ob
        value = padded[
            n,
            channel // block,
            y * stride_h + ry * dil_h,
            x * stride_w + rx * dil_w,
            channel % block,
        ]
        return te.sum(value.astype(dtype) * kernel[oc, 0, ry, rx, 0, ob].astype(dtype), [ry, rx])

    out_shape = (batch, out_chunks, out_h, out_w, out_block)
    out = te.compute(out_shape, compute, name="depthwise_conv2d_nchwc")
    if out_block == block:
        return out
    return te.compute(  # back to the data's block size
        (batch, chunks, out_h, out_w, block),
        lambda n, c, y, x, b: out[
            n, (c * block + b) // out_block, y, x, (c * block + b) % out_block
        ],
        name="depthwise_conv2d_nchwc_relayout",
    )


def _conv2d_backward_weight(a: Any, t: list[Any]) -> Any:
    """The gradient of an NCHW/OIHW convolution's weight: ``grad`` correlated with the padded
    ``data`` over the batch and the output positions."""
    grad, data = t
    top, left, bottom, right = (int(p) for p in a.padding)
    padded = topi.nn.pad(data, [0, 0, top, left], [0, 0, bottom, right])
    (stride_h, stride_w), (dil_h, dil_w) = a.strides, a.dilation
    batch, out_c, out_h, out_w = grad.shape
    dtype = a.out_dtype or str(grad.dtype)
    rn = te.reduce_axis((0, batch), name="n")
    ry, rx = te.reduce_axis((0, out_h), name="y"), te.reduce_axis((0, out_w), name="x")
    return te.compute(
        (out_c, data.shape[1], *(int(k) for k in a.kernel_size)),
        lambda o, i, kh, kw: te.sum(
            grad[rn, o, ry, rx].astype(dtype)
            * padded[rn, i, ry * stride_h + kh * dil_h, rx * stride_w + kw * dil_w].astype(dtype),
            axis=[rn, ry, rx],
        ),
        name="conv2d_backward_weight",
    )


def _dense_pack(data: Any, weight: Any, out_dtype: str) -> Any:
    """``nn.contrib_dense_pack``: ``data @ weight.T`` with the weight packed as ``NC{n}n``
    (``[units // n, in, n]``), as Relay's was."""
    _, in_dim, block = weight.shape
    reduce = te.reduce_axis((0, in_dim), name="k")
    dtype = out_dtype or data.dtype
    return te.compute(
        (data.shape[0], weight.shape[0] * block),
        lambda i, j: te.sum(
            data[i, reduce].astype(dtype) * weight[j // block, reduce, j % block].astype(dtype),
            axis=reduce,
        ),
        name="dense_pack",
    )


def _batch_to_space_nd(data: Any, block_shape: list[int], crops: list[list[int]]) -> Any:
    """``nn.batch_to_space_nd`` as a TE compute of the package's own (TVM 0.27's TOPI one
    crashes): the batch split into ``prod(block_shape)`` blocks, outermost first, each
    interleaved into the spatial axes ``1..M``, then ``crops`` cut from both ends."""
    rank, blocks = len(data.shape), len(block_shape)
    count = 1
    for b in block_shape:
        count *= int(b)
    batch = data.shape[0] // count
    out_shape = [batch]
    for i, b in enumerate(block_shape):
        out_shape.append(data.shape[i + 1] * int(b) - int(crops[i][0]) - int(crops[i][1]))
    out_shape.extend(data.shape[blocks + 1 : rank])

    def element(*index: Any) -> Any:
        block = 0
        spatial = []
        for i, b in enumerate(block_shape):
            position = index[i + 1] + int(crops[i][0])
            block = block * int(b) + position % int(b)
            spatial.append(position // int(b))
        return data[(block * batch + index[0], *spatial, *index[blocks + 1 :])]

    return te.compute(out_shape, element, name="batch_to_space_nd")


def _winograd_weight(kernel: Any, tile_size: int) -> Any:
    """The Winograd transform ``G k G^T`` of an ``OI(D)HW`` kernel, laid out
    ``[alpha] * nd + [O, I]`` as Relay's ``contrib_conv{2,3}d_winograd_weight_transform``
    (TOPI's own passes its dtype object where its memo wants a string: the same matrices,
    asked with the dtype's name)."""
    out_c, in_c, *window = (int(d) for d in kernel.shape)
    if len(set(window)) != 1:
        raise ValueError(f"the Winograd transform needs a cubic kernel window, got {window}")
    _, _, g = winograd_util.winograd_transform_matrices(tile_size, window[0], str(kernel.dtype))
    alpha = tile_size + window[0] - 1
    axes = [te.reduce_axis((0, w), name=f"r{i}") for i, w in enumerate(window)]

    def compute(*index: Any) -> Any:
        *spatial, o, i = index
        value = kernel[(o, i, *axes)]
        for at, axis in zip(spatial, axes, strict=True):
            value = value * g[at][axis]
        return te.sum(value, axis=axes)

    shape = (alpha,) * len(window) + (out_c, in_c)
    return te.compute(shape, compute, name="winograd_weight")


#: Pools keep the input's layout: another ``out_layout`` is refused.
#: The attributes and their normalization of TVM 0.19's NCHWc convolutions (``Conv2DAttrs``).
_NCHWC_CONV_ATTRS = (
    ("strides", (1, 1)),
    ("padding", (0, 0)),
    ("dilation", (1, 1)),
    ("groups", 1),
    ("channels", None),
    ("kernel_size", None),
    ("data_layout", "NCHW8c"),
    ("kernel_layout", "OIHW"),
    ("out_layout", ""),
    ("out_dtype", ""),
)
_NCHWC_CONV_NORMALIZE = {
    "strides": normalize.ntuple(2),
    "padding": normalize.padding(2),
    "dilation": normalize.ntuple(2),
    "out_dtype": normalize.dtype,
}

_SAME_OUT_LAYOUT = Refusal("out_layout", lambda v: v in ("", None), "transpose the result")


def _pools() -> list[OpRow]:
    """The max, average, global and adaptive pools."""
    rows = []
    for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW")):
        pool_attrs = (
            ("pool_size", (1,) * nd),
            ("strides", (1,) * nd),
            ("dilation", (1,) * nd),
            ("padding", (0,) * nd),
            ("layout", layout),
            ("out_layout", ""),
            ("ceil_mode", False),
        )
        norm = {
            "pool_size": normalize.ntuple(nd),
            "strides": normalize.ntuple(nd),
            "dilation": normalize.ntuple(nd),
            "padding": normalize.padding(nd),
        }
        common = {
            "pool_size": "pool_size",
            "strides": "strides",
            "padding": "padding",
            "dilation": "dilation",
            "ceil_mode": "ceil_mode",
            "layout": "layout",
            "out_layout": lambda a, _: convert.unset_to_none(a.out_layout),
        }
        rows.append(
            OpRow(
                f"nn.max_pool{nd}d",
                ("data",),
                pool_attrs,
                f"relax.nn.max_pool{nd}d",
                convert.direct(f"relax.nn.max_pool{nd}d", **common),  # type: ignore[arg-type]
                f"relay.attrs.MaxPool{nd}DAttrs",
                normalize=norm,
                printed=("pool_size",),
            )
        )
        rows.append(
            OpRow(
                f"nn.avg_pool{nd}d",
                ("data",),
                (*pool_attrs, ("count_include_pad", False)),
                f"relax.nn.avg_pool{nd}d",
                convert.direct(
                    f"relax.nn.avg_pool{nd}d",
                    count_include_pad="count_include_pad",
                    **common,  # type: ignore[arg-type]
                ),
                f"relay.attrs.AvgPool{nd}DAttrs",
                normalize=norm,
                printed=("pool_size",),
            )
        )
    for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW")):
        for kind, relax_op in (("max", "relax.max"), ("avg", "relax.mean")):
            rows.append(
                OpRow(
                    f"nn.global_{kind}_pool{nd}d",
                    ("data",),
                    (("layout", layout), ("out_layout", "")),
                    relax_op,
                    convert.global_pool(relax_op),
                    f"relay.attrs.GlobalPool{nd}DAttrs",
                    refusals=(_SAME_OUT_LAYOUT,),
                )
            )
    for kind in ("max", "avg"):
        extra = (("count_include_pad", False),) if kind == "avg" else ()
        rows.append(
            OpRow(
                f"nn.{kind}_pool2d_grad",
                ("out_grad", "data"),
                (
                    ("pool_size", (1, 1)),
                    ("strides", (1, 1)),
                    ("padding", (0, 0)),
                    ("layout", "NCHW"),
                    ("out_layout", ""),
                    ("ceil_mode", False),
                    *extra,
                ),
                "topi.nn.pool_grad",
                convert_te.topi_call(f"{kind}_pool2d_grad", _pool_grad(kind)),
                f"relay.attrs.{kind.capitalize()}Pool2DAttrs",
                normalize={
                    "pool_size": normalize.ntuple(2),
                    "strides": normalize.ntuple(2),
                    "padding": normalize.padding(2),
                },
                refusals=(_SAME_OUT_LAYOUT,),
            )
        )
    for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW")):
        rows.append(
            OpRow(
                f"nn.adaptive_avg_pool{nd}d",
                ("data",),
                (("output_size", None), ("layout", layout), ("out_layout", "")),
                f"relax.nn.adaptive_avg_pool{nd}d",
                convert.direct(
                    f"relax.nn.adaptive_avg_pool{nd}d",
                    output_size="output_size",
                    layout="layout",
                    out_layout=lambda a, _: convert.unset_to_none(a.out_layout),
                ),
                f"relay.attrs.AdaptivePool{nd}DAttrs",
                normalize={"output_size": normalize.ntuple(nd)},
            )
        )
        # Relax has no adaptive max pool: TOPI's compute.
        rows.append(
            OpRow(
                f"nn.adaptive_max_pool{nd}d",
                ("data",),
                (("output_size", None), ("layout", layout), ("out_layout", "")),
                "topi.nn.adaptive_pool",
                convert_te.adaptive_max_pool(nd),
                f"relay.attrs.AdaptivePool{nd}DAttrs",
                refusals=(_SAME_OUT_LAYOUT,),
            )
        )
    return rows


ROWS: tuple[OpRow, ...] = (
    *_convolutions(),
    *_pools(),
    OpRow(
        "nn.dense",
        ("data", "weight"),
        (("units", None), ("out_dtype", "")),
        "relax.matmul",
        convert.dense,
        "relay.attrs.DenseAttrs",
        normalize={"out_dtype": normalize.dtype},
        infer_inputs=type_relations.dense_weight,
    ),
    OpRow(
        "nn.matmul",
        ("tensor_a", "tensor_b"),
        (("units", None), ("out_dtype", ""), ("transpose_a", False), ("transpose_b", False)),
        "relax.matmul",
        convert.matmul,
        "relay.attrs.MatmulAttrs",
        normalize={"out_dtype": normalize.dtype},
        infer_inputs=type_relations.matmul_weight,
    ),
    OpRow(
        "nn.batch_matmul",
        ("tensor_a", "tensor_b"),
        (("out_dtype", ""), ("transpose_a", False), ("transpose_b", True)),
        "relax.matmul",
        convert.batch_matmul,
        "relay.attrs.BatchMatmulAttrs",
        normalize={"out_dtype": normalize.dtype},
    ),
    OpRow(
        "nn.bias_add",
        ("data", "bias"),
        (("axis", 1),),
        "relax.add",
        convert.bias_add,
        "relay.attrs.BiasAddAttrs",
        infer_inputs=type_relations.per_channel,
    ),
    OpRow("nn.relu", ("data",), (), "relax.nn.relu", convert.direct("relax.nn.relu")),
    OpRow(
        "nn.leaky_relu",
        ("data",),
        (("alpha", 0.01),),
        "relax.nn.leakyrelu",
        convert.direct("relax.nn.leakyrelu", alpha="alpha"),
        "relay.attrs.LeakyReluAttrs",
    ),
    OpRow(
        "nn.prelu",
        ("data", "alpha"),
        (("axis", 1),),
        "relax.nn.prelu",
        convert.direct("relax.nn.prelu", axis="axis"),
        "relay.attrs.PReluAttrs",
        infer_inputs=type_relations.per_channel,
    ),
    *(
        OpRow(
            f"nn.{name}",
            ("data",),
            (("axis", -1),),
            f"relax.nn.{relax_name}",
            convert.direct(f"relax.nn.{relax_name}", axis="axis"),
            "relay.attrs.SoftmaxAttrs",
        )
        # Relay's fast_softmax approximated softmax; Relax has the exact op.
        for name, relax_name in (
            ("softmax", "softmax"),
            ("fast_softmax", "softmax"),
            ("log_softmax", "log_softmax"),
        )
    ),
    OpRow(
        "nn.batch_flatten",
        ("data",),
        (),
        "relax.nn.batch_flatten",
        convert.direct("relax.nn.batch_flatten"),
    ),
    OpRow(
        "nn.batch_norm",
        ("data", "gamma", "beta", "moving_mean", "moving_var"),
        (("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
        "relax.nn.batch_norm",
        convert.batch_norm,
        "relay.attrs.BatchNormAttrs",
        infer_inputs=type_relations.per_channel,
        outputs=lambda a: 3,
    ),
    OpRow(
        "nn.layer_norm",
        ("data", "gamma", "beta"),
        (("axis", -1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
        "relax.nn.layer_norm",
        convert.direct(
            "relax.nn.layer_norm",
            axes="axis",
            epsilon="epsilon",
            center="center",
            scale="scale",
        ),
        "relay.attrs.LayerNormAttrs",
        infer_inputs=type_relations.per_channel,
    ),
    OpRow(
        "nn.group_norm",
        ("data", "gamma", "beta"),
        (
            ("num_groups", REQUIRED),
            ("axis", 1),
            ("epsilon", 1e-5),
            ("center", True),
            ("scale", True),
        ),
        "relax.nn.group_norm",
        convert.group_norm,
        "relay.attrs.GroupNormAttrs",
        infer_inputs=type_relations.per_channel,
    ),
    OpRow(
        "nn.instance_norm",
        ("data", "gamma", "beta"),
        (("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
        "relax.nn.instance_norm",
        convert.instance_norm,
        "relay.attrs.InstanceNormAttrs",
        infer_inputs=type_relations.per_channel,
    ),
    OpRow(
        "nn.pad",
        ("data",),
        (("pad_width", REQUIRED), ("pad_value", 0), ("pad_mode", "constant")),
        "relax.nn.pad",
        convert.pad,
        "relay.attrs.PadAttrs",
        normalize={
            "pad_width": normalize.static_value("pad_width"),
            "pad_value": normalize.scalar_value,
        },
        dynamic=("pad_width", "pad_value"),
        refusals=(
            Refusal(
                "pad_mode",
                lambda v: v in ("constant", "reflect", "edge"),
                "Relax pads with constant, reflect or edge",
            ),
        ),
    ),
    OpRow(
        "nn.upsampling",
        ("data",),
        (
            ("scale_h", 1),
            ("scale_w", 1),
            ("layout", "NCHW"),
            ("method", "nearest_neighbor"),
            ("align_corners", False),
        ),
        "relax.image.resize2d",
        convert.upsampling,
        "relay.attrs.UpSamplingAttrs",
        normalize={"scale_h": normalize.scalar_value, "scale_w": normalize.scalar_value},
        dynamic=("scale_h", "scale_w"),
        refusals=(
            Refusal(
                "method",
                lambda v: v in convert.UPSAMPLING_METHODS,
                "use nearest_neighbor, bilinear or bicubic",
            ),
        ),
    ),
    OpRow(
        "nn.dropout",
        ("data",),
        (("rate", 0.5),),
        "(none: the identity at inference)",
        convert.identity,
        "relay.attrs.DropoutAttrs",
    ),
    OpRow(
        "nn.deformable_conv2d",
        ("data", "offset", "weight"),
        (
            ("strides", (1, 1)),
            ("padding", (0, 0)),
            ("dilation", (1, 1)),
            ("deformable_groups", 1),
            ("groups", 1),
            ("channels", None),
            ("kernel_size", None),
            ("data_layout", "NCHW"),
            ("kernel_layout", "OIHW"),
            ("out_layout", ""),
            ("out_dtype", ""),
        ),
        "topi.nn.deformable_conv2d",
        convert_te.deformable_conv2d,
        "relay.attrs.DeformableConv2DAttrs",
        infer_inputs=type_relations.deformable_conv_inputs,
        normalize={
            "strides": normalize.ntuple(2),
            "padding": normalize.padding(2),
            "dilation": normalize.ntuple(2),
            "kernel_size": normalize.ntuple(2),
        },
    ),
    OpRow(
        "nn.nll_loss",
        ("predictions", "targets", "weights"),
        (("reduction", "mean"), ("ignore_index", -100)),
        "relax.nn.nll_loss",
        convert.direct("relax.nn.nll_loss", reduction="reduction", ignore_index="ignore_index"),
        "relay.attrs.NLLLossAttrs",
    ),
    OpRow(
        "nn.space_to_batch_nd",
        ("data",),
        (("block_shape", REQUIRED), ("paddings", REQUIRED), ("pad_value", 0)),
        "topi.nn.space_to_batch_nd",
        convert_te.topi_call(
            "space_to_batch_nd",
            lambda a, t: topi.nn.space_to_batch_nd(
                t[0],
                list(a.block_shape),
                [int(p[0]) for p in a.paddings],
                [int(p[1]) for p in a.paddings],
                float(a.pad_value),
            ),
        ),
        "relay.attrs.SpaceToBatchNDAttrs",
    ),
    OpRow(
        "nn.batch_to_space_nd",
        ("data",),
        (("block_shape", REQUIRED), ("crops", REQUIRED)),
        "te.compute",
        convert_te.topi_call(
            "batch_to_space_nd",
            lambda a, t: _batch_to_space_nd(
                t[0], [int(b) for b in a.block_shape], [[int(c) for c in p] for p in a.crops]
            ),
        ),
        "relay.attrs.BatchToSpaceNDAttrs",
    ),
    OpRow(
        "nn.upsampling3d",
        ("data",),
        (
            ("scale_d", 1),
            ("scale_h", 1),
            ("scale_w", 1),
            ("layout", "NCDHW"),
            ("method", "nearest_neighbor"),
            ("coordinate_transformation_mode", "half_pixel"),
        ),
        "topi.nn.upsampling3d",
        convert_te.topi_call(
            "upsampling3d",
            lambda a, t: topi.nn.upsampling3d(
                t[0],
                float(a.scale_d),
                float(a.scale_h),
                float(a.scale_w),
                str(a.layout),
                str(a.method),
                str(a.coordinate_transformation_mode),
            ),
        ),
        "relay.attrs.UpSampling3DAttrs",
        normalize={f"scale_{x}": normalize.scalar_value for x in "dhw"},
        dynamic=("scale_d", "scale_h", "scale_w"),
    ),
    OpRow(
        "nn.correlation",
        ("data1", "data2"),
        (
            ("kernel_size", 1),
            ("max_displacement", 1),
            ("stride1", 1),
            ("stride2", 1),
            ("padding", 0),
            ("is_multiply", True),
            ("layout", "NCHW"),
        ),
        "topi.nn.correlation_nchw",
        convert_te.correlation,
        "relay.attrs.CorrelationAttrs",
        refusals=(Refusal("layout", lambda v: v == "NCHW", "TOPI's correlation is NCHW"),),
    ),
    OpRow(
        "nn.lrn",
        ("data",),
        (("size", 5), ("axis", 1), ("bias", 2), ("alpha", 0.00001), ("beta", 0.75)),
        "topi.nn.lrn",
        convert_te.lrn,
        "relay.attrs.LRNAttrs",
    ),
    OpRow(
        "nn.l2_normalize",
        ("data",),
        (("eps", REQUIRED), ("axis", None)),
        "relax.sqrt",
        convert.l2_normalize,
        "relay.attrs.L2NormalizeAttrs",
    ),
    *(
        OpRow(
            f"nn.{name}",
            ("data",),
            (("block_size", REQUIRED), ("layout", "NCHW"), *extra),
            f"topi.nn.{name}",
            convert_te.topi_call(name, compute),
            "relay.attrs.SubPixelAttrs",
        )
        for name, extra, compute in (
            (
                "depth_to_space",
                (("mode", "DCR"),),
                lambda a, t: topi.nn.depth_to_space(
                    t[0], int(a.block_size), str(a.layout), str(a.mode)
                ),
            ),
            (
                "space_to_depth",
                (),
                lambda a, t: topi.nn.space_to_depth(t[0], int(a.block_size), str(a.layout)),
            ),
        )
    ),
    OpRow(
        "nn.mirror_pad",
        ("data",),
        (("pad_width", REQUIRED), ("mode", "SYMMETRIC")),
        "topi.nn.mirror_pad",
        convert_te.topi_call(
            "mirror_pad",
            lambda a, t: topi.nn.mirror_pad(
                t[0],
                [int(p[0]) for p in a.pad_width],
                [int(p[1]) for p in a.pad_width],
                str(a.mode),
            ),
        ),
        "relay.attrs.MirrorPadAttrs",
        refusals=(
            Refusal("mode", lambda v: v in ("SYMMETRIC", "REFLECT"), "SYMMETRIC or REFLECT"),
        ),
    ),
    OpRow(
        "nn.dilate",
        ("data",),
        (("strides", REQUIRED), ("dilation_value", 0.0)),
        "topi.nn.dilate",
        convert_te.topi_call(
            "dilate",
            lambda a, t: topi.nn.dilate(t[0], [int(s) for s in a.strides], float(a.dilation_value)),
        ),
        "relay.attrs.DilateAttrs",
    ),
    # Relay's cross entropies: the batch mean of -sum(targets * log(predictions)) (of the
    # predictions themselves for ``cross_entropy_with_logits``, which take log-probabilities).
    *(
        OpRow(
            f"nn.{name}",
            ("predictions", "targets"),
            (),
            "relax.sum",
            functools.partial(_cross_entropy, logits=logits),
        )
        for name, logits in (("cross_entropy", False), ("cross_entropy_with_logits", True))
    ),
    OpRow(
        "nn.bitpack",
        ("data",),
        (
            ("bits", 1),
            ("pack_axis", 1),
            ("bit_axis", 2),
            ("pack_type", "uint32"),
            ("name", "BitPack"),
        ),
        "topi.nn.bitpack",
        convert_te.topi_call(
            "bitpack",
            lambda a, t: topi.nn.bitpack(
                t[0], int(a.bits), int(a.pack_axis), int(a.bit_axis), str(a.pack_type)
            ),
        ),
        "relay.attrs.BitPackAttrs",
    ),
    *(
        OpRow(
            f"nn.contrib_conv{nd}d_winograd_weight_transform",
            ("weight",),
            (("tile_size", REQUIRED),),
            f"topi.nn.conv{nd}d_winograd_weight_transform",
            convert_te.topi_call(
                f"conv{nd}d_winograd_weight_transform",
                lambda a, t: _winograd_weight(t[0], int(a.tile_size)),
            ),
            "relay.attrs.ConvWinogradWeightTransformAttrs",
        )
        for nd in (2, 3)
    ),
    OpRow(
        "nn.bitserial_dense",
        ("data", "weight"),
        (
            ("units", None),
            ("data_bits", 1),
            ("weight_bits", 1),
            ("pack_dtype", "uint32"),
            ("out_dtype", "int16"),
            ("unipolar", True),
        ),
        "topi.nn.bitserial_dense",
        convert_te.topi_call(
            "bitserial_dense",
            lambda a, t: topi.nn.bitserial_dense(
                t[0],
                t[1],
                int(a.data_bits),
                int(a.weight_bits),
                str(a.pack_dtype),
                str(a.out_dtype),
                bool(a.unipolar),
            ),
        ),
        "relay.attrs.BinaryDenseAttrs",
    ),
    OpRow(
        "nn.contrib_conv2d_nchwc",
        ("data", "kernel"),
        _NCHWC_CONV_ATTRS,
        "topi.nn.conv2d_NCHWc",
        convert_te.topi_call("conv2d_nchwc", _conv2d_nchwc),
        "relay.attrs.Conv2DAttrs",
        normalize=dict(_NCHWC_CONV_NORMALIZE),
        refusals=(
            Refusal("groups", lambda v: int(v) == 1, "TOPI's NCHWc convolution has groups=1"),
        ),
    ),
    OpRow(
        "nn.contrib_depthwise_conv2d_nchwc",
        ("data", "kernel"),
        _NCHWC_CONV_ATTRS,
        "te.compute",
        convert_te.topi_call("depthwise_conv2d_nchwc", _depthwise_nchwc),
        "relay.attrs.Conv2DAttrs",
        normalize=dict(_NCHWC_CONV_NORMALIZE),
        refusals=(
            Refusal(
                "out_layout",
                lambda v: v in ("", None),
                "the output keeps the data's layout: transform it after",
            ),
        ),
    ),
    OpRow(
        "nn.conv2d_backward_weight",
        ("grad", "data"),
        (
            ("strides", (1, 1)),
            ("padding", (0, 0)),
            ("dilation", (1, 1)),
            ("groups", 1),
            ("channels", None),
            ("kernel_size", None),
            ("grad_layout", "NCHW"),
            ("data_layout", "NCHW"),
            ("kernel_layout", "OIHW"),
            ("out_dtype", ""),
        ),
        "te.compute",
        convert_te.topi_call("conv2d_backward_weight", _conv2d_backward_weight),
        "relay.attrs.Conv2DAttrs",
        normalize={
            "strides": normalize.ntuple(2),
            "padding": normalize.padding(2),
            "dilation": normalize.ntuple(2),
            "kernel_size": lambda v: v if v is None else normalize.ntuple(2)(v),
            "out_dtype": normalize.dtype,
        },
        refusals=(
            Refusal("kernel_size", lambda v: v is not None, "give kernel_size (the weight's)"),
            Refusal("groups", lambda v: int(v) == 1, "compute each group's gradient apart"),
            Refusal("data_layout", lambda v: v == "NCHW", "transpose the data to NCHW"),
            Refusal("grad_layout", lambda v: v == "NCHW", "transpose the gradient to NCHW"),
            Refusal("kernel_layout", lambda v: v == "OIHW", "transpose the result"),
        ),
    ),
    OpRow(
        "nn.contrib_dense_pack",
        ("data", "weight"),
        (("weight_layout", "NC"), ("units", None), ("out_dtype", "")),
        "te.compute",
        convert_te.topi_call("dense_pack", lambda a, t: _dense_pack(t[0], t[1], a.out_dtype)),
        "relay.attrs.DensePackAttrs",
        normalize={"out_dtype": normalize.dtype},
    ),
)


#: This family's ops with no Relax equivalent -> what to write instead.
REFUSED: dict[str, str] = {
    "nn.fifo_buffer": "no Relax equivalent: keep the buffer in the host program",
    "nn.contrib_conv2d_winograd_without_weight_transform": "use relax.op.nn.conv2d",
}

BUILDERS = builders(ROWS, REFUSED)
_pad = BUILDERS["pad"]


def pad(data: Any, pad_width: Any, pad_value: Any = 0, pad_mode: str = "constant") -> Any:
    """Relay's ``nn.pad``; a tensor-valued ``pad_value`` (a 0-d variable) pads as Relay's did.

    Relax pads with a number only: with a static ``pad_width``, a tensor value is the
    zero-padded data where a padded mask of ones is set, ``pad_value`` elsewhere (``where``,
    Relay ops of the same table); a tensor ``pad_width`` makes ``dyn.nn.pad``, which takes the
    value as its third input.
    """
    static_width = not isinstance(pad_width, Expr) or isinstance(pad_width, Constant)
    tensor_value = isinstance(pad_value, Expr) and not isinstance(pad_value, Constant)
    if pad_mode != "constant" or not tensor_value or not static_width:
        return _pad(data, pad_width, pad_value, pad_mode)  # a tensor pad_width: dyn.nn.pad
    inside = transform.BUILDERS["cast"](_pad(tensor.BUILDERS["ones_like"](data), pad_width), "bool")
    return transform.BUILDERS["where"](inside, _pad(data, pad_width), pad_value)


BUILDERS["pad"] = pad
globals().update(BUILDERS)

#: Relay's padding helpers (``relay.op.nn.utils``): one value, one per spatial dim, or begin
#: and end per dim, as ``(begin..., end...)``; a ValueError for any other length.
get_pad_tuple1d = normalize.padding(1)
get_pad_tuple2d = normalize.padding(2)
get_pad_tuple3d = normalize.padding(3)

__all__ = sorted(
    [*BUILDERS, "const", "expr", "get_pad_tuple1d", "get_pad_tuple2d", "get_pad_tuple3d"]
)

if TYPE_CHECKING:
    # The builders are made from the rows, so a type checker cannot see them: to it, every
    # other name here is a builder (at runtime an unknown name is refused, naming it).
    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("nn", __name__)
