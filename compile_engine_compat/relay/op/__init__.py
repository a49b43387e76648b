"""``relay.op``: ``get(name)`` and every builder of the op table (``relay.op.concatenate``)."""

from __future__ import annotations

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
