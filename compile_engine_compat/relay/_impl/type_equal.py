"""Relay's structural equality of types (``tvm.ir.structural_equal`` of two Relay types).

As TVM 0.19 compared them: tensor types by shape and dtype; tuples, references and type calls
by their children; a function type's ``type_params`` are definitions, so the two functions'
parameters stand for each other by position; a type variable elsewhere is free, equal only to
itself (or, with ``map_free_vars``, to the one free variable it is first paired with), of the
same kind, and a global type variable by its name too; an incomplete type is free as a variable
is; a relation by its function's name, arguments, input count and attributes; an ADT
declaration (``TypeData``) by its header, type variables (definitions) and constructors.
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi

from compile_engine_compat.relay.ty import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeRelation,
    TypeVar,
)

__all__ = ["types_equal"]


def _is_type_data(value: Any) -> bool:
    """A ``relay.TypeData``, known by its fields: ``relay.adt`` sits above the types, whose
    ``==`` reaches this module, so importing it here would close a circle."""
    return all(hasattr(value, f) for f in ("header", "type_vars", "constructors"))


def _func_name(func: Any) -> Any:
    if isinstance(func, tvm.ir.EnvFunc):
        return str(func.name)
    return func


class _TypeEqual:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.forward: dict[int, Any] = {}
        self.backward: dict[int, Any] = {}

    def define(self, lhs: Any, rhs: Any) -> bool:
        """Pair two defined type variables (``type_params``, ``TypeData.type_vars``)."""
        if len(lhs) != len(rhs):
            return False
        for a, b in zip(lhs, rhs):
            if not (isinstance(a, TypeVar) and isinstance(b, TypeVar)) or a.kind != b.kind:
                return False
            if id(a) in self.forward or id(b) in self.backward:
                if self.forward.get(id(a)) is not b:
                    return False
                continue
            self.forward[id(a)], self.backward[id(b)] = b, a
        return True

    def var(self, a: Any, b: Any) -> bool:
        """Free variables (and incomplete types, which Relay compared the same way)."""
        if type(a) is not type(b) or a.kind != b.kind:
            return False
        if isinstance(a, GlobalTypeVar) != isinstance(b, GlobalTypeVar):
            return False
        if isinstance(a, GlobalTypeVar) and a.name_hint != b.name_hint:
            return False
        known_a, known_b = self.forward.get(id(a)), self.backward.get(id(b))
        if known_a is not None or known_b is not None:
            return known_a is b and known_b is a
        if a is b or self.map_free_vars:
            self.forward[id(a)], self.backward[id(b)] = b, a
            return True
        return False

    def all(self, lhs: Any, rhs: Any) -> bool:
        return len(lhs) == len(rhs) and all(self.equal(a, b) for a, b in zip(lhs, rhs))

    def equal(self, a: Any, b: Any) -> bool:
        if isinstance(a, TypeVar | IncompleteType):
            return self.var(a, b)
        if type(a) is not type(b):
            return False
        if isinstance(a, TensorType):
            return a == b
        if isinstance(a, TupleType):
            return self.all(a.fields, b.fields)
        if isinstance(a, FuncType):
            return (
                self.define(a.type_params, b.type_params)
                and self.all(a.arg_types, b.arg_types)
                and self.equal(a.ret_type, b.ret_type)
                and self.all(a.type_constraints, b.type_constraints)
            )
        if isinstance(a, RefType):
            return self.equal(a.value, b.value)
        if isinstance(a, TypeCall):
            return self.equal(a.func, b.func) and self.all(a.args, b.args)
        if isinstance(a, TypeRelation):
            return (
                _func_name(a.func) == _func_name(b.func)
                and a.num_inputs == b.num_inputs
                and self.all(a.args, b.args)
                and bool(tvm_ffi.structural_equal(a.attrs, b.attrs))
            )
        if _is_type_data(a):
            return (
                self.var(a.header, b.header)
                and self.define(a.type_vars, b.type_vars)
                and len(a.constructors) == len(b.constructors)
                and all(
                    c.name_hint == d.name_hint and self.all(c.inputs, d.inputs)
                    for c, d in zip(a.constructors, b.constructors)
                )
            )
        return a is b


def types_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """Relay's structural equality of two types (see the module docstring).

    Parameters
    ----------
    lhs, rhs : relay.Type or relay.TypeData
    map_free_vars : bool
        Free type variables of the two sides may stand for each other.

    Returns
    -------
    bool
    """
    return _TypeEqual(map_free_vars).equal(lhs, rhs)
