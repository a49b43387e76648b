"""``relay.image`` (also ``relay.op.image``): the ``image.*`` builders of the op table."""

from __future__ import annotations

from .._ops import namespace

globals().update(namespace("image"))
__all__ = sorted(namespace("image"))
