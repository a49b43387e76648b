"""Relay's normal forms, rewritten on the Relay graph: ``ToANormalForm``, ``ToGraphNormalForm``,
``ToBasicBlockNormalForm``.

As TVM 0.19's ``to_a_normal_form.cc``: the scopes are the function body, each ``If`` branch,
each ``match`` clause, each ``let``'s value and body and each nested function's body. From the
dependency graph (each node's users, in the order TVM 0.19 linked them), a node is placed in the
lowest common scope of its users' scopes, so a value used by both branches of an ``If`` is
computed once, before it.

* A-normal form: every compound node (a call, tuple, projection, constant, ``If``, nested
  function, ``let`` result) is bound by a ``let`` of its own, in its scope, in the order its
  operands are evaluated (a call's arguments before its operator); a ``let`` variable keeps
  binding its value, and a variable first met as the value of ``let %y = %x`` reads as ``%y``
  after it, as in TVM 0.19. Inside an ``on_device`` call that fixes a device, each binding is
  wrapped in ``on_device`` of that device. Fused (``Primitive``) functions are kept whole.
* Basic-block normal form: only the nodes lifted out of the scope of their first user are
  bound (in the common scope); the rest stays a graph inside its block.
* Graph normal form: every ``let`` is dropped, its variable replaced by its value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, children, rebuild

from ..adt import Clause, Constructor, Match
from ..expr import Call, Expr, GlobalRef, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..op.annotation import on_device
from .module_functions import Functions, module_graph_pass

__all__ = ["ToANormalForm", "ToBasicBlockNormalForm", "ToGraphNormalForm", "to_normal_form"]


class _Scope:
    def __init__(self, parent: _Scope | None) -> None:
        self.parent = parent
        self.level: int = 0 if parent is None else parent.level + 1
        self.bindings: list[tuple[Var, Any]] = []

    def push(self, var: Var, value: Any) -> Var:
        self.bindings.append((var, value))
        return var

    def get(self, body: Any) -> Any:
        """``body`` under this scope's bindings."""
        for var, value in reversed(self.bindings):
            body = Let(var, value, body)
        return body


def _lca(lhs: _Scope, rhs: _Scope) -> _Scope:
    while lhs is not rhs:
        if lhs.level > rhs.level:
            lhs = lhs.parent  # type: ignore[assignment]
        elif lhs.level < rhs.level:
            rhs = rhs.parent  # type: ignore[assignment]
        else:
            lhs, rhs = lhs.parent, rhs.parent  # type: ignore[assignment]
    return lhs


def _primitive(node: Any) -> bool:
    """A fused function (``Primitive``): kept whole, as TVM 0.19 kept it."""
    return isinstance(node, Function) and bool(int(node.attrs.get("Primitive", 0) or 0))


def _dataflow(node: Any) -> bool:
    return isinstance(node, Call | Tuple | TupleGetItem)


class _Dependencies:
    """TVM 0.19's dependency graph: each node's users (parents) in the order it linked them,
    with a scope node (``("sub", id(expr), i)``) between an ``If``, ``Let``, function or
    ``match`` and each of its sub-scopes; and the post order of its nodes."""

    def __init__(self, func: Function) -> None:
        self.parents: dict[Any, list[Any]] = {}
        self.new_scope: set[Any] = set()
        self.post: list[Any] = []
        self.visited: set[int] = set()
        self.leaf(func)

    def link(self, parent: Any, child: Any) -> None:
        if isinstance(child, Expr):
            self.visit(child)
            child = id(child)
        self.parents.setdefault(child, []).append(parent)

    def sub(self, node: Any, index: int) -> tuple[str, int, int]:
        key = ("sub", id(node), index)
        self.new_scope.add(key)
        self.link(id(node), key)
        return key

    def visit(self, node: Any) -> None:
        if id(node) in self.visited:
            return
        if _dataflow(node):  # post order over the dataflow nodes first, as ExpandDataflow
            for child in children(node):
                self.visit(child)
        self.leaf(node)

    def leaf(self, node: Any) -> None:
        if id(node) in self.visited:
            return
        self.visited.add(id(node))
        if isinstance(node, Let):
            self.let_chain(node)
        elif isinstance(node, If):
            self.link(id(node), node.cond)
            subs = [self.sub(node, 0), self.sub(node, 1)]
            self.link(subs[0], node.true_branch)
            self.link(subs[1], node.false_branch)
            self.post += reversed(subs)
        elif isinstance(node, Function):
            body = self.sub(node, 0)
            if not _primitive(node):
                for param in node.params:
                    self.link(body, param)
                self.link(body, node.body)
            self.post.append(body)
        elif isinstance(node, Match):
            self.link(id(node), node.data)
            subs = [self.sub(node, i) for i in range(len(node.clauses))]
            for key, clause in zip(subs, node.clauses):
                self.link(key, clause.rhs)
            self.post += reversed(subs)
        else:
            for child in children(node):
                self.link(id(node), child)
        self.post.append(id(node))

    def let_chain(self, let: Let) -> None:
        chain: list[tuple[Let, Any]] = []
        expr: Any = let
        while isinstance(expr, Let):
            self.visited.add(id(expr))
            key = self.sub(expr, 0)
            self.link(key, expr.var)
            self.link(key, expr.value)
            chain.append((expr, key))
            expr = expr.body
        for node, key in reversed(chain):
            self.link(key, node.body)
            self.post.append(key)
            if node is not let:
                self.post.append(id(node))

    def scopes(self) -> tuple[dict[Any, _Scope], set[Any]]:
        """Each node's scope (TVM 0.19's ``CalcScope``: the lowest common one of its users'),
        and the nodes lifted out of their first user's scope."""
        scope: dict[Any, _Scope] = {}
        lifted: set[Any] = set()
        for key in reversed(self.post):
            users = self.parents.get(key)
            if not users:
                here = _Scope(None)
            else:
                first = here = scope[users[0]]
                for user in users[1:]:
                    here = _lca(here, scope[user])
                if here is not first:
                    lifted.add(key)
            scope[key] = _Scope(here) if key in self.new_scope else here
        return scope, lifted


