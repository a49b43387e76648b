"""``relay.op``: ``get(name)`` and every builder of the op table (``relay.op.concatenate``)."""

from __future__ import annotations

from .._ops import REFUSED_OPS, RelayOp, UnsupportedRelayError, get, namespace
from . import image, nn

globals().update(namespace(""))
Op = RelayOp

__all__ = ["REFUSED_OPS", "Op", "UnsupportedRelayError", "get", "image", "nn"]
__all__ += sorted(namespace(""))
