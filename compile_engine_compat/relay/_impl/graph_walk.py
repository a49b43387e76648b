"""``GraphVisitor`` and ``GraphMutator``: the wing's own walks of the front end's Relay graph.

Like Relay's visitors (:mod:`compile_engine_compat.relay.expr_functor`, the public ones) they
visit each node once (a memo keyed by node) and dispatch on its class, and the mutator rebuilds a
node only when one of its children changed. Unlike them they walk without recursion (a graph of
any depth), and a subclass says where to stop (:meth:`GraphVisitor.stops_at`): the pattern
language and the partitioning passes are written on these two classes.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay.adt import ref_adt_children, ref_adt_rebuild
from compile_engine_compat.relay.expr import (
    Call,
    Constant,
    Expr,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
    as_expr,
)
from compile_engine_compat.relay.function import Function

__all__ = ["GraphMutator", "GraphVisitor", "bind", "children", "rebuild"]


def children(node: Any) -> list[Any]:
    """The sub-expressions of ``node`` a dataflow walk visits, in Relay's order.

    A call's function (a ``Function`` or a closure) comes before its arguments; an op or a
    ``GlobalVar`` is not an expression of the graph.
    """
    if isinstance(node, Call):
        head = [node.op] if isinstance(node.op, Expr) else []
        return head + list(node.args)
    if isinstance(node, Tuple):
        return list(node.fields)
    if isinstance(node, TupleGetItem):
        return [node.tuple_value]
    if isinstance(node, Function):
        return [*node.params, node.body]
    if isinstance(node, Let):
        return [node.var, node.value, node.body]
    if isinstance(node, If):
        return [node.cond, node.true_branch, node.false_branch]
    return ref_adt_children(node)


def rebuild(node: Any, new: list[Any]) -> Any:
    """``node`` with its :func:`children` replaced by ``new`` (``node`` itself if none changed)."""
    old = children(node)
    if len(old) == len(new) and all(a is b for a, b in zip(old, new)):
        return node
    if isinstance(node, Call):
        op = new[0] if isinstance(node.op, Expr) else node.op
        args = new[1:] if isinstance(node.op, Expr) else new
        return Call(op, args, node.attrs, node.type_args, node.span)
    if isinstance(node, Tuple):
        return Tuple(new, node.span)
    if isinstance(node, TupleGetItem):
        return TupleGetItem(new[0], node.index)
    if isinstance(node, Function):
        return Function(new[:-1], new[-1], node.ret_type, node.type_params, node.attrs)
    if isinstance(node, Let):
        return Let(new[0], new[1], new[2])
    if isinstance(node, If):
        return If(new[0], new[1], new[2])
    return ref_adt_rebuild(node, new)


class GraphVisitor:
    """Relay's ``GraphVisitor``: ``visit(expr)`` calls ``visit_<kind>`` once per node."""

    def __init__(self) -> None:
        self.memo_map: dict[int, Any] = {}
        self._keep: list[Any] = []

    def visit(self, expr: Any) -> Any:
        """Visit ``expr`` once (a node reached twice is visited the first time only).

        Children are visited before their parent, iteratively: a 50-layer network is thousands
        of nodes deep. Scopes (functions, ``let``, ``if``) are visited by their own method.
        """
        if id(expr) in self.memo_map:
            return self.memo_map[id(expr)]
        stack: list[tuple[Any, bool]] = [(expr, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in self.memo_map:
                continue
            if expanded or self.stops_at(node) or isinstance(node, Function | Let | If):
                self._keep.append(node)
                self.memo_map[id(node)] = self._dispatch(node)
                continue
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(children(node)))
        return self.memo_map[id(expr)]

    def stops_at(self, node: Any) -> bool:
        """Whether ``node``'s children are left unvisited (a leaf; a subclass adds more)."""
        return not children(node)

    def _dispatch(self, expr: Any) -> Any:
        table = (
            (Function, "visit_function"),
            (Call, "visit_call"),
            (Var, "visit_var"),
            (Constant, "visit_constant"),
            (Tuple, "visit_tuple"),
            (TupleGetItem, "visit_tuple_getitem"),
            (Let, "visit_let"),
            (If, "visit_if"),
        )
        for cls, method in table:
            if isinstance(expr, cls):
                return getattr(self, method)(expr)
        return self.visit_other(expr)

    def _visit_children(self, expr: Any) -> Any:
        for child in children(expr):
            self.visit(child)

    visit_function = visit_call = visit_tuple = visit_tuple_getitem = _visit_children
    visit_let = visit_if = _visit_children

    def visit_var(self, var: Var) -> Any:
        """A variable: a leaf."""

    def visit_constant(self, const: Constant) -> Any:
        """A constant: a leaf."""

    def visit_other(self, expr: Any) -> Any:
        """An op, a ``GlobalVar`` or another leaf."""


class GraphMutator(GraphVisitor):
    """Relay's ``GraphMutator``: each ``visit_<kind>`` returns the node's replacement.

    The defaults rebuild a node from its visited children, keeping the node itself when none
    changed.
    """

    def _visit_children(self, expr: Any) -> Any:
        return rebuild(expr, [self.visit(c) for c in children(expr)])

    visit_function = visit_call = visit_tuple = visit_tuple_getitem = _visit_children
    visit_let = visit_if = _visit_children

    def visit_var(self, var: Var) -> Any:
        """A variable stays itself."""
        return var

    def visit_constant(self, const: Constant) -> Any:
        """A constant stays itself."""
        return const

    def visit_other(self, expr: Any) -> Any:
        """A match or a reference is rebuilt from its visited children; anything else (an op,
        a ``GlobalVar``, a constructor) stays itself."""
        return self._visit_children(expr) if children(expr) else expr


class _Substitute(GraphMutator):
    """Replaces variables (by identity) with the expressions given."""

    def __init__(self, values: dict[int, Any]) -> None:
        super().__init__()
        self.values = values

    def visit_var(self, var: Var) -> Any:
        return self.values.get(id(var), var)


def bind(expr: Any, binds: Any) -> Any:
    """``relay.bind(expr, binds)``: the variables of ``binds`` (``{Var: Expr}``) replaced in
    ``expr``; a ``Function``'s bound parameters leave its parameter list, as Relay's did."""
    values = {id(v): as_expr(e) for v, e in dict(binds).items()}
    if not isinstance(expr, Function):
        return _Substitute(values).visit(expr)
    body = _Substitute(values).visit(expr.body)
    params = [p for p in expr.params if id(p) not in values]
    if body is expr.body and len(params) == len(expr.params):
        return expr
    return Function(params, body, expr.ret_type, expr.type_params, expr.attrs)
