"""``relay.testing``: the helpers Relay-era tests import (``run_infer_type``, ``check_grad``)."""

from __future__ import annotations

from typing import Any

from ..gradient import check_grad  # over relax.transform.Gradient (relay/gradient.py)
from ..to_relax import infer
from . import temp_op_attr

__all__ = ["check_grad", "run_infer_type", "temp_op_attr"]


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
