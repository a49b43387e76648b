"""Relay graph -> one Relax function, and Relay's type inference read back from it.

The emitter of the Relay wing: every way a Relay graph reaches TVM (``relay.build``, the engine,
``tvm.IRModule.from_expr``, ``astext``) and every ``checked_type`` goes through :func:`to_relax`.

The function is built with ``relax.BlockBuilder`` in one dataflow block, one binding per op call
in topological order, the last call bound by ``emit_output``: exactly the function a person
writes by hand with BlockBuilder for the same graph, so the two are structurally equal and share
one engine cache entry. Tuples and constants stay inline, as hand-written code leaves them.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import binding_block
from compile_engine_compat.pipeline.model.vm_executable import PRIM_FUNCS_ATTR
from compile_engine_compat.pipeline.trace import TRACE_LOCK
from compile_engine_compat.relay._impl.dynamic import BROADCASTING, broadcast_call, shape_known
from compile_engine_compat.relay._impl.interpret.definitions import (
    interpreted_function,
    needs_interpreter,
)
from compile_engine_compat.relay._impl.primitive import is_primitive, primitive_call
from compile_engine_compat.relay._impl.registry import RelayOp, UnsupportedRelayError
from compile_engine_compat.relay._impl.type_infer import NoTypeRule, infer_relay_types
from compile_engine_compat.relay.analysis.vars import free_vars
from compile_engine_compat.relay.expr import (
    Call,
    Constant,
    Expr,
    If,
    Let,
    NoRelaxForm,
    Tuple,
    TupleGetItem,
    Var,
)
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import (
    FuncType,
    RelayTypeError,
    TensorType,
    TupleType,
    Type,
    from_struct_info,
)

__all__ = ["function_to_relax", "infer", "to_relax"]


def _children(node: Expr) -> list[Expr]:
    """The sub-expressions :meth:`_Emitter.prewarm` may visit first (not Let/Function scopes)."""
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return list(node.args)
    if isinstance(node, Tuple):
        return list(node.fields)
    if isinstance(node, TupleGetItem):
        return [node.tuple_value]
    return []


#: The deepest nesting of tuples a Relay program may have. Relax's normalizer recurses into a
#: nested tuple in C++ (past ~10,000 levels the process dies of a stack overflow), the type
#: conversion recurses in Python, and TVM 0.27's FuseTIR fails from 256 levels on (an
#: ``InternalError``, ``global_name != "fused"``; 254 build): deeper programs are refused with a
#: ValueError.
MAX_TUPLE_DEPTH = 250


def _tuple_depth(node: Expr, depths: dict[int, int]) -> int:
    """How deep ``node``'s value nests tuples, from its children's depths (post-order).

    Raises
    ------
    ValueError
        Past :data:`MAX_TUPLE_DEPTH`.
    """
    if isinstance(node, Tuple):
        depth = 1 + max((depths.get(id(f), 0) for f in node.fields), default=0)
    elif isinstance(node, TupleGetItem):
        depth = max(depths.get(id(node.tuple_value), 0) - 1, 0)
    else:
        return 0
    if depth > MAX_TUPLE_DEPTH:
        raise ValueError(
            f"the Relay program nests tuples more than {MAX_TUPLE_DEPTH} deep (the shim's "
            "depth limit): Relax's normalizer and TVM's fusion recurse once per level and "
            "fail or crash deeper; flatten the tuples"
        )
    return depth


def _param(v: Var) -> relax.Var:
    ty = v.type_annotation or v._checked_type
    if ty is None:
        raise TypeError(
            f"parameter {v.name_hint!r} has no type, and no use infers it: Relax needs every "
            "parameter's shape and dtype (relay.var(name, shape=..., dtype=...))"
        )
    return relax.Var(v.name_hint, ty.struct_info())  # type: ignore[attr-defined]


_inferring = threading.local()


def _nodes(root: Expr) -> Iterator[Any]:
    """Every node reachable from ``root``, once each (iteratively; Let, If and the bodies of
    called functions included)."""
    seen: set[int] = set()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, Call):
            if isinstance(node.op, Function):
                stack.append(node.op.body)
            elif isinstance(node.op, Expr):
                stack.append(node.op)  # a closure: the call that returns the function
            stack.extend(node.args)
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
        elif isinstance(node, Let):
            stack.extend([node.value, node.body])
        elif isinstance(node, If):
            stack.extend([node.cond, node.true_branch, node.false_branch])


def _calls(root: Expr) -> list[Call]:
    """Every op call reachable from ``root``."""
    return [n for n in _nodes(root) if isinstance(n, Call) and isinstance(n.op, RelayOp)]


def _has_if(root: Expr) -> bool:
    """Whether ``root``'s graph holds a ``relay.If`` (its function is built without dataflow)."""
    return any(isinstance(node, If) for node in _nodes(root))


