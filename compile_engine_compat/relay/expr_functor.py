"""``relay.expr_functor``: ``ExprFunctor``, ``ExprVisitor``, ``ExprMutator`` over the Relay graph.

Relay-era code writes its own passes with these classes: a subclass overrides ``visit_call`` (or
another ``visit_*``) and calls ``visit(expr)``. They walk the front end's Relay graph (the nodes
of :mod:`.expr` and :mod:`.function`) with Relay's dispatch and Relay's memoisation: each node is
visited once per functor, its result kept in ``memo_map`` (keyed by the node: nodes compare by
identity, as Relay's did by reference).

``visit`` also takes the Relax function TVM holds for a front-end function (``mod["main"]``, or
what a ``function_pass`` receives) and walks the Relay function it was built from
(:mod:`.origin`). A Relax function with no Relay origin (one a Relax pass rewrote) is refused
with a ``TypeError`` naming ``relax.PyExprVisitor``/``relax.PyExprMutator``.

References (``RefCreate``/``RefRead``/``RefWrite``), ADT constructors and ``Match``
(:mod:`.adt`) dispatch to ``visit_ref_create``/``visit_ref_read``/``visit_ref_write``/
``visit_constructor``/``visit_match`` as in Relay; ``relay.build`` refuses them afterwards.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin

from .adt import Clause, Constructor, Match
from .expr import (
    BaseOp,
    Call,
    Constant,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from .function import Function

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor"]


def relay_node(expr: Any) -> Any:
    """``expr``, or the Relay function a Relax function of the front end was built from.

    Raises
    ------
    TypeError
        For a Relax function the front end did not build (or no longer remembers).
    """
    if isinstance(expr, tvm.IRModule | tvm.relax.Function):
        found = origin.relay_of(expr)
        if found is None:
            raise TypeError(
                "relay.ExprFunctor walks the Relay graph of the front end; this Relax function "
                "has none (a Relax pass built it, or it was not built by tvm.relay): walk it with "
                "tvm.relax.PyExprVisitor / tvm.relax.PyExprMutator"
            )
        return found
    return expr


@legacy_api("relay.expr_functor")
class ExprFunctor:
    """Relay's abstract visitor: dispatch on the node's class, and memoisation.

    Attributes
    ----------
    memo_map : dict
        Node -> the result of visiting it (each node is visited once).
    """

    def __init__(self) -> None:
        self.memo_map: dict[Any, Any] = {}

    def visit(self, expr: Any) -> Any:
        """Apply the functor to ``expr`` (once per node: later visits return the memo).

        Parameters
        ----------
        expr : relay.Expr, relay op, GlobalVar, or a front-end Relax function
            What to visit.

        Returns
        -------
        object
            What the ``visit_*`` method of the node's class returned.
        """
        expr = relay_node(expr)
        if expr in self.memo_map:
            return self.memo_map[expr]
        res = self._dispatch(expr)
        self.memo_map[expr] = res
        return res

    def _dispatch(self, expr: Any) -> Any:
        if isinstance(expr, Function):
            return self.visit_function(expr)
        if isinstance(expr, Call):
            return self.visit_call(expr)
        if isinstance(expr, Let):
            return self.visit_let(expr)
        if isinstance(expr, Var):
            return self.visit_var(expr)
        if isinstance(expr, tvm.ir.GlobalVar):
            return self.visit_global_var(expr)
        if isinstance(expr, If):
            return self.visit_if(expr)
        if isinstance(expr, Tuple):
            return self.visit_tuple(expr)
        if isinstance(expr, TupleGetItem):
            return self.visit_tuple_getitem(expr)
        if isinstance(expr, Constant):
            return self.visit_constant(expr)
        if isinstance(expr, BaseOp | tvm.ir.Op):
            return self.visit_op(expr)
        return self._dispatch_adt(expr)

    def _dispatch_adt(self, expr: Any) -> Any:
        """The reference and ADT nodes (:mod:`.adt`)."""
        if isinstance(expr, Constructor):
            return self.visit_constructor(expr)
        if isinstance(expr, Match):
            return self.visit_match(expr)
        if isinstance(expr, RefCreate):
            return self.visit_ref_create(expr)
        if isinstance(expr, RefRead):
            return self.visit_ref_read(expr)
        if isinstance(expr, RefWrite):
            return self.visit_ref_write(expr)
        raise TypeError(f"relay.ExprFunctor: unhandled case {type(expr).__name__} ({expr!r})")

    def visit_function(self, fn: Function) -> Any:
        """Visit a ``relay.Function``."""
        raise NotImplementedError()

    def visit_let(self, let: Let) -> Any:
        """Visit a ``relay.Let``."""
        raise NotImplementedError()

    def visit_call(self, call: Call) -> Any:
        """Visit a ``relay.Call``."""
        raise NotImplementedError()

    def visit_var(self, var: Var) -> Any:
        """Visit a ``relay.Var``."""
        raise NotImplementedError()

    def visit_type(self, typ: Any) -> Any:
        """Visit a type: returns it, as Relay's did."""
        return typ

    def visit_if(self, ite: If) -> Any:
        """Visit a ``relay.If``."""
        raise NotImplementedError()

    def visit_tuple(self, tup: Tuple) -> Any:
        """Visit a ``relay.Tuple``."""
        raise NotImplementedError()

    def visit_tuple_getitem(self, op: TupleGetItem) -> Any:
        """Visit a ``relay.TupleGetItem``."""
        raise NotImplementedError()

    def visit_global_var(self, gvar: Any) -> Any:
        """Visit a ``GlobalVar`` (a call to a function of the module)."""
        raise NotImplementedError()

    def visit_op(self, op: Any) -> Any:
        """Visit an op (``relay.op.get(name)``)."""
        raise NotImplementedError()

    def visit_constant(self, const: Constant) -> Any:
        """Visit a ``relay.Constant``."""
        raise NotImplementedError()

    def visit_ref_create(self, ref: Any) -> Any:
        """Relay's reference node: the front end builds none (Relax values are immutable)."""
        raise NotImplementedError()

    def visit_ref_write(self, ref: Any) -> Any:
        """Relay's reference node: the front end builds none."""
        raise NotImplementedError()

    def visit_ref_read(self, ref: Any) -> Any:
        """Relay's reference node: the front end builds none."""
        raise NotImplementedError()

    def visit_constructor(self, con: Any) -> Any:
        """Relay's ADT constructor: the front end builds none (ADTs are refused)."""
        raise NotImplementedError()

    def visit_match(self, match: Any) -> Any:
        """Relay's ``match``: the front end builds none (ADTs are refused)."""
        raise NotImplementedError()


