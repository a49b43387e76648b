"""Relay's type inference for the programs that have no Relax form: higher-order and
polymorphic functions, references, calls of untyped function variables.

The front end types a program by building its Relax function (:mod:`.to_relax`). A program
Relax cannot hold (a function passed as a value, a ``let``-bound polymorphic function, a
``RefCreate``) is typed here instead, as TVM 0.19's ``InferType`` did: every node gets a type
(an unannotated variable an ``IncompleteType``), each construct adds its unifications to a
:class:`~.type_solver.TypeSolver` (a call of a polymorphic function instantiates its type
parameters with fresh unknowns), and every node's ``checked_type`` is what the solver resolved.
An op call is typed by the op's own inference (its Relax form, built on typed variables) once
its argument types are known.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay.expr import (
    BaseOp,
    Call,
    Constant,
    Expr,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
)

from .relation_functions import relation_of
from .type_solver import TypeSolver, bind_type_vars

__all__ = ["NoTypeRule", "infer_relay_types"]


class NoTypeRule(TypeError):
    """A construct this inference has no rule for (ADT matches, calls of global functions)."""


def _complete(typ: Type) -> bool:
    if isinstance(typ, TensorType):
        return True
    if isinstance(typ, TupleType):
        return all(_complete(f) for f in typ.fields)
    return False


class _Inferencer:
    def __init__(self, op_type: Any) -> None:
        self.solver = TypeSolver(relation_of)
        self.types: dict[int, tuple[Expr, Type]] = {}
        self.op_type = op_type

    def type_of(self, node: Expr) -> Type:
        entry = self.types.get(id(node))
        if entry is not None:
            return entry[1]
        typ = self.visit(node)
        self.types[id(node)] = (node, typ)
        return typ

    def unify(self, lhs: Type, rhs: Type) -> Type:
        out = self.solver.unify(lhs, rhs)
        self.solver.render()
        return out

    def visit(self, node: Expr) -> Type:
        if isinstance(node, Var):
            return node.type_annotation or IncompleteType()
        if isinstance(node, Constant):
            data = node.data.numpy()
            return TensorType(data.shape, str(data.dtype))
        if isinstance(node, Tuple):
            return TupleType([self.type_of(f) for f in node.fields])
        if isinstance(node, TupleGetItem):
            tup = self.solver.resolve(self.type_of(node.tuple_value))
            if not isinstance(tup, TupleType) or not 0 <= node.index < len(tup.fields):
                raise TypeError(f"TupleGetItem {node.index} of a value of type {tup!r}")
            return tup.fields[node.index]
        if isinstance(node, Function):
            return self.function(node)
        if isinstance(node, Let):
            value = self.type_of(node.value)
            if node.var.type_annotation is not None:
                value = self.unify(node.var.type_annotation, value)
            self.types[id(node.var)] = (node.var, value)
            return self.type_of(node.body)
        if isinstance(node, If):
            self.unify(self.type_of(node.cond), TensorType((), "bool"))
            return self.unify(self.type_of(node.true_branch), self.type_of(node.false_branch))
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, RefCreate):
            return RefType(self.type_of(node.value))
        if isinstance(node, RefRead):
            value = IncompleteType()
            self.unify(self.type_of(node.ref), RefType(value))
            return value
        if isinstance(node, RefWrite):
            self.unify(self.type_of(node.ref), RefType(self.type_of(node.value)))
            return TupleType([])
        raise NoTypeRule(f"Relay's type inference has no rule for {type(node).__name__}")

    def function(self, node: Function) -> Type:
        params = [self.type_of(p) for p in node.params]
        body = self.type_of(node.body)
        ret = node.ret_type if node.ret_type is not None else body
        self.unify(body, ret)
        return FuncType(params, ret, node.type_params or ())

    def call(self, node: Call) -> Type:
        args = [self.type_of(a) for a in node.args]
        if not isinstance(node.op, Expr | BaseOp):
            raise NoTypeRule(f"a call of {node.op!r} is typed with its module (InferType)")
        if isinstance(node.op, BaseOp):  # a table op: its own inference, on known inputs
            resolved = [self.solver.resolve(a) for a in args]
            if not all(_complete(a) for a in resolved):
                raise TypeError(
                    f"{node.op.name}: the types of its arguments {resolved} are not known "
                    "here; annotate the variables they come from"
                )
            return self.op_type(node, resolved)
        callee = self.solver.resolve(self.type_of(node.op))
        if isinstance(callee, FuncType):
            if callee.type_params:
                fresh = list(node.type_args) or [IncompleteType() for _ in callee.type_params]
                if len(fresh) != len(callee.type_params):
                    raise TypeError(
                        f"the call gives {len(fresh)} type arguments to a function of "
                        f"{len(callee.type_params)} type parameters"
                    )
                bound = bind_type_vars(
                    FuncType(callee.arg_types, callee.ret_type),
                    list(zip(callee.type_params, fresh)),
                )
                assert isinstance(bound, FuncType)
                callee = bound
            if len(callee.arg_types) != len(args):
                raise TypeError(
                    f"a function of {len(callee.arg_types)} parameters is called with "
                    f"{len(args)} arguments"
                )
            for param, arg in zip(callee.arg_types, args):
                self.unify(param, arg)
            return callee.ret_type
        ret = IncompleteType()
        self.unify(self.type_of(node.op), FuncType(args, ret))
        return ret


def infer_relay_types(expr: Expr, op_type: Any) -> Type:
    """Type ``expr`` and every node in it by Relay's inference; sets each ``checked_type``.

    Parameters
    ----------
    expr : relay.Expr
        The expression.
    op_type : callable
        ``op_type(call, arg_types) -> Type``: the type of an op call on arguments of the given
        (known) types.

    Returns
    -------
    relay.Type
        ``expr``'s type.

    Raises
    ------
    tvm.error.DiagnosticError
        When two types that must agree do not.
    TypeError
        For a construct the inference cannot type (an op on arguments of unknown types).
    """
    inferencer = _Inferencer(op_type)
    inferencer.type_of(expr)
    inferencer.solver.solve()
    inferencer.solver.render()
    for node, typ in inferencer.types.values():
        node._checked_type = inferencer.solver.resolve(typ)
    return expr.checked_type
