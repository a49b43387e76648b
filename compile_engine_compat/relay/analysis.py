"""``relay.analysis``: the analyses Relay-era tests call."""

from __future__ import annotations

from ._emit import free_vars

__all__ = ["free_vars"]
