"""``relay.transform.ManifestLifetimes``: a ``memory.kill`` after each variable's last use, on
the Relay graph, as TVM 0.19's VM backend inserted them.

Each function (in A-normal form) is first rid of aliases (``let %y = %x`` bindings, and a
``match`` clause binding its whole data: the alias is replaced by what it names), then its
liveness computed (:mod:`.liveness`); after each ``let`` binding come the kills of the variables
live before it and not after it, each bound as ``let %x = memory.kill(%v)``. A Relax build frees
memory by its own plan (``memory.kill`` is the empty tuple there); the pass gives the program TVM
0.19 gave.

Difference from TVM 0.19: a ``device_copy`` between two equal devices is not taken as an alias
(a build of the shim is for one device, and keeps such copies as the value itself).
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from ..adt import Clause, Match, PatternVar
from ..expr import Call, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..op.op import builder
from .liveness import Liveness, on_device_body
from .module_functions import Functions, module_graph_pass

__all__ = ["LetChains", "ManifestLifetimes", "manifest_lifetimes"]


def lets(bindings: list[tuple[Var, Any]], body: Any) -> Any:
    """``body`` under the ``let`` ``bindings``, the first outermost."""
    for var, value in reversed(bindings):
        body = Let(var, value, body)
    return body


class LetChains:
    """A rewrite of the ``let`` chains of a function; other nodes are rebuilt around them.

    Each binding's value is visited, then passed to :meth:`binding` (its new value) and
    followed by the bindings :meth:`after` gives.
    """

    def visit(self, expr: Any) -> Any:
        if isinstance(expr, Let):
            return self.let_chain(expr)
        if isinstance(expr, Var):
            return self.var(expr)
        if isinstance(expr, Call):
            op = self.visit(expr.op) if isinstance(expr.op, Var | Function | Let) else expr.op
            return Call(op, [self.visit(a) for a in expr.args], expr.attrs, expr.type_args)
        if isinstance(expr, Tuple):
            return Tuple([self.visit(f) for f in expr.fields])
        if isinstance(expr, TupleGetItem):
            return TupleGetItem(self.visit(expr.tuple_value), expr.index)
        if isinstance(expr, If):
            return If(
                self.visit(expr.cond), self.visit(expr.true_branch), self.visit(expr.false_branch)
            )
        if isinstance(expr, Match):
            return self.match(expr)
        if isinstance(expr, Function):
            return Function(
                expr.params, self.visit(expr.body), expr.ret_type, expr.type_params, expr.attrs
            )
        return expr

    def var(self, var: Var) -> Any:
        return var

    def match(self, match: Match) -> Any:
        clauses = [Clause(c.lhs, self.visit(c.rhs)) for c in match.clauses]
        return Match(self.visit(match.data), clauses, match.complete)

    def let_chain(self, let: Let) -> Any:
        bindings: list[tuple[Var, Any]] = []
        expr: Any = let
        while isinstance(expr, Let):
            bindings.append((expr.var, self.binding(expr, self.visit(expr.value))))
            bindings.extend(self.after(expr))
            expr = expr.body
        return lets(bindings, self.visit(expr))

    def binding(self, let: Let, value: Any) -> Any:
        """The new value of ``let``'s variable (``value``: the visited old one)."""
        return value

    def after(self, let: Let) -> list[tuple[Var, Any]]:
        """The bindings to put after ``let``'s."""
        return []


class _Aliases(LetChains):
    """``let %y = %x`` removed, ``%y`` replaced by ``%x`` (transitively)."""

    def __init__(self) -> None:
        self.alias: dict[int, Var] = {}

    def var(self, var: Var) -> Any:
        return self.alias.get(id(var), var)

    def let_chain(self, let: Let) -> Any:
        bindings: list[tuple[Var, Any]] = []
        aliased: list[int] = []
        expr: Any = let
        while isinstance(expr, Let):
            if isinstance(on_device_body(expr.value), Var):
                self.alias[id(expr.var)] = self.var(on_device_body(expr.value))
                aliased.append(id(expr.var))
            else:
                bindings.append((expr.var, self.visit(expr.value)))
            expr = expr.body
        out = lets(bindings, self.visit(expr))
        for key in aliased:
            del self.alias[key]
        return out

    def match(self, match: Match) -> Any:
        data = on_device_body(match.data)
        if not isinstance(data, Var):
            return super().match(match)
        data = self.var(data)
        clauses = []
        for clause in match.clauses:
            bound = clause.lhs.var if isinstance(clause.lhs, PatternVar) else None
            if bound is not None:
                self.alias[id(bound)] = data
            clauses.append(Clause(clause.lhs, self.visit(clause.rhs)))
            if bound is not None:
                del self.alias[id(bound)]
        return Match(data, clauses, match.complete)


class _Kills(LetChains):
    """After each binding, the kills of the variables that die there."""

    def __init__(self, liveness: Liveness) -> None:
        self.liveness = liveness
        self.kill = builder("memory.kill")

    def let_chain(self, let: Let) -> Any:
        if let not in self.liveness:  # a nested function's: not analysed, kept
            return let
        return super().let_chain(let)

    def after(self, let: Let) -> list[tuple[Var, Any]]:
        dead = {id(v) for v in self.liveness.live_out(let)}
        return [(Var("x"), self.kill(v)) for v in self.liveness.live_in(let) if id(v) not in dead]


def manifest_lifetimes(func: Function) -> Function:
    """``func`` with its aliases removed and a ``memory.kill`` after each last use."""
    func = _Aliases().visit(func)
    out: Function = _Kills(Liveness(func)).visit(func)
    return out


def _run(functions: Functions) -> Functions:
    return {
        gvar: manifest_lifetimes(func) if isinstance(func, Function) else func
        for gvar, func in functions.items()
    }


@legacy_api("relay.transform.more_passes")
def ManifestLifetimes() -> tvm.transform.Pass:
    """``relay.transform.ManifestLifetimes()`` (opt level 0), on the Relay graph: a
    ``memory.kill`` of each variable bound after the binding where it dies."""
    return module_graph_pass("ManifestLifetimes", 0, _run)