def _known_type(node: Expr) -> Type | None:
    if isinstance(node, Var):
        return node.type_annotation or node._checked_type
    if node._checked_type is None:
        infer(node)
    return node._checked_type


def _infer_untyped(params: list[Var], body: Expr) -> None:
    """Type untyped parameters from their uses, as Relay's type relations did.

    ``relay.nn.conv2d(x, relay.var("w"), channels=8, kernel_size=3)`` gives ``w`` the shape the
    op needs; so do ``dense`` (``units``), ``bias_add`` and the norms (one value per channel).
    The condition of an ``If`` is a boolean scalar.
    """
    missing = {id(p): p for p in params if p.type_annotation is None and p._checked_type is None}
    if not missing:
        return
    # The condition of a relay.If is a boolean scalar (Relay's type rule for If).
    for node in _nodes(body):
        if isinstance(node, If) and id(node.cond) in missing:
            missing.pop(id(node.cond))._checked_type = TensorType((), "bool")
    if not missing:
        return
    active: set[int] = getattr(_inferring, "active", set())
    _inferring.active = active
    for call in _calls(body):
        assert isinstance(call.op, RelayOp)  # _calls returns op calls only
        row = call.op.row
        slots = [i for i, a in enumerate(call.args) if id(a) in missing]
        if not slots or row.infer_inputs is None or slots[0] == 0:
            continue
        if id(call) in active:
            continue  # the data depends on this very weight: another use must type it
        active.add(id(call))
        try:
            data = _known_type(call.args[0])
        finally:
            active.discard(id(call))
        if data is None:
            continue
        types = [data] + [None] * (len(call.args) - 1)
        attrs = call.attrs if call.attrs is not None else row.default_attrs()
        for i, ty in enumerate(row.infer_inputs(types, attrs)):
            if id(call.args[i]) in missing and ty is not None:
                missing.pop(id(call.args[i]))._checked_type = ty
    if missing:
        _infer_through_calls(missing, body)


def _infer_through_calls(missing: dict[int, Var], body: Expr) -> None:
    """Type untyped variables passed to a called function literal (a fused ``Primitive``
    function) from the type its parameter has, or gets from its uses in the function."""
    for node in _nodes(body):
        if not (isinstance(node, Call) and isinstance(node.op, Function)):
            continue
        pairs = [(a, p) for a, p in zip(node.args, node.op.params) if id(a) in missing]
        if not pairs:
            continue
        _infer_untyped([p for _, p in pairs], node.op.body)
        for arg, param in pairs:
            ty = param.type_annotation or param._checked_type
            if ty is not None and id(arg) in missing:
                missing.pop(id(arg))._checked_type = ty


