"""``relay.image`` (also ``relay.op.image``): Relay's image ops, as rows of the op table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import convert, normalize
from .registry import REQUIRED, OpRow, builders

ROWS: tuple[OpRow, ...] = (
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
    ),
)


#: None: every op of this family has a Relax form.
REFUSED: dict[str, str] = {}

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