class ExprVisitor(ExprFunctor):
    """Relay's visitor: walks every sub-expression (function parameters included) once."""

    def visit_tuple(self, tup: Tuple) -> None:
        """Visit each field."""
        for field in tup.fields:
            self.visit(field)

    def visit_call(self, call: Call) -> None:
        """Visit the op (or function), then each argument."""
        self.visit(call.op)
        for arg in call.args:
            self.visit(arg)

    def visit_var(self, var: Var) -> None:
        """A leaf."""

    def visit_let(self, let: Let) -> None:
        """Visit the variable, its value and the body."""
        self.visit(let.var)
        self.visit(let.value)
        self.visit(let.body)

    def visit_function(self, fn: Function) -> None:
        """Visit each parameter, then the body."""
        for param in fn.params:
            self.visit(param)
        self.visit(fn.body)

    def visit_if(self, ite: If) -> None:
        """Visit the condition and both branches."""
        self.visit(ite.cond)
        self.visit(ite.true_branch)
        self.visit(ite.false_branch)

    def visit_global_var(self, gvar: Any) -> None:
        """A leaf."""

    def visit_constructor(self, con: Any) -> None:
        """A leaf."""

    def visit_op(self, op: Any) -> None:
        """A leaf."""

    def visit_constant(self, const: Constant) -> None:
        """A leaf."""

    def visit_tuple_getitem(self, op: TupleGetItem) -> None:
        """Visit the tuple."""
        self.visit(op.tuple_value)

    def visit_ref_create(self, ref: Any) -> None:
        """Visit the value."""
        self.visit(ref.value)

    def visit_ref_read(self, ref: Any) -> None:
        """Visit the reference."""
        self.visit(ref.ref)

    def visit_ref_write(self, ref: Any) -> None:
        """Visit the reference and the value."""
        self.visit(ref.ref)
        self.visit(ref.value)

    def visit_match(self, match: Any) -> None:
        """Visit the data and each clause's right side."""
        self.visit(match.data)
        for clause in match.clauses:
            self.visit(clause.rhs)


def _same(new: list[Any], old: list[Any]) -> bool:
    return len(new) == len(old) and all(a is b for a, b in zip(new, old))


