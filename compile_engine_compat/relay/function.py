"""``relay.function``: Relay's ``Function``."""

from __future__ import annotations

from ._expr import Function

__all__ = ["Function"]
