"""Relay's pass-infrastructure classes and helpers beside the passes: ``FunctionPass``,
``LayoutConfig`` and ``ToANormalFormExpr``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvm import relax

from compile_engine_compat.deprecations import legacy_api

__all__ = ["FunctionPass", "LayoutConfig", "ToANormalFormExpr"]

#: ``relay.transform.FunctionPass``: what ``function_pass`` makes (Relax's class, for
#: ``isinstance`` checks).
FunctionPass = relax.transform.FunctionPass


@legacy_api("relay.transform.more_passes")
class LayoutConfig:
    """``relay.transform.LayoutConfig(skip_layers=None)``: the layers ``ConvertLayout`` skips.

    A context manager, as in Relay (``LayoutConfig.current`` inside it). Relax's
    ``ConvertLayout`` converts every op it is given and cannot skip a layer: the configuration
    is kept and readable, and has no effect on the conversion.

    Parameters
    ----------
    skip_layers : sequence of int, optional
        The indices of the convolutions Relay left in their layout.
    """

    current: LayoutConfig | None = None

    def __init__(self, skip_layers: Sequence[int] | None = None) -> None:
        self.skip_counter = 0
        self.skip_layers = list(skip_layers) if skip_layers is not None else []
        self._old: LayoutConfig | None = None

    def check_skip(self) -> bool:
        """Whether the next layer is one to skip (and count it), as Relay's did."""
        skip = self.skip_counter in self.skip_layers
        self.skip_counter += 1
        return skip

    def reset(self) -> None:
        """Start counting layers again."""
        self.skip_counter = 0
        self.skip_layers = []

    def __enter__(self) -> LayoutConfig:
        self._old = LayoutConfig.current
        LayoutConfig.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        LayoutConfig.current = self._old


@legacy_api("relay.transform.more_passes")
def ToANormalFormExpr(e: Any) -> Any:
    """``relay.transform.ToANormalFormExpr(expr)``: the expression itself.

    A Relay expression of the front end becomes a Relax function in A-normal form whenever it
    is built; the graph the caller holds is already what Relay's ANF printed as ``let``s.
    """
    return e
