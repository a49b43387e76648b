"""``relay.expr``: Relay's expression classes."""

from __future__ import annotations

from ._expr import Call, Constant, Expr, Let, Tuple, TupleGetItem, TupleWrapper, Var, const, var

__all__ = ["Call", "Constant", "Expr", "Let", "Tuple", "TupleGetItem", "TupleWrapper", "Var"]
__all__ += ["const", "var"]
