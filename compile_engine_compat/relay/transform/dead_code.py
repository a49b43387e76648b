"""``relay.transform.DeadCodeElimination``: unused ``let`` bindings removed on the Relay graph,
as TVM 0.19's pass did.

A ``let`` whose variable is not used (a function's uses of itself do not count) is dropped when
its value is pure; with ``inline_once`` a pure value used once, in the same function, replaces
its variable. Impure values are kept where they are: reference reads and writes, calls of
global functions that are impure, calls of functions held in variables (unknown), unless
``ignore_impurity``. Functions with no Relay graph (made by a Relax pass) are handed to
``relax.transform.DeadCodeElimination``.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, bind, children
from compile_engine_compat.relay._impl.passes import relay_pass

from ..expr import Call, Let, RefRead, RefWrite, Var
from ..function import Function
from .module_functions import module_of, relay_definitions

__all__ = ["DeadCodeElimination"]


class _Purity:
    """Whether evaluating an expression has effects (references, impure callees)."""

    def __init__(self, functions: dict[str, Any]) -> None:
        self.functions = functions
        self.global_pure: dict[str, bool] = {}

    def pure(self, expr: Any) -> bool:
        stack, seen = [expr], set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, RefRead | RefWrite):
                return False
            if isinstance(node, Function):
                continue  # making a closure has no effect
            if isinstance(node, Call) and not self._pure_callee(node.op):
                return False
            stack.extend(children(node))
        return True

    def _pure_callee(self, op: Any) -> bool:
        if isinstance(op, tvm.ir.GlobalVar):
            name = str(op.name_hint)
            if name not in self.global_pure:
                self.global_pure[name] = True  # a recursive call is as pure as its function
                func = self.functions.get(name)
                body_pure = isinstance(func, Function) and self.pure(func.body)
                self.global_pure[name] = body_pure
            return self.global_pure[name]
        if isinstance(op, Function):
            return self.pure(op.body)
        return not isinstance(op, Var | Call)  # an op or a constructor


def _uses(func: Function) -> tuple[dict[int, int], set[int]]:
    """Each variable's number of uses, and the let-bound variables used inside a function
    nested in the one that binds them."""
    counts: dict[int, int] = {}
    used_at: dict[int, int] = {}
    bound_at: dict[int, int] = {}
    stack: list[tuple[Any, int]] = [(func.body, 0)]
    seen: set[int] = set()
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        inner = depth + 1 if isinstance(node, Function) else depth
        if isinstance(node, Let):
            bound_at[id(node.var)] = depth
        kids = children(node)
        if isinstance(node, Let | Function):  # the variables they bind come first
            kids = kids[1:] if isinstance(node, Let) else kids[len(node.params) :]
        for child in kids:
            if isinstance(child, Var):
                counts[id(child)] = counts.get(id(child), 0) + 1
                used_at[id(child)] = max(used_at.get(id(child), 0), inner)
            else:
                stack.append((child, inner))
    nested = {v for v, at in used_at.items() if at > bound_at.get(v, 0)}
    return counts, nested


def _self_uses(let: Let) -> int:
    """How often a let-bound function uses its own variable (recursion)."""
    if not isinstance(let.value, Function):
        return 0
    counts, _ = _uses(Function([], let.value))
    return counts.get(id(let.var), 0)


class _Eliminate(GraphMutator):
    def __init__(self, func: Function, purity: _Purity, inline_once: bool, ignore: bool) -> None:
        super().__init__()
        self.counts, self.nested = _uses(func)
        self.purity = purity
        self.inline_once = inline_once
        self.ignore = ignore

    def _forget(self, value: Any) -> None:
        for var in _var_uses(value):
            self.counts[var] = self.counts.get(var, 0) - 1

    def visit_let(self, let: Let) -> Any:
        value = self.visit(let.value)
        body = self.visit(let.body)
        uses = self.counts.get(id(let.var), 0) - _self_uses(let)
        pure = self.ignore or self.purity.pure(let.value)
        if uses == 0 and pure:
            self._forget(let.value)  # its variables lose a use: an outer let may go too
            return body
        once = uses == 1 and id(let.var) not in self.nested and _self_uses(let) == 0
        if self.inline_once and once and pure:
            return bind(body, {let.var: value})
        if value is let.value and body is let.body:
            return let
        return Let(let.var, value, body)


def _var_uses(expr: Any) -> list[int]:
    """The variables ``expr`` uses, once per use."""
    if isinstance(expr, Var):
        return [id(expr)]
    holder = Function([], expr)
    counts, _ = _uses(holder)
    return [v for v, n in counts.items() for _ in range(n)]


def _eliminate(mod: tvm.IRModule, inline_once: bool, ignore: bool) -> tvm.IRModule:
    functions = relay_definitions(mod)
    if not any(isinstance(f, Function) for f in functions.values()):
        return relax.transform.DeadCodeElimination()(mod)
    purity = _Purity({str(g.name_hint): f for g, f in functions.items()})
    out: dict[Any, Any] = {}
    changed = False
    for gvar, func in functions.items():
        if isinstance(func, Function):
            body = _Eliminate(func, purity, inline_once, ignore).visit(func.body)
            if body is not func.body:
                changed = True
                func = Function(func.params, body, func.ret_type, func.type_params, func.attrs)
        out[gvar] = func
    return module_of(out, mod) if changed else mod


@legacy_api("relay.transform")
def DeadCodeElimination(inline_once: bool = False, ignore_impurity: bool = False) -> Any:
    """``relay.transform.DeadCodeElimination(inline_once=False, ignore_impurity=False)``
    (opt level 1), on the Relay graph: unused pure ``let`` bindings removed; with
    ``inline_once`` a pure value used once inlined (see the module docstring)."""
    return relay_pass(
        "DeadCodeElimination",
        1,
        lambda mod: _eliminate(mod, bool(inline_once), bool(ignore_impurity)),
    )