class _Emitter:
    def __init__(self, bb: relax.BlockBuilder, params: list[Var], body: Expr) -> None:
        self.bb = bb
        self.body = body
        self.memo: dict[int, Any] = {}
        # Parameters become Relax vars when first reached: an untyped one (relay.var("w")) is
        # typed by its first use first (see _type_untyped_args), in the same single pass.
        self.params = {id(p): p for p in params}
        # Not in the memo, which an inlined function call swaps out and back.
        self.param_vars: dict[int, Any] = {}
        # Keep the Relay nodes alive: the memo is keyed by id().
        self.keep: list[Any] = []

    def param(self, v: Var) -> Any:
        """The Relax var of parameter ``v`` (made on first use)."""
        if id(v) not in self.param_vars:
            if v.type_annotation is None and v._checked_type is None:
                # Its first use cannot type it: look for one that can (slower, rare).
                _infer_untyped([v], self.body)
            rv = _param(v)
            v._checked_type = from_struct_info(rv.ty)
            self.param_vars[id(v)] = rv
        return self.param_vars[id(v)]

    def relax_params(self, params: list[Var]) -> list[Any]:
        """The Relax vars of all parameters, in order (unused ones made now)."""
        return [self.param(p) for p in params]

    def _type_untyped_args(self, node: Call) -> None:
        row = node.op.row
        untyped = [
            a
            for a in node.args[1:]
            if isinstance(a, Var)
            and id(a) in self.params
            and id(a) not in self.param_vars
            and a.type_annotation is None
            and a._checked_type is None
        ]
        if not untyped or row.infer_inputs is None:
            return
        data = self.visit(node.args[0])
        types = [from_struct_info(data.ty)] + [None] * (len(node.args) - 1)
        attrs = node.attrs if node.attrs is not None else row.default_attrs()
        for arg, ty in zip(node.args, row.infer_inputs(types, attrs)):
            if any(arg is u for u in untyped) and ty is not None:
                arg._checked_type = ty

    def _set_type(self, node: Expr, value: Any) -> None:
        ty = value.ty if hasattr(value, "ty") else None
        if ty is not None:
            node._checked_type = from_struct_info(ty)

    def lower_call(self, node: Call) -> Any:
        """The (unbound) Relax expression of a call; its arguments are bound first."""
        if isinstance(node.op, RelayOp):
            self._type_untyped_args(node)
        args = [self.visit(a) for a in node.args]
        if isinstance(node.op, Expr):
            func, captured = self.callee(node.op)
            for param, arg in zip(func.params, args):
                if param._checked_type is None:  # typed as its argument (a fused function's)
                    self._set_type(param, arg)
            if not captured and is_primitive(func):  # one kernel, as TVM 0.19 kept it
                kernel = primitive_call(self.bb, function_to_relax(func), args, "fused_primitive")
                if kernel is not None:
                    return kernel
            inner = {**captured, **dict(zip((id(p) for p in func.params), args))}
            saved, self.memo = self.memo, {**self.memo, **inner}
            try:
                self.prewarm(func.body)  # a long fused body, without recursion
                return self.root_value(func.body)
            finally:
                self.memo = saved
        if isinstance(node.op, tvm.ir.GlobalVar):
            return self.lower_global_call(node.op, args)
        op: RelayOp = node.op
        if getattr(op, "custom", False):
            # A program's own op: its type relation's errors are the program's, unwrapped.
            # Relay handed the relation the call's own attrs: None when it has none.
            return self.bb.normalize(op.row.emit(self.bb, args, node.attrs))  # type: ignore[arg-type]
        try:
            attrs = node.attrs if node.attrs is not None else op.row.default_attrs()
            # Normalizing runs Relax's type inference here, so a shape error names the Relay op.
            value = self.bb.normalize(op.row.emit(self.bb, args, attrs))
            if (
                isinstance(value, relax.Call)
                and getattr(value.op, "name", None) in BROADCASTING
                and not shape_known(value)
            ):
                # Relay broadcast Any dimensions with a shape function; Relax needs the shape.
                value = broadcast_call(self.bb, value, f"relay.{op.name}")
            return value
        except UnsupportedRelayError:
            raise
        except Exception as err:  # TVM's own message, made to name the Relay op
            raise RelayTypeError(f"relay.{op.name}: Relax rejects this call: {err}") from err

    def callee(self, op: Expr) -> tuple[Function, dict[int, Any]]:
        """The function a call applies (inlined), and the values its captured variables hold:
        ``op`` is a ``Function``, or a call of one whose body is a ``Function`` (a closure,
        Relay's ``fn (%y) { fn (%x) { %x + %y } }`` applied twice)."""
        if isinstance(op, Function):
            return op, {}
        if isinstance(op, Call) and isinstance(op.op, Expr):
            outer, captured = self.callee(op.op)
            values = [self.visit(a) for a in op.args]
            captured = {**captured, **dict(zip((id(p) for p in outer.params), values))}
            if isinstance(outer.body, Function):
                return outer.body, captured
        raise UnsupportedRelayError(
            f"a call of {type(op).__name__} {op!r} has no Relax form here: only functions, "
            "calls returning a function literal (closures) and functions of the module are "
            "called; a function passed as a value (a higher-order parameter) is not mapped"
        )

    def lower_global_call(self, gvar: Any, args: list[Any]) -> Any:
        """A call to another function of the module, typed by its ``GlobalVar``."""
        if not isinstance(gvar.ty, relax.FuncType):
            raise UnsupportedRelayError(
                f"a call to @{gvar.name_hint}, which has no type yet: assign the callee to the "
                "module first (mod[gv] = relay.Function(...), not tvm.IRModule({...})), then "
                "build the caller. A recursive Relay function (one calling itself) is not "
                "mapped: Relax needs its type first; write the loop with relax.If in a function "
                "with an explicit ret_struct_info, or as TIR"
            )
        try:
            return self.bb.normalize(relax.Call(gvar, args))
        except Exception as err:  # TVM's own message, made to name the callee
            raise RelayTypeError(f"@{gvar.name_hint}: Relax rejects this call: {err}") from err

    def root_value(self, node: Expr) -> Any:
        """The Relax expression of ``node`` without binding it (the caller binds it)."""
        refused = node.op if isinstance(node, Call) else node
        if isinstance(refused, NoRelaxForm):
            raise UnsupportedRelayError(f"relay.{type(refused).__name__}: {refused.relax_refusal}")
        if isinstance(node, Call):
            return self.lower_call(node)
        if isinstance(node, TupleGetItem):
            return relax.TupleGetItem(self.visit(node.tuple_value), node.index)
        if isinstance(node, Tuple):
            return relax.Tuple([self.visit(f) for f in node.fields])
        if isinstance(node, Let):
            self.memo[id(node.var)] = self.visit(node.value)
            node.var._checked_type = node.value._checked_type
            return self.root_value(node.body)
        if isinstance(node, If):
            return self.lower_if(node)
        return self.visit(node)

    def lower_if(self, node: If) -> Any:
        """``relax.If`` of the condition and the two branches, each built in its own scope."""
        cond = self.visit(node.cond)
        branches = []
        for branch in (node.true_branch, node.false_branch):
            saved, self.memo = self.memo, dict(self.memo)  # a branch's values stay inside it
            try:
                with binding_block(self.bb) as block:
                    value = self.visit(branch)
                branches.append(relax.SeqExpr([block.result], value))
            finally:
                self.memo = saved
        types = [from_struct_info(self.bb.normalize(b.body).ty) for b in branches]
        if types[0] != types[1]:
            raise RelayTypeError(
                f"relay.If: the branches have different types, {types[0]!r} and {types[1]!r}"
            )
        try:
            return relax.If(cond, branches[0], branches[1])
        except Exception as err:  # TVM's own message, made to name the Relay node
            raise RelayTypeError(f"relay.If: Relax rejects it: {err}") from err

    def visit(self, node: Expr) -> Any:
        """The Relax value of ``node``, bound in the block when it is an op call."""
        key = id(node)
        if key in self.memo:
            return self.memo[key]
        self.keep.append(node)
        if isinstance(node, Var):
            if id(node) in self.params:
                return self.param(node)  # not memoized: param_vars holds it
            raise TypeError(f"free variable %{node.name_hint} is not a parameter of the function")
        if isinstance(node, Constant):
            value: Any = relax.const(node.data)
            node._checked_type = TensorType(node.data.shape, str(node.data.dtype))
        elif isinstance(node, Tuple):
            value = relax.Tuple([self.visit(f) for f in node.fields])
            node._checked_type = TupleType([f.checked_type for f in node.fields])
        elif isinstance(node, Function):
            raise UnsupportedRelayError(
                "a Relay function used as a value (closures, higher-order calls) has no "
                "Relax dataflow form here: call it (relay.Call(fn, args)) or inline it"
            )
        else:
            expr = self.root_value(node)
            value = (
                expr if isinstance(expr, relax.Var | tvm.ir.expr.Constant) else self.bb.emit(expr)
            )
            self._set_type(node, value)
        self.memo[key] = value
        return value

    def prewarm(self, root: Expr) -> None:
        """Visit everything below ``root`` in topological order, without recursion.

        Deep graphs (a 50-layer network is thousands of calls deep) would overflow Python's
        stack in the recursive :meth:`visit`; visiting in post-order leaves it one level deep.
        Let bodies and inlined function calls are left to :meth:`visit` (their variables are
        bound only when they are reached).
        """
        order: list[Expr] = []
        seen: set[int] = set(self.memo)
        stack: list[tuple[Expr, bool]] = [(c, False) for c in reversed(_children(root))]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(_children(node)))
        depths: dict[int, int] = {}
        for node in order:
            depths[id(node)] = _tuple_depth(node, depths)
            if not isinstance(node, Var):
                self.visit(node)

    def output(self, body: Expr, dataflow: bool = True) -> Any:
        """Bind the function's result with ``emit_output``, as hand-written code does (``emit``
        where control flow keeps the function out of a dataflow block)."""
        self.prewarm(body)
        emit = self.bb.emit_output if dataflow else self.bb.emit
        if id(body) in self.memo:
            value = emit(self.memo[id(body)])
        else:
            value = emit(self.root_value(body))
            self.memo[id(body)] = value
        self._set_type(body, value)
        if isinstance(body, Tuple):
            for f in body.fields:
                if f._checked_type is None:
                    self._set_type(f, self.memo[id(f)])
        return value


