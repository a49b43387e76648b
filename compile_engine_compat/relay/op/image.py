"""``relay.image`` (also ``relay.op.image``): Relay's image ops, as rows of the op table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from compile_engine_compat.relay._impl import convert, convert_te, normalize
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op

# Re-exported, as TVM 0.19's relay.op.image did.
from ..expr import Constant, Expr, const  # noqa: F401


def _resize_attrs(layout: str) -> tuple[tuple[str, Any], ...]:
    """Relay's attributes of ``image.resize1d/2d/3d`` (one set, the layout's default differs)."""
    return (
        ("size", REQUIRED),
        ("roi", None),
        ("layout", layout),
        ("method", "linear"),
        ("coordinate_transformation_mode", "half_pixel"),
        ("rounding_method", ""),
        ("cubic_alpha", -0.5),
        ("cubic_exclude", 0),
        ("extrapolation_value", 0.0),
        ("out_dtype", None),
    )


ROWS: tuple[OpRow, ...] = (
    OpRow(
        "image.resize1d",
        ("data",),
        _resize_attrs("NCW"),
        "topi.image.resize1d",
        convert_te.resize1d,
        "relay.attrs.Resize1DAttrs",
        normalize={"size": normalize.ntuple(1)},
    ),
    OpRow(
        "image.resize3d",
        ("data",),
        _resize_attrs("NCDHW"),
        "relax.image.resize3d",
        convert_te.resize3d,
        "relay.attrs.Resize3DAttrs",
        normalize={"size": normalize.ntuple(3)},
    ),
    OpRow(
        "image.crop_and_resize",
        ("data", "boxes", "box_indices"),
        (
            ("crop_size", REQUIRED),
            ("layout", REQUIRED),
            ("method", "bilinear"),
            ("extrapolation_value", 0),
            ("out_dtype", None),
        ),
        "topi.image.crop_and_resize",
        convert_te.crop_and_resize,
        "relay.attrs.CropAndResizeAttrs",
        normalize={"crop_size": normalize.ntuple(2)},
    ),
    OpRow(
        "image.dilation2d",
        ("data", "weight"),
        (
            ("strides", (1, 1)),
            ("padding", (0, 0)),
            ("dilations", (1, 1)),
            ("data_layout", "NCHW"),
            ("kernel_layout", "IHW"),
            ("out_dtype", ""),
        ),
        "topi.image.dilation2d",
        convert_te.dilation2d,
        "relay.attrs.Dilation2DAttrs",
        normalize={"strides": normalize.ntuple(2), "dilations": normalize.ntuple(2)},
    ),
    OpRow(
        "image.grid_sample",
        ("data", "grid"),
        (
            ("method", "bilinear"),
            ("layout", "NCHW"),
            ("padding_mode", "zeros"),
            ("align_corners", True),
        ),
        "relax.image.grid_sample",
        convert.direct(
            "relax.image.grid_sample",
            method="method",
            layout="layout",
            padding_mode="padding_mode",
            align_corners=lambda a, _: bool(a.align_corners),
        ),
        "relay.attrs.GridSampleAttrs",
    ),
    OpRow(
        "image.affine_grid",
        ("data",),
        (("target_shape", None),),
        "relax.image.affine_grid",
        convert.direct(
            "relax.image.affine_grid", size=lambda a, _: tuple(int(s) for s in a.target_shape)
        ),
        "relay.attrs.AffineGridAttrs",
        normalize={"target_shape": normalize.ntuple(2)},
    ),
    OpRow(
        "image.resize2d",
        ("data",),
        (
            ("size", REQUIRED),
            ("roi", None),
            ("layout", "NCHW"),
            ("method", "linear"),
            ("coordinate_transformation_mode", "half_pixel"),
            ("rounding_method", ""),
            ("cubic_alpha", -0.5),
            ("cubic_exclude", 0),
            ("extrapolation_value", 0.0),
            ("out_dtype", None),
        ),
        "relax.image.resize2d",
        convert.resize2d,
        "relay.attrs.Resize2DAttrs",
        normalize={"size": normalize.ntuple(2)},
        dynamic=("size",),
    ),
)


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted([*BUILDERS, "Constant", "Expr", "const"])

if TYPE_CHECKING:
    # The builders are made from the rows, so a type checker cannot see them: to it, every
    # other name here is a builder (at runtime an unknown name still raises AttributeError).
    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("image", __name__)
