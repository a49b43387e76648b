"""What a module holds that Relax cannot: interpreted functions and ADT declarations.

TVM 0.27's ``IRModule`` stores Relax functions only. A Relay function holding an ADT, a
reference, a module function used as a value, or a type variable is stored as a stand-in Relax
function (its parameters and result untyped objects) that is never built: ``relay.build``
refuses a module holding one, and the interpreter evaluates the Relay function behind it
(``create_executor("debug"/"vm")``, ``relay.vm.compile``). The ``TypeData`` a module declares
(``mod[List] = TypeData(...)``) are kept here by module, as TVM 0.27 modules have no type
definitions.
"""

from __future__ import annotations

import threading
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.relay._impl.graph_walk import children
from compile_engine_compat.relay._impl.origin import relay_origin, remember
from compile_engine_compat.relay.adt import Constructor, TypeData
from compile_engine_compat.relay.expr import Call, Expr, NoRelaxForm, Var
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import (
    INFER_INTERPRETED,
    FuncType,
    RefType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)
from compile_engine_compat.runtime import threads

__all__ = [
    "INTERPRETED_ONLY",
    "declare_type",
    "declared_types",
    "interpreted_function",
    "interpreted_reason",
    "module_types",
    "needs_interpreter",
    "refuse_interpreted",
    "relay_definition",
]

#: What ``relay.build`` says of a module holding an interpreted function.
INTERPRETED_ONLY = (
    "holds what Relax cannot express ({reason}); TVM 0.19 evaluated such programs with its "
    "interpreter: use relay.create_executor('debug', mod=mod).evaluate() (or the VM: "
    "relay.vm.compile, create_executor('vm')), which the shim serves on its interpreter. "
    "relay.build and the graph/aot executors build Relax only"
)

#: Stand-in address -> (the stand-in, the Relay function, why it is interpreted).
_FUNCTIONS: dict[int, tuple[Any, Function, str]] = {}
#: Module address -> (the module, kept alive; its GlobalTypeVar -> TypeData).
_TYPES: dict[int, tuple[Any, dict[Any, TypeData]]] = {}
_lock = threads.fork_safe(threading.Lock())


def _type_reason(ty: Any) -> str | None:
    """Why a type annotation has no Relax form, or None."""
    if isinstance(ty, TypeCall | TypeVar | RefType):
        return f"the type {ty!r}"
    if isinstance(ty, TupleType):
        return next((r for r in map(_type_reason, ty.fields) if r), None)
    if isinstance(ty, FuncType):
        found = [_type_reason(t) for t in [*ty.arg_types, ty.ret_type]]
        return next((r for r in found if r), None)
    return None


def needs_interpreter(expr: Any, mod: Any = None) -> str | None:
    """Why ``expr`` (in ``mod``) must be interpreted, or None when Relax can run it.

    Parameters
    ----------
    expr : relay.Expr
        A front-end expression or function.
    mod : tvm.IRModule, optional
        The module its ``GlobalVar`` calls refer to.

    Returns
    -------
    str or None
        The first node found that Relax cannot express (an ADT, a reference, a type variable,
        a call to an interpreted function of ``mod``).
    """
    seen: set[int] = set()
    called = {id(expr)}  # functions applied where they stand (and the root) lower to Relax
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen or not isinstance(node, Expr):
            continue
        seen.add(id(node))
        if isinstance(node, NoRelaxForm):
            return f"relay.{type(node).__name__}"
        if isinstance(node, Function) and id(node) not in called and not _fused(node):
            return "a function used as a value (a closure)"
        if isinstance(node, Call) and isinstance(node.op, Function):
            called.add(id(node.op))
        if isinstance(node, Function):
            if node.type_params:
                return "a function with type parameters"
            if isinstance(node.ret_type, Type) and _type_reason(node.ret_type):
                return _type_reason(node.ret_type)
        if isinstance(node, Var) and node.type_annotation is not None:
            reason = _type_reason(node.type_annotation)
            if reason:
                return reason
        if isinstance(node, Call):
            if isinstance(node.op, tvm.ir.GlobalVar) and mod is not None:
                callee = _lookup(mod, node.op)
                if callee is None:
                    return f"a call to @{node.op.name_hint}, not yet a function of the module"
                found = interpreted_reason(callee)
                if found:
                    return f"a call to @{node.op.name_hint}, which {found.split(' (')[0]}"
            if isinstance(node.op, Constructor):
                return "relay.Constructor"
            if getattr(node.op, "name", None) == "debug" and getattr(node.attrs, "debug_func", ""):
                return "relay.debug with a debug_func (the interpreter calls it)"
        stack.extend(children(node))
    return None