def _build(params: list[Var], body: Expr, name: str = "main") -> relax.Function:
    with TRACE_LOCK:  # BlockBuilder keeps one process-wide scope stack
        bb = relax.BlockBuilder()
        # Parameters are given at emit_func_output: untyped ones are typed while emitting.
        with bb.function(name):
            emitter = _Emitter(bb, params, body)
            if _has_if(body):  # Relax keeps control flow out of dataflow blocks
                out = emitter.output(body, dataflow=False)
            else:
                with bb.dataflow():
                    out = emitter.output(body)
            bb.emit_func_output(out, emitter.relax_params(params))
        mod = bb.get()
    func = mod[name]
    # Ops served by TOPI (call_te) add kernels to the builder's module: the function carries
    # them, since it travels alone (tvm.IRModule.from_expr); the shim's builds attach them.
    kernels = {
        gvar.name_hint: f for gvar, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)
    }
    return func.with_attr(PRIM_FUNCS_ATTR, kernels) if kernels else func


def function_to_relax(func: Function) -> relax.Function:
    """The Relax function of a Relay function; fills in ``checked_type`` on its nodes.

    Parameters
    ----------
    func : Function
        The Relay function.

    Returns
    -------
    relax.Function
        The equivalent function, named ``main``.

    Raises
    ------
    ValueError
        For tuples nested past :data:`MAX_TUPLE_DEPTH`, or a program nested past Python's
        recursion limit.
    """
    try:
        relax_func = _build(func.params, func.body)
    except RecursionError as err:  # a nesting the checks above did not bound (Let, If bodies)
        raise ValueError(
            f"the Relay program nests deeper than Python's recursion limit "
            f"({sys.getrecursionlimit()}) lets the shim convert it: flatten it"
        ) from err
    ret: Type = func.body.checked_type
    if func.ret_type is not None and func.ret_type != ret:
        raise RelayTypeError(f"the function returns {ret!r}, not its ret_type {func.ret_type!r}")
    func._checked_type = _func_type(func.params, ret)
    return relax_func


