"""``relay.op``: ``get(name)`` and every builder of the op table (``relay.op.concatenate``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._ops import REFUSED_OPS, RelayOp, UnsupportedRelayError, get, namespace
from . import image, nn, op, strategy
from .op import OpImplementation, OpSpecialization, OpStrategy, register_strategy

globals().update(namespace(""))
Op = RelayOp

__all__ = [
    "REFUSED_OPS",
    "Op",
    "OpImplementation",
    "OpSpecialization",
    "OpStrategy",
    "UnsupportedRelayError",
    "get",
    "image",
    "nn",
    "op",
    "register_strategy",
    "strategy",
]
__all__ += sorted(namespace(""))

if TYPE_CHECKING:
    # The builders are generated from the op table, so a type checker cannot see them: to it,
    # every other name here is a builder. Only for checkers; at runtime an unknown name still
    # raises AttributeError.
    def __getattr__(name: str) -> Callable[..., Any]: ...
