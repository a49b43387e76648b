"""``relay.type_functor``: ``TypeFunctor``, ``TypeVisitor`` and ``TypeMutator`` over Relay's
types (``relay.TensorType``, ``TupleType``, ``FuncType``, ``TypeVar``, ``IncompleteType``,
``TypeCall``, ``TypeRelation``, ``RefType``) and ADT declarations (``TypeData``), as Relay's:
``visit(t)`` calls the ``visit_<kind>`` method of the type's class; the visitor walks every
child type, the mutator rebuilds a type from its mutated children (the same object when none
changes)."""

from __future__ import annotations

from typing import Any

from .adt import TypeData
from .ty import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeRelation,
    TypeVar,
)

__all__ = ["TypeFunctor", "TypeMutator", "TypeVisitor"]

#: The class of a type -> its visit method (subclasses first: a GlobalTypeVar is a TypeVar).
_METHODS: tuple[tuple[type, str], ...] = (
    (GlobalTypeVar, "visit_global_type_var"),
    (TypeVar, "visit_type_var"),
    (IncompleteType, "visit_incomplete_type"),
    (TensorType, "visit_tensor_type"),
    (FuncType, "visit_func_type"),
    (TupleType, "visit_tuple_type"),
    (TypeRelation, "visit_type_relation"),
    (RefType, "visit_ref_type"),
    (TypeCall, "visit_type_call"),
    (TypeData, "visit_type_data"),
)


class TypeFunctor:
    """``relay.type_functor.TypeFunctor``: dispatch on the type's class, memoized per object."""

    def __init__(self) -> None:
        self.memo_map: dict[int, tuple[Type | TypeData, Any]] = {}

    def visit(self, typ: Type | TypeData) -> Any:
        """The ``visit_<kind>`` result for ``typ`` (computed once per object)."""
        if id(typ) in self.memo_map:
            return self.memo_map[id(typ)][1]
        for cls, method in _METHODS:
            if isinstance(typ, cls):
                result = getattr(self, method)(typ)
                break
        else:
            raise TypeError(f"TypeFunctor cannot visit {typ!r}: not a relay type")
        self.memo_map[id(typ)] = (typ, result)  # the type is kept: its id stays its own
        return result

    def _unhandled(self, typ: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not visit {type(typ).__name__}")

    visit_type_var = visit_global_type_var = visit_incomplete_type = _unhandled
    visit_tensor_type = visit_func_type = visit_tuple_type = _unhandled
    visit_type_relation = visit_ref_type = visit_type_call = visit_type_data = _unhandled


class TypeVisitor(TypeFunctor):
    """``relay.type_functor.TypeVisitor``: visits every type inside a type."""

    def _leaf(self, typ: Any) -> None:
        pass

    visit_type_var = visit_global_type_var = visit_incomplete_type = _leaf
    visit_tensor_type = _leaf

    def visit_func_type(self, typ: FuncType) -> None:
        for child in (*typ.arg_types, typ.ret_type, *typ.type_params, *typ.type_constraints):
            self.visit(child)

    def visit_tuple_type(self, typ: TupleType) -> None:
        for field in typ.fields:
            self.visit(field)

    def visit_type_relation(self, typ: TypeRelation) -> None:
        for arg in typ.args:
            self.visit(arg)

    def visit_ref_type(self, typ: RefType) -> None:
        self.visit(typ.value)

    def visit_type_call(self, typ: TypeCall) -> None:
        self.visit(typ.func)
        for arg in typ.args:
            self.visit(arg)

    def visit_type_data(self, typ: TypeData) -> None:
        self.visit(typ.header)
        for var in typ.type_vars:
            self.visit(var)


def _same(old: Any, new: Any) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new, strict=True))


class TypeMutator(TypeFunctor):
    """``relay.type_functor.TypeMutator``: each ``visit_<kind>`` returns the type's
    replacement; the defaults rebuild a type from its visited children."""

    def _leaf(self, typ: Any) -> Any:
        return typ

    visit_type_var = visit_global_type_var = visit_incomplete_type = _leaf
    visit_tensor_type = _leaf

    def visit_func_type(self, typ: FuncType) -> Type:
        args = [self.visit(a) for a in typ.arg_types]
        ret = self.visit(typ.ret_type)
        params = [self.visit(p) for p in typ.type_params]
        constraints = [self.visit(c) for c in typ.type_constraints]
        if (
            _same(typ.arg_types, args)
            and ret is typ.ret_type
            and _same(typ.type_params, params)
            and _same(typ.type_constraints, constraints)
        ):
            return typ
        return FuncType(args, ret, params, constraints)

    def visit_tuple_type(self, typ: TupleType) -> Type:
        fields = [self.visit(f) for f in typ.fields]
        return typ if _same(typ.fields, fields) else TupleType(fields)

    def visit_type_relation(self, typ: TypeRelation) -> Type:
        args = [self.visit(a) for a in typ.args]
        if _same(typ.args, args):
            return typ
        return TypeRelation(typ.func, args, typ.num_inputs, typ.attrs)

    def visit_ref_type(self, typ: RefType) -> Type:
        value = self.visit(typ.value)
        return typ if value is typ.value else RefType(value)

    def visit_type_call(self, typ: TypeCall) -> Type:
        func = self.visit(typ.func)
        args = [self.visit(a) for a in typ.args]
        return typ if func is typ.func and _same(typ.args, args) else TypeCall(func, args)

    def visit_type_data(self, typ: TypeData) -> TypeData:
        header = self.visit(typ.header)
        type_vars = [self.visit(v) for v in typ.type_vars]
        if header is typ.header and _same(typ.type_vars, type_vars):
            return typ
        return TypeData(header, type_vars, typ.constructors)
