"""The Relay graph as the analyses walk it: each node's children, and post-order, iteratively."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin

from ..adt import ref_adt_children
from ..expr import Call, If, Let, Tuple, TupleGetItem
from ..expr_functor import relay_node
from ..function import Function

__all__ = ["children", "post_order", "post_order_visit"]


def children(node: Any) -> list[Any]:
    """The sub-expressions of ``node`` in Relay's visiting order (a call's op first).

    Parameters
    ----------
    node : Expr
        A node of the front end's Relay graph.

    Returns
    -------
    list
        Its children: expressions, ops (``relay.op.get``) and GlobalVars.
    """
    if isinstance(node, Call):
        return [node.op, *node.args]
    if isinstance(node, Tuple):
        return list(node.fields)
    if isinstance(node, TupleGetItem):
        return [node.tuple_value]
    if isinstance(node, If):
        return [node.cond, node.true_branch, node.false_branch]
    if isinstance(node, Let):
        return [node.var, node.value, node.body]
    if isinstance(node, Function):
        return [*node.params, node.body]
    return ref_adt_children(node)


def post_order(root: Any) -> list[Any]:
    """Every node reachable from ``root``, each once, children before parents (iteratively, so
    a deep graph does not reach Python's recursion limit).

    Parameters
    ----------
    root : Expr or a front-end Relax function
        Where to start (a Relax function the front end built is walked as its Relay function).

    Returns
    -------
    list
        The nodes (ops and GlobalVars included), in Relay's post-DFS order.
    """
    out: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(relay_node(root), False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            out.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children(node)) if id(c) not in seen)
    return out


@legacy_api("relay.analysis")
def post_order_visit(expr: Any, fvisit: Callable[[Any], Any]) -> None:
    """Relay's ``post_order_visit``: call ``fvisit(node)`` on each node once, in post-DFS order.

    Parameters
    ----------
    expr : Expr, or the Relax function of a front-end function (``mod["main"]``)
        The graph.
    fvisit : callable
        Called on every node: expressions, ops (``relay.op.get(name)``) and GlobalVars. A Relax
        expression with no Relay origin is walked by ``relax.analysis.post_order_visit``.
    """
    if isinstance(expr, relax.Expr) and origin.relay_of(expr) is None:
        relax.analysis.post_order_visit(expr, fvisit)
        return
    for node in post_order(expr):
        fvisit(node)
