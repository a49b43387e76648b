"""``relay.ty``: Relay's types."""

from __future__ import annotations

from ._expr import Any, FuncType, TensorType, TupleType, Type

__all__ = ["Any", "FuncType", "TensorType", "TupleType", "Type"]