def _fused(func: Function) -> bool:
    """Whether ``func`` is a fused or partitioned function (lowered where it is bound)."""
    return any(key in func.attrs for key in ("Primitive", "Composite", "Compiler"))


def _lookup(mod: Any, gvar: Any) -> Any:
    try:
        return mod[gvar]
    except (KeyError, ValueError, RuntimeError, tvm.error.InternalError):
        return None


def _infer(func: Function) -> FuncType | None:
    from compile_engine_compat.relay._impl.interpret.adt_types import function_type

    return function_type(func, lambda gvar: None, declared_types())


def interpreted_function(func: Function, name: str, reason: str) -> relax.Function:
    """The stand-in Relax function a module stores for ``func`` (see the module docstring).

    The first one wires the inference of its type (``checked_type``, ``adt_types``) into
    ``relay.ty``.
    """
    if _infer not in INFER_INTERPRETED:
        INFER_INTERPRETED.append(_infer)
    params = [relax.Var(p.name_hint, relax.ObjectType()) for p in func.params]
    body = relax.SeqExpr([], relax.Tuple([]))
    stand_in = relax.Function(params, body, relax.ObjectType()).with_attr("global_symbol", name)
    with _lock:
        _FUNCTIONS[handle_of(stand_in)] = (stand_in, func, reason)
    return remember(stand_in, func)


def _entry(func: Any) -> tuple[Any, Function, str] | None:
    if not isinstance(func, relax.Function):
        return None
    with _lock:
        entry = _FUNCTIONS.get(handle_of(func))
    return entry if entry is not None and entry[0].same_as(func) else None


def interpreted_reason(func: Any) -> str | None:
    """Why the module function ``func`` is a stand-in of an interpreted Relay function, or
    None for any other function."""
    entry = _entry(func)
    return f"is interpreted ({entry[2]})" if entry is not None else None


def relay_definition(func: Any) -> Function | None:
    """The Relay function behind a module function (stand-in or front-end Relax), or None."""
    entry = _entry(func)
    if entry is not None:
        return entry[1]
    found = relay_origin(func)
    return found if isinstance(found, Function) else None


def refuse_interpreted(mod: Any) -> None:
    """Raise ``NotImplementedError`` when ``mod`` holds an interpreted function."""
    if not isinstance(mod, tvm.IRModule):
        return
    for gvar, func in mod.functions.items():
        entry = _entry(func)
        if entry is not None:
            raise NotImplementedError(
                f"@{gvar.name_hint} " + INTERPRETED_ONLY.format(reason=entry[2])
            )


def declare_type(mod: Any, header: Any, data: TypeData) -> None:
    """Record ``mod[header] = data`` (an ADT declaration)."""
    with _lock:
        entry = _TYPES.setdefault(handle_of(mod), (mod, {}))
        if not entry[0].same_as(mod):
            entry = _TYPES[handle_of(mod)] = (mod, {})
        entry[1][header] = data


def module_types(mod: Any) -> dict[Any, TypeData]:
    """The ADT declarations of ``mod`` (GlobalTypeVar -> TypeData), in declaration order."""
    with _lock:
        entry = _TYPES.get(handle_of(mod))
    return dict(entry[1]) if entry is not None and entry[0].same_as(mod) else {}


def declared_types() -> dict[Any, TypeData]:
    """Every ADT declaration of every live module (GlobalTypeVar -> TypeData): a header is one
    object, declared by the module that made it."""
    with _lock:
        entries = list(_TYPES.values())
    return {header: data for _, types in entries for header, data in types.items()}