class ExprMutator(ExprFunctor):
    """Relay's mutator: rebuilds a node only where a sub-expression changed.

    A node none of whose parts changed comes back as itself, so an unchanged graph keeps its
    identity (and its Relax form).
    """

    def visit_function(self, fn: Function) -> Function:
        """Visit the parameters and the body; a new ``Function`` (same attributes) if changed."""
        new_params = [self.visit(p) for p in fn.params]
        new_body = self.visit(fn.body)
        if _same(new_params, fn.params) and new_body is fn.body:
            return fn
        return Function(new_params, new_body, fn.ret_type, fn.type_params, fn.attrs, fn.span)

    def visit_let(self, let: Let) -> Let:
        """Visit the variable, value and body; a new ``Let`` if any changed."""
        new_var = self.visit(let.var)
        new_value = self.visit(let.value)
        new_body = self.visit(let.body)
        if new_var is let.var and new_value is let.value and new_body is let.body:
            return let
        return Let(new_var, new_value, new_body)

    def visit_call(self, call: Call) -> Call:
        """Visit the op and arguments; a new ``Call`` (same attributes) if any changed."""
        new_op = self.visit(call.op)
        new_args = [self.visit(arg) for arg in call.args]
        if new_op is call.op and _same(new_args, call.args):
            return call
        return Call(new_op, new_args, call.attrs, call.type_args, call.span)

    def visit_var(self, var: Var) -> Var:
        """The variable itself."""
        return var

    def visit_global_id(self, global_var: Any) -> Any:
        """Relay's spelling of :meth:`visit_global_var` (kept): the variable itself."""
        return global_var

    def visit_if(self, ite: If) -> If:
        """Visit the condition and branches; a new ``If`` if any changed."""
        new_cond = self.visit(ite.cond)
        new_true = self.visit(ite.true_branch)
        new_false = self.visit(ite.false_branch)
        if new_cond is ite.cond and new_true is ite.true_branch and new_false is ite.false_branch:
            return ite
        return If(new_cond, new_true, new_false)

    def visit_tuple(self, tup: Tuple) -> Tuple:
        """Visit the fields; a new ``Tuple`` if any changed."""
        new_fields = [self.visit(field) for field in tup.fields]
        if _same(new_fields, tup.fields):
            return tup
        return Tuple(new_fields, tup.span)

    def visit_tuple_getitem(self, op: TupleGetItem) -> TupleGetItem:
        """Visit the tuple; a new ``TupleGetItem`` if it changed."""
        new_tuple = self.visit(op.tuple_value)
        if new_tuple is op.tuple_value:
            return op
        return TupleGetItem(new_tuple, op.index)

    def visit_global_var(self, gvar: Any) -> Any:
        """The variable itself."""
        return gvar

    def visit_op(self, op: Any) -> Any:
        """The op itself."""
        return op

    def visit_constant(self, const: Constant) -> Constant:
        """The constant itself."""
        return const

    def visit_constructor(self, con: Any) -> Any:
        """The constructor itself."""
        return con

    def visit_match(self, match: Match) -> Match:
        """Visit the data and each clause's right side; a new ``Match`` if any changed."""
        new_data = self.visit(match.data)
        new_rhs = [self.visit(clause.rhs) for clause in match.clauses]
        if new_data is match.data and _same(new_rhs, [c.rhs for c in match.clauses]):
            return match
        clauses = [Clause(c.lhs, rhs) for c, rhs in zip(match.clauses, new_rhs)]
        return Match(new_data, clauses, match.complete)

    def visit_ref_create(self, ref: RefCreate) -> RefCreate:
        """Visit the value; a new ``RefCreate`` if it changed."""
        new_value = self.visit(ref.value)
        return ref if new_value is ref.value else RefCreate(new_value, ref.span)

    def visit_ref_write(self, ref: RefWrite) -> RefWrite:
        """Visit the reference and the value; a new ``RefWrite`` if either changed."""
        new_ref, new_value = self.visit(ref.ref), self.visit(ref.value)
        if new_ref is ref.ref and new_value is ref.value:
            return ref
        return RefWrite(new_ref, new_value, ref.span)

    def visit_ref_read(self, ref: RefRead) -> RefRead:
        """Visit the reference; a new ``RefRead`` if it changed."""
        new_ref = self.visit(ref.ref)
        return ref if new_ref is ref.ref else RefRead(new_ref, ref.span)
