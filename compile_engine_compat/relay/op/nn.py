"""``relay.nn`` (also ``relay.op.nn``): Relay's neural-network ops, as rows of the op table.

Convolutions, pools, dense and matmul, activations, norms, padding and upsampling
(``relay.nn.conv2d``). The ops Relax has no equivalent for are listed in :data:`REFUSED`:
their builders raise, naming what to write instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import convert, normalize, type_relations
from .registry import REQUIRED, OpRow, Refusal, builders


def _convolutions() -> list[OpRow]:
    """``nn.conv1d``-``conv3d`` and ``nn.conv1d_transpose``/``conv2d_transpose``."""
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
    for nd, layout, kernel_layout in ((1, "NCW", "IOW"), (2, "NCHW", "IOHW")):
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
                convert.direct(
                    f"relax.nn.conv{nd}d_transpose",
                    strides="strides",
                    padding="padding",
                    output_padding="output_padding",
                    dilation="dilation",
                    groups="groups",
                    data_layout="data_layout",
                    kernel_layout="kernel_layout",
                    out_layout=lambda a, _: convert.unset_to_none(a.out_layout),
                    out_dtype=lambda a, _: convert.unset_to_none(a.out_dtype),
                ),
                f"relay.attrs.Conv{nd}DTransposeAttrs",
                infer_inputs=type_relations.conv_weight(True),
                normalize={**normalize.conv_normalize(nd), "output_padding": normalize.ntuple(nd)},
            )
        )
    return rows


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
            )
        )
    for kind, relax_op in (("max", "relax.max"), ("avg", "relax.mean")):
        rows.append(
            OpRow(
                f"nn.global_{kind}_pool2d",
                ("data",),
                (("layout", "NCHW"), ("out_layout", "")),
                relax_op,
                convert.global_pool(relax_op),
                "relay.attrs.GlobalPool2DAttrs",
                refusals=(
                    Refusal("out_layout", lambda v: v in ("", None), "transpose the result"),
                ),
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
        convert.direct(
            "relax.nn.batch_norm",
            axis="axis",
            epsilon="epsilon",
            center="center",
            scale="scale",
            training=lambda a, _: False,
        ),
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
        normalize={"pad_value": normalize.scalar_value},
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
)


#: This family's ops with no Relax equivalent -> what to write instead.
REFUSED: dict[str, str] = {
    "nn.adaptive_max_pool2d": "Relax has no adaptive max pool: use relax.op.nn.max_pool2d "
    "with computed windows, or relax.op.max over the spatial axes for output_size 1",
    "nn.conv3d_transpose": "use relax.op.nn.conv3d_transpose with a relax.BlockBuilder",
    "nn.lrn": "Relax has no lrn: compose it from relax.op.power, relax.op.sum and relax.op.divide",
    "nn.l2_normalize": "compose relax.op.sqrt(relax.op.sum(x * x, axis)) and relax.op.divide",
    "nn.fifo_buffer": "no Relax equivalent: keep the buffer in the host program",
    "nn.space_to_depth": "use relax.op.reshape and relax.op.permute_dims",
    "nn.depth_to_space": "use relax.op.reshape and relax.op.permute_dims",
    "nn.contrib_conv2d_winograd_without_weight_transform": "use relax.op.nn.conv2d",
}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)

if TYPE_CHECKING:
    # The builders are made from the rows, so a type checker cannot see them: to it, every
    # other name here is a builder (at runtime an unknown name still raises AttributeError).
    def __getattr__(name: str) -> Callable[..., Any]: ...


# -- missing ops: refused naming the op (issue: upstream Relay tests) ---------------------------
if not TYPE_CHECKING:  # checkers see the builders above

    def __getattr__(name: str) -> Any:
        """A missing op raises the shim's refusal naming it, never a bare ``AttributeError``."""
        from compile_engine_compat.surfaces.import_alias import refused_op

        raise refused_op(__name__, name)
