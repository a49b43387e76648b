"""``relay.nn`` (also ``relay.op.nn``): the ``nn.*`` builders of the op table."""

from __future__ import annotations

from .._ops import namespace

globals().update(namespace("nn"))
__all__ = sorted(namespace("nn"))
