"""``relay.analysis``: the analyses Relay-era code calls on a graph (``free_vars``)."""

from __future__ import annotations

from typing import Any

from .expr import Call, Expr, If, Let, Tuple, TupleGetItem, Var
from .function import Function

__all__ = ["free_vars"]


def free_vars(expr: Expr) -> list[Var]:
    """The free variables of ``expr`` in post-order of first use (Relay's ``free_vars``).

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    list of Var
        Its unbound variables.
    """
    seen: set[int] = set()
    bound: set[int] = set()
    out: list[Var] = []
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Var):
            if id(node) not in bound:
                out.append(node)
            continue
        children: list[Any] = []
        if isinstance(node, Call):
            children = list(node.args)
        elif isinstance(node, Tuple):
            children = list(node.fields)
        elif isinstance(node, TupleGetItem):
            children = [node.tuple_value]
        elif isinstance(node, If):
            children = [node.cond, node.true_branch, node.false_branch]
        elif isinstance(node, Let):
            bound.add(id(node.var))
            children = [node.value, node.body]
        elif isinstance(node, Function):
            bound.update(id(p) for p in node.params)
            children = [node.body]
        stack.extend((c, False) for c in reversed(children))
    return out