def _func_type(params: list[Var], ret: Type) -> Type:
    return FuncType([p.checked_type for p in params], ret)


def to_relax(expr: Expr, stand_in: bool = False) -> relax.Function:
    """``expr`` as a Relax function of its free variables (a Function converts as itself).

    An expression converts as the Relay function of its free variables, so the module made of
    it (``tvm.IRModule.from_expr(expr)``) still knows its Relay graph (``relay/origin.py``).
    With ``stand_in`` (what TVM receives for the expression), a graph Relax cannot express
    (references, ADTs, closures, type variables) gives the interpreter's stand-in that
    ``mod[gv] = func`` stores, so its module holds it as Relay's held the graph; without, it
    raises.
    """
    func = expr if isinstance(expr, Function) else Function(free_vars(expr), expr)
    try:
        return func.__relax_function__()
    except (UnsupportedRelayError, RelayTypeError):
        reason = needs_interpreter(func) if stand_in else None
        if reason is None:
            raise
    return interpreted_function(func, "main", reason)


def infer(expr: Any) -> Any:
    """Run Relay's type inference on ``expr``; returns ``expr`` with ``checked_type`` set.

    Parameters
    ----------
    expr : Expr or TupleWrapper
        A Relay expression.

    Returns
    -------
    Expr
        The same expression (Relay returned a typed copy; nodes here are typed in place).
    """
    if hasattr(expr, "astuple") and not isinstance(expr, Expr):
        expr = expr.astuple()
    try:
        to_relax(expr)
    except UnsupportedRelayError as no_relax_form:
        # Higher-order or polymorphic functions, references: Relay's own inference types them.
        try:
            infer_relay_types(expr, _op_call_type)
        except (RecursionError, NoTypeRule):
            raise no_relax_form from None
    return expr


def _op_call_type(call: Call, arg_types: list[Any]) -> Any:
    """The type of op call ``call`` on arguments of ``arg_types`` (its Relax form's)."""
    args = [Var(f"arg{i}", t) for i, t in enumerate(arg_types)]
    probe = Call(call.op, args, call.attrs, call.type_args, call.span)
    to_relax(probe)
    return probe.checked_type