def _unconstrained(device: Any) -> bool:
    return device is None or bool(device.is_fully_unconstrained())


def _fixed_on_device(node: Any) -> Any:
    """The attributes of an ``on_device`` call that fixes its device, else None."""
    if isinstance(node, Call) and getattr(node.op, "name", None) == "on_device":
        attrs: Any = node.attrs
        if bool(attrs.constrain_result) and bool(attrs.constrain_body):
            return attrs
    return None


class _Fill:
    """TVM 0.19's ``Fill``: each node bound in its scope, in evaluation order; with
    ``include`` (basic-block form), only the nodes lifted out of their first user's scope."""

    def __init__(self, func: Function, bind_all: bool) -> None:
        deps = _Dependencies(func)
        self.scope, lifted = deps.scopes()
        self.include = None if bind_all else lifted
        self.memo: dict[int, Any] = {}
        self.devices: list[Any] = []  # the lexically enclosing fixed devices
        self.var_devices: dict[int, Any] = {}
        self.count = 0

    def scope_of(self, node: Any) -> _Scope:
        return self.scope[id(node)]

    def sub(self, node: Any, index: int) -> _Scope:
        return self.scope[("sub", id(node), index)]

    def device_of(self, node: Any) -> Any:
        fixed = _fixed_on_device(node)
        if fixed is not None:
            return fixed.virtual_device
        if isinstance(node, Var):
            return self.var_devices.get(id(node))
        return self.devices[-1] if self.devices else None

    def on_device(self, node: Any, device: Any) -> Any:
        if _unconstrained(device) or not isinstance(node, Expr) or isinstance(node, Var):
            return node
        if isinstance(node, Function) or _fixed_on_device(node) is not None:
            return node
        return on_device(node, device, constrain_result=True)

    def visit(self, node: Any, var: Var | None = None) -> Any:
        if not isinstance(node, Expr):  # an op
            return node
        key = id(node)
        if key not in self.memo:
            self.memo[key] = self.dispatch(node, var)
        elif var is not None:
            self.scope_of(node).push(var, self.memo[key])
        return self.memo[key]

    def atomic(self, node: Any, var: Var | None) -> Any:
        value = self.on_device(node, self.device_of(node))
        return value if var is None else self.scope_of(node).push(var, value)

    def compound(self, orig: Any, now: Any, var: Var | None) -> Any:
        value = self.on_device(now, self.device_of(orig))
        if var is None and self.include is not None and id(orig) not in self.include:
            return value
        if var is None:
            self.count += 1
            var = Var(f"x{self.count}")
        here = self.scope_of(orig)
        if isinstance(now, Let):  # let var = (let x = ...; e): the bindings, then var = e
            while isinstance(now, Let):
                here.push(now.var, now.value)
                now = now.body
            value = self.on_device(now, self.device_of(orig))
        return here.push(var, value)

    def dispatch(self, node: Any, var: Var | None) -> Any:
        fixed = _fixed_on_device(node)
        if fixed is not None:
            self.devices.append(fixed.virtual_device)
            body = self.visit(node.args[0], var)
            self.devices.pop()
            return Call(node.op, [body], node.attrs, node.type_args)
        if isinstance(node, Var | GlobalRef | Constructor):
            return self.atomic(node, var)
        if isinstance(node, Let):
            self.var_devices[id(node.var)] = self.device_of(node.value)
            self.visit(node.value, node.var)
            return self.compound(node, self.sub(node, 0).get(self.visit(node.body)), var)
        if isinstance(node, If):
            cond = self.visit(node.cond)
            branches = [
                self.sub(node, i).get(self.visit(b))
                for i, b in enumerate((node.true_branch, node.false_branch))
            ]
            return self.compound(node, If(cond, *branches), var)
        if isinstance(node, Function):
            if _primitive(node):
                out: Any = node
            else:
                body = self.sub(node, 0).get(self.visit(node.body))
                out = Function(node.params, body, node.ret_type, node.type_params, node.attrs)
            return self.compound(node, out, var)
        if isinstance(node, Match):
            data = self.visit(node.data)
            clauses = [
                Clause(c.lhs, self.sub(node, i).get(self.visit(c.rhs)))
                for i, c in enumerate(node.clauses)
            ]
            return self.compound(node, Match(data, clauses, node.complete), var)
        if isinstance(node, Call):  # the arguments before the operator, as TVM 0.19
            args = [self.visit(a) for a in node.args]
            op = self.visit(node.op)
            return self.compound(node, Call(op, args, node.attrs, node.type_args), var)
        return self.compound(node, rebuild(node, [self.visit(c) for c in children(node)]), var)


def to_normal_form(func: Function, bind_all: bool) -> Function:
    """``func`` in A-normal form (``bind_all``) or basic-block normal form."""
    fill = _Fill(func, bind_all)
    body = fill.sub(func, 0).get(fill.visit(func.body))
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
