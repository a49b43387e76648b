"""Relay's structural hash (``tvm.ir.structural_hash`` of a Relay expression or type, under
``install()``), consistent with Relay's structural equality (:mod:`.structural`,
:mod:`.type_equal`): two graphs or types that compare equal hash the same.

The graph is written out in the order the equality walks it, as tokens: a variable a function
or ``let`` defines by the position of its definition, a free one by its identity (or, with
``map_free_vars``, by the order it is first met), a node met again by a reference to its first
visit (so sharing counts, as in the comparison), constants by value, ops by name, attributes
by value. Anything that is not Relay goes to TVM's own hash.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
import tvm_ffi

from compile_engine_compat.relay._impl.structural import is_leaf
from compile_engine_compat.relay.adt import Pattern, TypeData
from compile_engine_compat.relay.expr import (
    Attrs,
    Call,
    Constant,
    Expr,
    If,
    Let,
    Tuple,
    TupleGetItem,
    Var,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import (
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
    is_dynamic,
)

__all__ = ["structural_hash"]


def _plain(value: Any) -> Any:
    """An attribute value as a hashable plain value (floats rounded as equality tolerates)."""
    if isinstance(value, tvm.tirx.IntImm):
        return int(value.value)
    if isinstance(value, tvm.tirx.FloatImm):
        value = float(value.value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int):
        return float(value)  # 1 and 1.0 compare equal as attributes
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, str | tvm.DataType):
        return str(value)
    if isinstance(value, list | tuple | tvm.ir.Array):
        return tuple(_plain(v) for v in value)
    if isinstance(value, tvm.runtime.Object):
        return int(tvm_ffi.structural_hash(value))
    return repr(value)


def _attrs(attrs: Any) -> Any:
    if attrs is None:
        return ()
    if isinstance(attrs, Attrs):
        fields = {k: attrs[k] for k in attrs.keys()}
    elif isinstance(attrs, dict):
        fields = attrs
    elif hasattr(attrs, "keys"):
        fields = {str(k): attrs[k] for k in attrs.keys()}
    else:
        return ()
    return tuple(sorted((str(k), _plain(v)) for k, v in fields.items()))


class _Hasher:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.tokens: list[Any] = []
        self.seen: dict[int, int] = {}
        self.defined: dict[int, int] = {}
        self.free: dict[int, int] = {}
        self.keep: list[Any] = []

    def define(self, var: Any) -> None:
        self.defined[id(var)] = len(self.defined)
        self.keep.append(var)

    def variable(self, var: Any) -> Any:
        if id(var) in self.defined:
            return ("def", self.defined[id(var)])
        if self.map_free_vars:
            self.free.setdefault(id(var), len(self.free))
            self.keep.append(var)
            return ("free", self.free[id(var)])
        return ("id", id(var))

    # -- types -------------------------------------------------------------------------------
    def typ(self, t: Any) -> None:
        stack = [t]
        while stack:
            t = stack.pop()
            if isinstance(t, TypeVar):
                name = t.name_hint if isinstance(t, GlobalTypeVar) else ""
                self.tokens.append(("tvar", int(t.kind), name, self.variable(t)))
            elif isinstance(t, IncompleteType):
                self.tokens.append(("incomplete", int(t.kind), self.variable(t)))
            elif isinstance(t, TensorType):
                dims = tuple(
                    "any" if is_dynamic(TensorType([d])) else int(tvm_ffi.structural_hash(d))
                    for d in t.shape
                )
                self.tokens.append(("tensor", t.dtype, dims))
            elif isinstance(t, TupleType):
                self.tokens.append(("tuple", len(t.fields)))
                stack.extend(reversed(t.fields))
            elif isinstance(t, FuncType):
                self.tokens.append(("func", len(t.type_params), len(t.arg_types)))
                for param in t.type_params:
                    self.define(param)
                    self.tokens.append(("param", int(param.kind)))
                children = [*t.arg_types, t.ret_type, *t.type_constraints]
                self.tokens.append(len(t.type_constraints))
                stack.extend(reversed(children))
            elif isinstance(t, RefType):
                self.tokens.append("ref")
                stack.append(t.value)
            elif isinstance(t, TypeCall):
                self.tokens.append(("call", len(t.args)))
                stack.extend(reversed([t.func, *t.args]))
            elif isinstance(t, TypeRelation):
                func = str(t.func.name) if isinstance(t.func, tvm.ir.EnvFunc) else id(t.func)
                attrs = 0 if t.attrs is None else int(tvm_ffi.structural_hash(t.attrs))
                self.tokens.append(("rel", func, t.num_inputs, len(t.args), attrs))
                stack.extend(reversed(t.args))
            elif isinstance(t, TypeData):
                self.tokens.append(("data", len(t.type_vars), len(t.constructors)))
                self.tokens.append(self.variable(t.header))
                for var in t.type_vars:
                    self.define(var)
                for ctor in t.constructors:
                    self.tokens.append(("ctor", ctor.name_hint, len(ctor.inputs)))
                    stack.extend(reversed(ctor.inputs))
            else:
                self.tokens.append(("other", id(t)))
                self.keep.append(t)

    def annotation(self, var: Var) -> None:
        if var.type_annotation is None:
            self.tokens.append("untyped")
        else:
            self.typ(var.type_annotation)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, root: Any) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in self.seen and not isinstance(node, Var) and not is_leaf(node):
                self.tokens.append(("seen", self.seen[id(node)]))
                continue
            self.seen[id(node)] = len(self.seen)
            self.keep.append(node)
            stack.extend(reversed(self.shallow(node)))

    def shallow(self, node: Any) -> list[Any]:
        """Write ``node``'s own tokens; return its children in the comparison's order."""
        if isinstance(node, Var):
            self.tokens.append(("var", self.variable(node)))
            self.annotation(node)
            return []
        if isinstance(node, Constant):
            data = node.data.numpy()
            self.tokens.append(("const", str(data.dtype), data.shape, data.tobytes()))
            return []
        if isinstance(node, Call):
            op = node.op
            if isinstance(op, Expr):
                head: Any = "expr"
            elif isinstance(op, tvm.ir.GlobalVar):
                head = ("global", op.name_hint)
            else:
                head = (type(op).__name__, getattr(op, "name", id(op)))
            self.tokens.append(("call", head, len(node.args), _attrs(node.attrs)))
            self.tokens.append(("type_args", len(node.given_type_args)))
            for type_arg in node.given_type_args:
                self.typ(type_arg)
            return ([op] if isinstance(op, Expr) else []) + list(node.args)
        if isinstance(node, Tuple):
            self.tokens.append(("tuple", len(node.fields)))
            return list(node.fields)
        if isinstance(node, TupleGetItem):
            self.tokens.append(("get", node.index))
            return [node.tuple_value]
        if isinstance(node, Function):
            self.tokens.append(("fn", len(node.params), _attrs(node.attrs)))
            for param in node.params:
                self.define(param)
                self.annotation(param)
            return [node.body]
        if isinstance(node, Let):
            self.define(node.var)
            self.tokens.append("let")
            self.annotation(node.var)
            return [node.value, node.body]
        if isinstance(node, If):
            self.tokens.append("if")
            return [node.cond, node.true_branch, node.false_branch]
        self.tokens.append(("node", id(node)))
        return []


def is_relay(value: Any) -> bool:
    """Whether ``value`` is a Relay expression or type (what this hash serves)."""
    return isinstance(value, Expr | Type | TypeData | Pattern)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """``tvm.ir.structural_hash``: Relay's hash for a Relay expression or type, TVM's
    (``tvm_ffi.structural_hash``) for anything else.

    Parameters
    ----------
    node : object
        A Relay expression or type, or a TVM object.
    map_free_vars : bool
        Hash free variables by the order they are first met (so graphs equal with
        ``map_free_vars=True`` hash the same).

    Returns
    -------
    int
    """
    if not is_relay(node):
        return int(tvm_ffi.structural_hash(node, map_free_vars))
    hasher = _Hasher(map_free_vars)
    if isinstance(node, Expr | Pattern):
        hasher.expr(node)
    else:
        hasher.typ(node)
    return hash(tuple(hasher.tokens)) & 0xFFFFFFFFFFFFFFFF
