"""Relay's normal forms, rewritten on the Relay graph: ``ToANormalForm``, ``ToGraphNormalForm``,
``ToBasicBlockNormalForm``.

Scopes are the function body, each ``If`` branch and each nested function's body. A node is
placed in the innermost scope enclosing all its uses (the common ancestor of its users' scopes),
so a value used by both branches of an ``If`` is computed once, before it.

* A-normal form: every compound node (a call, tuple, projection, constant, ``If``, nested
  function, ``let`` result) is bound by a ``let`` of its own, in its scope, in the order its
  operands are evaluated; a ``let`` variable keeps binding its value.
* Basic-block normal form: only the nodes used from more than one scope are bound (in their
  common scope); the rest stays a graph inside its block.
* Graph normal form: every ``let`` is dropped, its variable replaced by its value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, GraphVisitor, children

from ..expr import Call, Constant, Expr, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from .module_functions import Functions, module_graph_pass

__all__ = ["ToANormalForm", "ToBasicBlockNormalForm", "ToGraphNormalForm", "to_normal_form"]


class _Scope:
    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.bindings: list[tuple[Var, Any]] = []


def _ancestors(scope: _Scope) -> list[_Scope]:
    chain = [scope]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    return chain


def _common(a: _Scope | None, b: _Scope) -> _Scope:
    """The innermost scope enclosing both ``a`` and ``b``."""
    if a is None:
        return b
    enclosing = {id(s) for s in _ancestors(a)}
    return next(s for s in _ancestors(b) if id(s) in enclosing)


def _atomic(node: Any) -> bool:
    return not isinstance(node, Expr) or (isinstance(node, Var) and not isinstance(node, Function))


def _primitive(node: Any) -> bool:
    """A fused function (``Primitive``): kept whole, as TVM 0.19 kept it."""
    return isinstance(node, Function) and bool(int(node.attrs.get("Primitive", 0) or 0))


def _edges(node: Any) -> list[tuple[Any, int]]:
    """The children of ``node``, each with the index of the sub-scope it lives in (-1: none)."""
    if isinstance(node, If):
        return [(node.cond, -1), (node.true_branch, 0), (node.false_branch, 1)]
    if isinstance(node, Function):
        return [] if _primitive(node) else [(node.body, 0)]
    if isinstance(node, Let):
        return [(node.value, -1), (node.body, -1)]
    return [(c, -1) for c in children(node) if not isinstance(c, Var)]


class _Placement:
    """Each node's scope: the common scope of its users' (users before their operands)."""

    def __init__(self, body: Any, root: _Scope) -> None:
        self.scope: dict[int, _Scope] = {id(body): root}
        self.sub: dict[tuple[int, int], _Scope] = {}
        self.lifted: set[int] = set()
        order = self._post_order(body)
        for node in reversed(order):  # every user of a node comes before it here
            here = self.scope[id(node)]
            for child, index in _edges(node):
                if _atomic(child):
                    continue
                where = here if index < 0 else self._sub(node, index, here)
                old = self.scope.get(id(child))
                new = _common(old, where)
                if old is not None and (old is not where or new is not where):
                    self.lifted.add(id(child))
                self.scope[id(child)] = new

    def _sub(self, node: Any, index: int, parent: _Scope) -> _Scope:
        key = (id(node), index)
        if key not in self.sub:
            self.sub[key] = _Scope(parent)
        return self.sub[key]

    @staticmethod
    def _post_order(body: Any) -> list[Any]:
        walk = _PostOrder()
        walk.visit(body)
        return walk.order


class _PostOrder(GraphVisitor):
    """The compound nodes under a body, each after its operands."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[Any] = []

    def _dispatch(self, expr: Any) -> Any:
        if isinstance(expr, Function | Let | If) and not _primitive(expr):
            self._visit_children(expr)
        if not _atomic(expr):
            self.order.append(expr)


