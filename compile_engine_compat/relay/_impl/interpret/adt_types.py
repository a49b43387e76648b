"""The type of an interpreted Relay function (one holding ADTs), inferred as TVM 0.19's
``InferType`` did: constructors instantiated at each call (``Cons(1, Nil())`` is a
``List[int32]``), ``match`` data unified with its patterns (a pattern variable's annotation
types the data), clauses and branches with each other, module functions at their declared types.

A small unifier over holes (``IncompleteType``); it types variables, constants, tuples,
constructors, matches, lets, ifs, functions and calls to functions. An op call inside such a
function is not typed here (:func:`function_type` then returns None and the caller keeps its
refusal).
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay.adt import (
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
)
from compile_engine_compat.relay.expr import Call, Constant, Expr, If, Let, Tuple, TupleGetItem, Var
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import (
    FuncType,
    IncompleteType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)

__all__ = ["function_type"]


class _Untypable(Exception):
    """An expression outside what :class:`_Checker` types."""


class _Checker:
    def __init__(self, lookup: Any, types: dict[Any, Any]) -> None:
        self.lookup = lookup  # GlobalVar -> its declared FuncType, or None
        self.types = types  # GlobalTypeVar -> TypeData
        self.holes: dict[int, Type] = {}
        # The holes bound, kept alive: a freed hole's id may be a new hole's (a false binding).
        self.bound: list[Type] = []
        self.env: dict[int, Type] = {}

    # -- types
    def resolve(self, t: Type) -> Type:
        while isinstance(t, IncompleteType) and id(t) in self.holes:
            t = self.holes[id(t)]
        if isinstance(t, TypeCall):
            return TypeCall(t.func, [self.resolve(a) for a in t.args])
        if isinstance(t, TupleType):
            return TupleType([self.resolve(f) for f in t.fields])
        if isinstance(t, FuncType):
            return FuncType(
                [self.resolve(a) for a in t.arg_types], self.resolve(t.ret_type), t.type_params
            )
        return t

    def unify(self, a: Type, b: Type) -> None:
        a, b = self.resolve(a), self.resolve(b)
        if isinstance(a, IncompleteType):
            if a is not b:
                self.holes[id(a)] = b
                self.bound.append(a)
            return
        if isinstance(b, IncompleteType):
            self.holes[id(b)] = a
            self.bound.append(b)
            return
        pairs: list[tuple[Type, Type]] = []
        if isinstance(a, TypeCall) and isinstance(b, TypeCall) and a.func == b.func:
            pairs = list(zip(a.args, b.args))
        elif isinstance(a, TupleType) and isinstance(b, TupleType):
            pairs = list(zip(a.fields, b.fields)) if len(a.fields) == len(b.fields) else []
        elif isinstance(a, FuncType) and isinstance(b, FuncType):
            pairs = [*zip(a.arg_types, b.arg_types), (a.ret_type, b.ret_type)]
        elif a == b:
            return
        if not pairs and a != b:
            raise TypeError(f"type mismatch: {a!r} vs {b!r}")
        for x, y in pairs:
            self.unify(x, y)

    def instantiate(self, t: Type, mapping: dict[Any, Type]) -> Type:
        if isinstance(t, TypeVar) and t in mapping:
            return mapping[t]
        if isinstance(t, TypeCall):
            return TypeCall(t.func, [self.instantiate(a, mapping) for a in t.args])
        if isinstance(t, TupleType):
            return TupleType([self.instantiate(f, mapping) for f in t.fields])
        if isinstance(t, FuncType):
            args = [self.instantiate(a, mapping) for a in t.arg_types]
            return FuncType(args, self.instantiate(t.ret_type, mapping))
        return t

    def constructor(self, ctor: Constructor) -> FuncType:
        if ctor.belong_to not in self.types:
            raise _Untypable(f"the constructor {ctor!r} of an undeclared type")
        data_vars = list(self.types[ctor.belong_to].type_vars)
        mapping: dict[Any, Type] = {tv: IncompleteType() for tv in data_vars}
        fields = [self.instantiate(f, mapping) for f in ctor.inputs]
        return FuncType(fields, TypeCall(ctor.belong_to, [mapping[tv] for tv in data_vars]))

    # -- expressions
    def var(self, var: Var) -> Type:
        if id(var) not in self.env:
            ann = var.type_annotation
            self.env[id(var)] = ann if isinstance(ann, Type) else IncompleteType()
        return self.env[id(var)]

    def typeof(self, e: Any) -> Type:
        if isinstance(e, Var):
            return self.var(e)
        if isinstance(e, Constant):
            data = e.data.numpy()
            return TensorType(list(data.shape), str(data.dtype))
        if isinstance(e, Tuple):
            return TupleType([self.typeof(f) for f in e.fields])
        if isinstance(e, TupleGetItem):
            found = self.resolve(self.typeof(e.tuple_value))
            if not isinstance(found, TupleType):
                raise _Untypable(f"a projection of {found!r}")
            return found.fields[e.index]
        if isinstance(e, Constructor):
            return self.constructor(e)
        if isinstance(e, Let):
            self.unify(self.var(e.var), self.typeof(e.value))
            return self.typeof(e.body)
        if isinstance(e, If):
            self.unify(self.typeof(e.cond), TensorType((), "bool"))
            out = self.typeof(e.true_branch)
            self.unify(out, self.typeof(e.false_branch))
            return out
        if isinstance(e, Match):
            return self.match(e)
        if isinstance(e, Function):
            return self.function(e)
        if isinstance(e, Call):
            return self.call(e)
        raise _Untypable(type(e).__name__)

    def call(self, e: Call) -> Type:
        if isinstance(e.op, Expr | Constructor):
            callee = self.typeof(e.op)
        else:
            callee = self.lookup(e.op)
            if callee is None:
                raise _Untypable(f"a call to {e.op!r}")
            fresh: dict[Any, Type] = {tv: IncompleteType() for tv in callee.type_params}
            callee = self.instantiate(callee, fresh)
        out = IncompleteType()
        self.unify(callee, FuncType([self.typeof(a) for a in e.args], out))
        return out

    def function(self, func: Function) -> FuncType:
        params = [self.var(p) for p in func.params]
        ret = self.typeof(func.body)
        if isinstance(func.ret_type, Type):
            self.unify(ret, func.ret_type)
        return FuncType(params, ret, func.type_params)

    def match(self, e: Match) -> Type:
        data = self.typeof(e.data)
        out: Type = IncompleteType()
        for clause in e.clauses:
            self.pattern(clause.lhs, data)
            self.unify(out, self.typeof(clause.rhs))
        return out

    def pattern(self, p: Pattern, t: Type) -> None:
        if isinstance(p, PatternVar):
            self.unify(self.var(p.var), t)
        elif isinstance(p, PatternConstructor):
            ctor = self.constructor(p.constructor)
            self.unify(t, ctor.ret_type)
            for sub, field in zip(p.patterns, ctor.arg_types):
                self.pattern(sub, field)
        elif isinstance(p, PatternTuple):
            holes: list[Type] = [IncompleteType() for _ in p.patterns]
            self.unify(t, TupleType(holes))
            for sub, hole in zip(p.patterns, holes):
                self.pattern(sub, hole)


def _complete(t: Type) -> bool:
    if isinstance(t, IncompleteType):
        return False
    if isinstance(t, TypeCall):
        return all(map(_complete, t.args))
    if isinstance(t, TupleType):
        return all(map(_complete, t.fields))
    if isinstance(t, FuncType):
        return all(map(_complete, [*t.arg_types, t.ret_type]))
    return True


def function_type(func: Function, lookup: Any, types: dict[Any, Any]) -> FuncType | None:
    """The inferred type of ``func``, or None where it holds what this does not type.

    Parameters
    ----------
    func : relay.Function
        The Relay function behind a module's stand-in.
    lookup : callable
        A module ``GlobalVar`` -> its declared ``FuncType`` (None when it has none).
    types : dict
        The module's ADT declarations (``GlobalTypeVar`` -> ``TypeData``).
    """
    checker = _Checker(lookup, types)
    try:
        found = checker.resolve(checker.function(func))
    except (_Untypable, TypeError):
        return None
    return found if isinstance(found, FuncType) and _complete(found) else None
