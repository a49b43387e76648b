"""``relay.testing``: the helpers Relay-era tests import (``run_infer_type``)."""

from __future__ import annotations

from typing import Any

from ..to_relax import infer
from . import temp_op_attr

__all__ = ["run_infer_type", "temp_op_attr"]


def run_infer_type(expr: Any, mod: Any = None) -> Any:
    """Infer the types of ``expr`` (Relay's ``relay.testing.run_infer_type``).

    Parameters
    ----------
    expr : Expr or TupleWrapper
        A Relay expression.
    mod : ignored
        Relay's module argument (its global functions); Relax typing needs none.

    Returns
    -------
    Expr
        ``expr`` with ``checked_type`` set on it and its sub-expressions.
    """
    return infer(expr)
