"""``relay.analysis``: the analyses Relay-era code calls on a graph (``free_vars``, ``all_vars``,
``free_type_vars``)."""

from __future__ import annotations

from typing import Any

from tvm import relax

from .annotated_regions import AnnotatedRegionSet  # BYOC regions (annotated_regions.py)
from .expr import Call, Expr, If, Let, Tuple, TupleGetItem, Var
from .function import Function

__all__ = ["AnnotatedRegionSet", "all_vars", "free_type_vars", "free_vars"]


def free_vars(expr: Any) -> list[Any]:
    """The free variables of ``expr`` in post-order of first use (Relay's ``free_vars``).

    Parameters
    ----------
    expr : Expr or relax.Expr
        A Relay expression, or a Relax one.

    Returns
    -------
    list of Var
        Its unbound variables. A Relax expression (``mod["main"].body`` of a front-end
        module, which holds Relax) gives its free Relax variables
        (``relax.analysis.free_vars``).
    """
    if isinstance(expr, relax.Expr):
        return list(relax.analysis.free_vars(expr))
    return _vars(expr, free_only=True)


def all_vars(expr: Expr) -> list[Var]:
    """Every variable of ``expr``, free and bound (Relay's ``all_vars``), in order of first use.

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    list of Var
        Function parameters and ``Let`` variables included.
    """
    return _vars(expr, free_only=False)


def free_type_vars(expr: Any, mod: Any = None) -> list[Any]:
    """Relay's ``free_type_vars``: always ``[]`` here.

    The front end builds static shapes only, with no type variables (Relay's ``TypeVar`` is not
    mapped), so no expression of it has a free one.

    Parameters
    ----------
    expr : Expr or Type
        A Relay expression or type.
    mod : ignored
        Relay's module argument.

    Returns
    -------
    list
        Empty.
    """
    return []


def _vars(expr: Expr, free_only: bool) -> list[Var]:
    """The variables of ``expr`` in order of first use: only unbound ones with ``free_only``."""
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
            if not (free_only and id(node) in bound):
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
            children = [node.var, node.value, node.body]
        elif isinstance(node, Function):
            bound.update(id(p) for p in node.params)
            children = [*node.params, node.body]
        stack.extend((c, False) for c in reversed(children))
    return out