class _Fill:
    """Binds nodes into their scopes; ``bind_all`` is A-normal form, else basic-block form."""

    def __init__(self, placement: _Placement, bind_all: bool) -> None:
        self.placement = placement
        self.bind_all = bind_all
        self.memo: dict[int, Any] = {}
        self.count = 0

    def fresh(self) -> Var:
        self.count += 1
        return Var(f"x{self.count}")

    def bound(self, node: Any, value: Any, var: Var | None) -> Any:
        if var is None and not (self.bind_all or id(node) in self.placement.lifted):
            return value
        var = var if var is not None else self.fresh()
        self.placement.scope[id(node)].bindings.append((var, value))
        return var

    def visit(self, node: Any, var: Var | None = None) -> Any:
        if _atomic(node):
            return self.memo.get(id(node), node)
        if var is None and id(node) in self.memo:
            return self.memo[id(node)]
        if isinstance(node, Let):
            if _atomic(node.value):  # let x = y: kept, in the let's scope
                binding = (node.var, self.visit(node.value))
                self.placement.scope[id(node)].bindings.append(binding)
            else:
                self.visit(node.value, node.var)
            out = self.bound(node, self.visit(node.body), var)
        else:
            out = self.bound(node, self.compound(node), var)
        self.memo[id(node)] = out
        return out

    def compound(self, node: Any) -> Any:
        if isinstance(node, Call):
            args = [self.visit(a) for a in node.args]  # before the operator, as TVM 0.19
            op = self.visit(node.op) if isinstance(node.op, Expr) else node.op
            return Call(op, args, node.attrs, node.type_args)
        if isinstance(node, Tuple):
            return Tuple([self.visit(f) for f in node.fields], node.span)
        if isinstance(node, TupleGetItem):
            return TupleGetItem(self.visit(node.tuple_value), node.index)
        if isinstance(node, If):
            here = self.placement.scope[id(node)]
            cond = self.visit(node.cond)
            branches = [
                self.scoped(b, self.placement._sub(node, i, here))
                for i, b in enumerate((node.true_branch, node.false_branch))
            ]
            return If(cond, *branches)
        if _primitive(node):
            return node
        if isinstance(node, Function):
            here = self.placement.scope[id(node)]
            body = self.scoped(node.body, self.placement._sub(node, 0, here))
            return Function(node.params, body, node.ret_type, node.type_params, node.attrs)
        if isinstance(node, Constant):
            return node
        raise TypeError(
            f"relay.transform normal forms: {type(node).__name__} nodes (references, ADTs) are "
            "not rewritten here"
        )

    def scoped(self, body: Any, scope: _Scope) -> Any:
        """``body`` with the bindings of ``scope`` as ``let``s around its result."""
        result = self.visit(body)
        for var, value in reversed(scope.bindings):
            result = Let(var, value, result)
        return result


def to_normal_form(func: Function, bind_all: bool) -> Function:
    """``func`` in A-normal form (``bind_all``) or basic-block normal form."""
    root = _Scope(None)
    placement = _Placement(func.body, root)
    fill = _Fill(placement, bind_all)
    body = fill.scoped(func.body, root)
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs)


def _each(name: str, rewrite: Callable[[Function], Function]) -> tvm.transform.Pass:
    """A module pass of ``rewrite`` on each Relay function of the module but those of an
    external compiler (a ``Compiler`` attribute), as TVM 0.19 skipped them; the output is
    stored as ``mod[gv] = func`` stores it (a function Relax cannot express, such as one
    holding a function used as a value, is kept on the Relay side)."""

    def run(functions: Functions) -> Functions:
        return {
            gvar: rewrite(func)
            if isinstance(func, Function) and "Compiler" not in func.attrs
            else func
            for gvar, func in functions.items()
        }

    return module_graph_pass(name, 1, run)


class _DropLets(GraphMutator):
    def visit_let(self, let: Let) -> Any:
        value = self.visit(let.value)
        self._keep.append(let.var)
        self.memo_map[id(let.var)] = value
        return self.visit(let.body)


@legacy_api("relay.transform.more_passes")
def ToANormalForm() -> tvm.transform.Pass:
    """``relay.transform.ToANormalForm()`` (opt level 1), on the Relay graph: every compound
    node bound by a ``let``, in the scope of its uses."""
    return _each("ToANormalForm", lambda f: to_normal_form(f, bind_all=True))


@legacy_api("relay.transform.more_passes")
def ToBasicBlockNormalForm() -> tvm.transform.Pass:
    """``relay.transform.ToBasicBlockNormalForm()`` (opt level 1), on the Relay graph: the nodes
    used from several scopes are bound by a ``let`` in their common scope."""
    return _each("ToBasicBlockNormalForm", lambda f: to_normal_form(f, bind_all=False))


@legacy_api("relay.transform.more_passes")
def ToGraphNormalForm() -> tvm.transform.Pass:
    """``relay.transform.ToGraphNormalForm()`` (opt level 1), on the Relay graph: every ``let``
    dropped, its variable replaced by its value."""
    return _each("ToGraphNormalForm", lambda f: _DropLets().visit(f))
