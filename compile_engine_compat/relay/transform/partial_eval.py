"""``relay.transform.PartialEvaluate``: what is known before run time computed, on the Relay
graph, after TVM 0.19's partial evaluator.

Each global function's body is evaluated with its parameters unknown. A value is known
(static) when it is a constant, a tuple or constructor value of known fields, a function (its
closure), or a reference created here. Op calls on constants are folded; calls of known
functions (function literals, ``let``-bound closures, global functions with no ``Compiler``
attribute) are unfolded with their arguments bound; ``If`` and ``match`` on known values take
their branch; reference reads of known contents are replaced by the contents. What stays
unknown is emitted, in evaluation order, as ``let`` bindings of the function's body, as TVM
0.19 residualized it (``DeadCodeElimination(inline_once=True)`` then folds single uses back).

Differences from TVM 0.19: a global or ``let``-bound function (one that may call itself) is
unfolded only on known arguments, and calls at most :data:`MAX_DEPTH` deep (TVM 0.19 also
unfolded on unknown arguments, memoizing); a known reference's contents are forgotten after an
unknown branch or call instead of being merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.frontend_helpers import fold_constant
from compile_engine_compat.relay._impl.registry import RelayOp

from ..adt import Clause, Constructor, Match, PatternConstructor, PatternTuple, PatternVar
from ..expr import Call, Constant, If, Let, RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var
from ..function import Function
from .module_functions import Functions, module_graph_pass

__all__ = ["MAX_DEPTH", "PartialEvaluate"]

#: How deep known calls are unfolded (a deeper call is left as a call).
MAX_DEPTH = 32


@dataclass
class _Static:
    """A value known before run time: ``kind`` is const, tuple, ctor, closure or ref."""

    kind: str
    value: Any = None
    fields: list[Any] = field(default_factory=list)
    env: dict[int, Any] = field(default_factory=dict)


#: An evaluated expression: (its residual, atomic expression; its static value or None).
_PStatic = tuple[Any, _Static | None]


class _Scope:
    def __init__(self) -> None:
        self.bindings: list[tuple[Var, Any]] = []
        self.count = 0

    def wrap(self, result: Any) -> Any:
        for var, value in reversed(self.bindings):
            result = Let(var, value, result)
        return result


class _Evaluator:
    def __init__(self, functions: dict[str, Any]) -> None:
        self.functions = functions
        self.scopes: list[_Scope] = []
        self.store: dict[int, _PStatic] = {}
        self.depth = 0
        self.fresh = 0

    # -- residual code
    def emit(self, expr: Any) -> Any:
        if isinstance(expr, Var | Constant | tvm.ir.GlobalVar | Constructor | RelayOp):
            return expr
        self.fresh += 1
        var = Var(f"x{self.fresh}")
        self.scopes[-1].bindings.append((var, expr))
        return var

    def scoped(self, run: Any) -> Any:
        self.scopes.append(_Scope())
        result = run()
        return self.scopes.pop().wrap(result)

    def forget_store(self) -> None:
        self.store = {}

    # -- evaluation
    def eval(self, expr: Any, env: dict[int, _PStatic]) -> _PStatic:
        if isinstance(expr, Var):
            return env.get(id(expr), (expr, None))
        if isinstance(expr, Constant):
            return expr, _Static("const", expr)
        if isinstance(expr, Tuple):
            parts = [self.eval(f, env) for f in expr.fields]
            res = self.emit(Tuple([p[0] for p in parts]))
            known = all(p[1] is not None for p in parts)
            return res, _Static("tuple", fields=parts) if known else None
        if isinstance(expr, TupleGetItem):
            res, static = self.eval(expr.tuple_value, env)
            if static is not None and static.kind == "tuple":
                return static.fields[expr.index]
            return self.emit(TupleGetItem(res, expr.index)), None
        if isinstance(expr, Function):
            return self.function(expr, env), _Static("closure", expr, env=dict(env))
        if isinstance(expr, Let):
            return self.let(expr, env)
        if isinstance(expr, If):
            return self.branch(expr, env)
        if isinstance(expr, Call):
            return self.call(expr, env)
        if isinstance(expr, RefCreate):
            value = self.eval(expr.value, env)
            res = self.emit(RefCreate(value[0]))
            self.store[id(res)] = value
            return res, _Static("ref", res)
        if isinstance(expr, RefRead):
            ref, static = self.eval(expr.ref, env)
            if static is not None and static.kind == "ref" and id(static.value) in self.store:
                return self.store[id(static.value)]
            return self.emit(RefRead(ref)), None
        if isinstance(expr, RefWrite):
            ref, static = self.eval(expr.ref, env)
            value = self.eval(expr.value, env)
            self.emit(RefWrite(ref, value[0]))
            if static is not None and static.kind == "ref":
                self.store[id(static.value)] = value
            else:
                self.forget_store()
            empty = Tuple([])
            return empty, _Static("tuple", fields=[])
        if isinstance(expr, Match):
            return self.match(expr, env)
        return expr, None  # a GlobalVar as a value, a constructor, an op

    def function(self, func: Function, env: dict[int, _PStatic]) -> Function:
        saved_store, self.store = self.store, {}
        inner = {**env, **{id(p): (p, None) for p in func.params}}
        body = self.scoped(lambda: self.eval(func.body, inner)[0])
        self.store = saved_store
        return Function(func.params, body, func.ret_type, func.type_params, func.attrs)

    def let(self, let: Let, env: dict[int, _PStatic]) -> _PStatic:
        if isinstance(let.value, Function):  # a let-bound function may call itself
            env = {**env, id(let.var): (let.var, None)}
            closure = _Static("closure", let.value, env=env)
            env[id(let.var)] = (let.var, closure)
            self.scopes[-1].bindings.append((let.var, self.function(let.value, env)))
            return self.eval(let.body, env)
        res, static = self.eval(let.value, env)
        return self.eval(let.body, {**env, id(let.var): (res, static)})

    def branch(self, node: If, env: dict[int, _PStatic]) -> _PStatic:
        cond, static = self.eval(node.cond, env)
        if static is not None and static.kind == "const":
            return self.eval(
                node.true_branch if bool(static.value.data.numpy()) else node.false_branch, env
            )
        saved = dict(self.store)
        sides = []
        for side in (node.true_branch, node.false_branch):
            self.store = dict(saved)
            sides.append(self.scoped(lambda side=side: self.eval(side, env)[0]))
        self.forget_store()
        return self.emit(If(cond, *sides)), None

    def call(self, call: Call, env: dict[int, _PStatic]) -> _PStatic:
        op = call.op
        if isinstance(op, RelayOp):
            args = [self.eval(a, env) for a in call.args]
            new = Call(op, [a[0] for a in args], call.attrs, call.type_args)
            if args and all(a[1] is not None and a[1].kind == "const" for a in args):
                folded = fold_constant(new)
                if isinstance(folded, Constant):
                    return folded, _Static("const", folded)
            return self.emit(new), None
        if isinstance(op, Constructor):
            args = [self.eval(a, env) for a in call.args]
            res = self.emit(Call(op, [a[0] for a in args]))
            known = all(a[1] is not None for a in args)
            return res, _Static("ctor", op, fields=args) if known else None
        callee: _PStatic
        if isinstance(op, tvm.ir.GlobalVar):
            func = self.functions.get(str(op.name_hint))
            known_global = isinstance(func, Function) and "Compiler" not in func.attrs
            callee = (op, _Static("closure", func, env={}) if known_global else None)
        else:
            callee = self.eval(op, env)
        args = [self.eval(a, env) for a in call.args]
        static = callee[1]
        # A function that may call itself (global, let-bound) is unfolded on known arguments
        # only: its recursion then ends where the program's does.
        maybe_recursive = not isinstance(op, Function)
        if maybe_recursive and any(a[1] is None for a in args):
            static = None
        if static is not None and static.kind == "closure" and self.depth < MAX_DEPTH:
            func = static.value
            if len(func.params) == len(args):
                inner = dict(static.env)
                for param, arg in zip(func.params, args, strict=True):
                    inner[id(param)] = arg
                self.depth += 1
                try:
                    return self.eval(func.body, inner)
                finally:
                    self.depth -= 1
        self.forget_store()  # an unknown callee may write any reference
        return self.emit(Call(callee[0], [a[0] for a in args], call.attrs, call.type_args)), None

    def match(self, node: Match, env: dict[int, _PStatic]) -> _PStatic:
        data = self.eval(node.data, env)
        try:
            for clause in node.clauses:
                bound = _bind_pattern(clause.lhs, data) if data[1] is not None else None
                if bound is not None:
                    return self.eval(clause.rhs, {**env, **bound})
        except _Unknown:
            pass  # a field the pattern looks into is not known: the match stays
        saved = dict(self.store)
        clauses = []
        for clause in node.clauses:
            self.store = dict(saved)
            rhs = self.scoped(lambda c=clause: self.eval(c.rhs, env)[0])
            clauses.append(Clause(clause.lhs, rhs))
        self.forget_store()
        return self.emit(Match(data[0], clauses, node.complete)), None


def _bind_pattern(pattern: Any, value: _PStatic) -> dict[int, _PStatic] | None:
    """The variables ``pattern`` binds when ``value`` (known) matches it, or None."""
    if isinstance(pattern, PatternVar):
        return {id(pattern.var): value}
    static = value[1]
    if isinstance(pattern, PatternConstructor | PatternTuple):
        if static is None:
            raise _Unknown
        if isinstance(pattern, PatternConstructor):
            if static.kind != "ctor" or static.value is not pattern.constructor:
                return None
        elif static.kind != "tuple":
            return None
        out: dict[int, _PStatic] = {}
        for sub, part in zip(pattern.patterns, static.fields, strict=True):
            found = _bind_pattern(sub, part)
            if found is None:
                return None
            out.update(found)
        return out
    return {}  # a wildcard


class _Unknown(Exception):
    """A pattern looked into a field that is not known."""


def _evaluate(functions: Functions) -> Functions | None:
    by_name = {str(g.name_hint): f for g, f in functions.items()}
    out: Functions = {}
    for gvar, func in functions.items():
        if not isinstance(func, Function) or "Compiler" in func.attrs or "Primitive" in func.attrs:
            out[gvar] = func
            continue
        out[gvar] = _Evaluator(by_name).function(func, {})
    return out


@legacy_api("relay.transform.more_passes")
def PartialEvaluate() -> tvm.transform.Pass:
    """``relay.transform.PartialEvaluate()`` (opt level 1): what is known before run time
    computed, on the Relay graph (see the module docstring)."""
    return module_graph_pass("PartialEvaluate", 1, _evaluate)
