"""The evaluator: a Relay program run node by node, as TVM 0.19's interpreter ran it.

Closures capture the frame they were made in (so a ``let``-bound function can call itself),
calls to module functions go through the module (recursion included), ``let``, ``if``,
``match`` and calls in tail position loop instead of recursing (a tail-recursive ``foldl`` runs
in constant Python stack), references are mutable cells, and each op call is built once per
concrete type (:mod:`.primitives`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.relay.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
)
from compile_engine_compat.relay.expr import (
    BaseOp,
    Call,
    Constant,
    Expr,
    GlobalRef,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleWrapper,
    Var,
)
from compile_engine_compat.relay.function import Function

from .definitions import relay_definition
from .primitives import run_primitive
from .values import Closure, ConstructorValue, RefValue, from_python, to_python

__all__ = ["Interpreter", "MatchError"]


class MatchError(RuntimeError):
    """No clause of a ``match`` matched its value (TVM 0.19: "did not find any match")."""


class Interpreter:
    """Evaluates Relay expressions in a module.

    Parameters
    ----------
    mod : tvm.IRModule or None
        Where ``GlobalVar`` calls are looked up.
    target : tvm.target.Target
        What op calls are built for.
    device : tvm.runtime.Device
        Where they run.
    """

    def __init__(self, mod: Any, target: Any, device: Any) -> None:
        self.mod = mod
        self.target = target
        self.device = device
        self._globals: dict[Any, Closure] = {}

    # -- entry points ---------------------------------------------------------------------------
    def evaluate(self, expr: Any, params: Mapping[str, Any] | None = None) -> Any:
        """The value of ``expr`` (a Python callable for a function), as it leaves the
        interpreter; ``params`` bind a function's parameters by name (Relay's ``params``)."""
        if isinstance(expr, TupleWrapper):
            expr = expr.astuple()  # a multi-output call (relay.split(...))
        if isinstance(expr, tvm.ir.GlobalVar):
            value: Any = self.global_closure(expr)
        else:
            value = self.eval(expr, {})
        if params and isinstance(value, Closure):
            value = self._bind_params(value, params)
        return to_python(value)

    def _bind_params(self, closure: Closure, params: Mapping[str, Any]) -> Any:
        names = [p.name_hint for p in closure.func.params]
        rest = [p for p in closure.func.params if p.name_hint not in params]
        bound = {n: from_python(params[n]) for n in names if n in params}

        def run(*args: Any) -> Any:
            given = dict(zip([p.name_hint for p in rest], [from_python(a) for a in args]))
            values = [bound[n] if n in bound else given[n] for n in names]
            return to_python(self.call(closure, values))

        return run

    def global_closure(self, gvar: Any) -> Closure:
        """The closure of the module function ``gvar`` names."""
        found = self._globals.get(gvar)
        if found is None:
            if self.mod is None:
                raise ValueError(f"@{gvar.name_hint} is called, but no module was given")
            try:
                func = self.mod[gvar]
            except (KeyError, ValueError, RuntimeError) as err:
                raise ValueError(f"@{gvar.name_hint} is not a function of the module") from err
            relay_func = relay_definition(func)
            if relay_func is None:
                raise TypeError(
                    f"@{gvar.name_hint} is a function the Relay front end did not build (a Relax "
                    "or TIR function): the interpreter evaluates Relay functions only"
                )
            found = self._globals[gvar] = Closure(relay_func, {}, self.call)
        return found

    def call(self, func: Any, args: Sequence[Any]) -> Any:
        """``func(*args)`` for a function value (closure, constructor, Python callable)."""
        if isinstance(func, Closure):
            return self.eval(func.func.body, self._frame(func, args))
        return self._apply_other(func, args)

    # -- the walk ---------------------------------------------------------------------------
    def eval(self, expr: Any, env: dict[Any, Any]) -> Any:
        """The value of ``expr`` in ``env`` (Var -> value); ``env`` gains the bindings made."""
        while True:
            if isinstance(expr, Let):
                env[expr.var] = self.eval(expr.value, env)
                expr = expr.body
            elif isinstance(expr, If):
                cond = self.eval(expr.cond, env)
                expr = expr.true_branch if _truth(cond) else expr.false_branch
            elif isinstance(expr, Match):
                expr = self._clause(expr, self.eval(expr.data, env), env).rhs
            elif isinstance(expr, Call) and not isinstance(expr.op, BaseOp | Constructor):
                func = self._callee(expr.op, env)
                args = [self.eval(a, env) for a in expr.args]
                if not isinstance(func, Closure):
                    return self._apply_other(func, args)
                env = self._frame(func, args)
                expr = func.func.body
            else:
                return self._value(expr, env)

    def _value(self, expr: Any, env: dict[Any, Any]) -> Any:
        """The value of a node that is not in :meth:`eval`'s loop."""
        if isinstance(expr, Var):
            if expr not in env:
                raise ValueError(
                    f"free variable {expr!r}: it is bound by no let, match or function"
                )
            return env[expr]
        if isinstance(expr, Constant):
            return expr.data
        if isinstance(expr, Tuple):
            return tuple(self.eval(f, env) for f in expr.fields)
        if isinstance(expr, TupleGetItem):
            return self.eval(expr.tuple_value, env)[expr.index]
        if isinstance(expr, Function):
            return Closure(expr, env, self.call)
        if isinstance(expr, Call):
            args = [self.eval(a, env) for a in expr.args]
            if isinstance(expr.op, Constructor):
                return ConstructorValue(expr.op.tag, args, expr.op)
            return run_primitive(expr, args, self.target, self.device)
        if isinstance(expr, GlobalRef):
            return self.global_closure(expr.var)
        if isinstance(expr, Constructor):
            return expr
        if isinstance(expr, RefCreate):
            return RefValue(self.eval(expr.value, env))
        if isinstance(expr, RefRead):
            # A reference that left the interpreter holds its value as Python sees it.
            return from_python(self._ref(expr.ref, env).value)
        if isinstance(expr, RefWrite):
            ref = self._ref(expr.ref, env)
            ref.value = self.eval(expr.value, env)
            return ()
        raise TypeError(f"the interpreter cannot evaluate {type(expr).__name__}: {expr!r}")

    def _ref(self, expr: Expr, env: dict[Any, Any]) -> RefValue:
        ref = self.eval(expr, env)
        if not isinstance(ref, RefValue):
            raise TypeError(f"a reference was expected, got {ref!r}")
        return ref

    def _callee(self, op: Any, env: dict[Any, Any]) -> Any:
        if isinstance(op, tvm.ir.GlobalVar):
            return self.global_closure(op)
        return self.eval(op, env)

    def _frame(self, closure: Closure, args: Sequence[Any]) -> dict[Any, Any]:
        params = closure.func.params
        if len(params) != len(args):
            raise TypeError(f"{closure.func!r} takes {len(params)} arguments, got {len(args)}")
        frame = dict(closure.env)
        frame.update(zip(params, args))
        return frame

    def _apply_other(self, func: Any, args: Sequence[Any]) -> Any:
        if isinstance(func, Constructor):
            return ConstructorValue(func.tag, list(args), func)
        if callable(func):
            return from_python(func(*[to_python(a) for a in args]))
        raise TypeError(f"a function was expected in call position, got {func!r}")

    def _clause(self, match: Match, data: Any, env: dict[Any, Any]) -> Clause:
        """The first clause of ``match`` whose pattern matches ``data`` (its variables bound
        into ``env``)."""
        for clause in match.clauses:
            binds: dict[Any, Any] = {}
            if _matches(clause.lhs, data, binds):
                env.update(binds)
                return clause
        raise MatchError(
            f"did not find any match: no clause of the match matches the value {to_python(data)!r}"
        )


def _truth(cond: Any) -> bool:
    if not isinstance(cond, tvm.runtime.Tensor):
        raise TypeError(f"an if condition is a boolean tensor, got {cond!r}")
    return bool(np.asarray(cond.numpy()).reshape(-1)[0])


def _matches(pattern: Pattern, value: Any, binds: dict[Any, Any]) -> bool:
    if isinstance(pattern, PatternWildcard):
        return True
    if isinstance(pattern, PatternVar):
        binds[pattern.var] = value
        return True
    if isinstance(pattern, PatternConstructor):
        if not isinstance(value, ConstructorValue) or value.tag != pattern.constructor.tag:
            return False
        made_by = value.constructor
        if isinstance(made_by, Constructor) and made_by.belong_to is not (
            pattern.constructor.belong_to
        ):
            return False
        fields = value.fields
    elif isinstance(pattern, PatternTuple):
        if not isinstance(value, tuple):
            return False
        fields = list(value)
    else:
        raise TypeError(f"unknown pattern {pattern!r}")
    if len(fields) != len(pattern.patterns):
        return False
    return all(_matches(p, v, binds) for p, v in zip(pattern.patterns, fields))
