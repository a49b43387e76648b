"""``relay.image`` (also ``relay.op.image``): the ``image.*`` builders of the op table."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._ops import namespace

globals().update(namespace("image"))
__all__ = sorted(namespace("image"))

if TYPE_CHECKING:
    # The builders are generated from the op table, so a type checker cannot see them: to it,
    # every name here is a builder. Only for checkers; at runtime an unknown name still raises
    # AttributeError.
    def __getattr__(name: str) -> Callable[..., Any]: ...
