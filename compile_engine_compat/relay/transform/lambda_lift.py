"""``relay.transform.LambdaLift``: every local function becomes a global function of the module,
on the Relay graph, as TVM 0.19's pass did.

A local function (any function below a global function's top level, except a ``Primitive``
one) is added to the module as ``lifted_name<structural hash>``. With no free variables it is
that function, and the local function becomes its ``GlobalVar``; with free variables it is a
closure: a global function of the captured variables returning the local function (marked
``Closure``), and the local function becomes a call of it on those variables. A ``let``-bound
function calling itself calls the lifted function. Functions with a ``Compiler`` attribute are
left as they are.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, bind
from compile_engine_compat.relay._impl.structural_hash import structural_hash

from ..analysis.vars import free_vars
from ..expr import Call, Let, Var
from ..function import Function
from ..ty import FuncType
from .module_functions import Functions, module_graph_pass

__all__ = ["LambdaLift"]


def _flag(func: Function, key: str) -> bool:
    value = func.attrs.get(key)
    return value is not None and bool(int(value))


class _Lifter(GraphMutator):
    def __init__(self, lifted: dict[str, tuple[Any, Function]]) -> None:
        super().__init__()
        self.lifted = lifted
        self.letrec: list[Var] = []
        self.recursive: dict[int, Any] = {}

    def visit_let(self, let: Let) -> Any:
        is_lambda = isinstance(let.value, Function) and not _flag(let.value, "Primitive")
        if is_lambda:
            self.letrec.append(let.var)
        value = self.visit(let.value)
        if is_lambda:
            self.letrec.pop()
        body = self.visit(let.body)
        if value is let.value and body is let.body:
            return let
        return Let(let.var, value, body)

    def visit_call(self, call: Call) -> Any:
        new = self._visit_children(call)
        if isinstance(call.op, Var) and self.letrec and call.op is self.letrec[-1]:
            target = self.recursive[id(call.op)]
            return Call(target, new.args, call.attrs, call.type_args)
        return new

    def visit_function(self, func: Function) -> Any:
        if _flag(func, "Primitive"):
            return func
        gvar = tvm.ir.GlobalVar(f"lifted_name{structural_hash(func)}")
        own = self.letrec[-1] if self.letrec else None
        found = free_vars(func)
        captured = [v for v in found if v is not own]
        if own is not None and len(captured) < len(found):
            self.recursive[id(own)] = Call(gvar, list(captured)) if captured else gvar
        body = self._visit_children(func)
        if not captured and not func.type_params:
            lifted = Function(body.params, body.body, body.ret_type, body.type_params, body.attrs)
        else:
            fresh = [Var(v.name_hint, v.type_annotation) for v in captured]
            inner = bind(body.body, dict(zip(captured, fresh, strict=True)))
            closure = Function(body.params, inner, body.ret_type, body.type_params, body.attrs)
            ret = None
            param_types = [p.type_annotation for p in func.params]
            if func.ret_type is not None and all(t is not None for t in param_types):
                ret = FuncType(param_types, func.ret_type)  # type: ignore[arg-type]
            lifted = Function(fresh, closure, ret, [], {}).with_attr("Closure", 1)
        name = str(gvar.name_hint)
        if name in self.lifted:
            gvar = self.lifted[name][0]
        else:
            self.lifted[name] = (gvar, lifted)
        return Call(gvar, list(captured)) if captured else gvar


def _lift(functions: Functions) -> Functions | None:
    lifted: dict[str, tuple[Any, Function]] = {}
    out: Functions = {}
    for gvar, func in functions.items():
        if not isinstance(func, Function) or "Compiler" in func.attrs:
            out[gvar] = func
            continue
        body = _Lifter(lifted).visit(func.body)
        same = body is func.body
        out[gvar] = (
            func
            if same
            else Function(func.params, body, func.ret_type, func.type_params, func.attrs)
        )
    if not lifted:
        return None
    for gvar, func in lifted.values():
        out[gvar] = func
    return out


@legacy_api("relay.transform.more_passes")
def LambdaLift() -> tvm.transform.Pass:
    """``relay.transform.LambdaLift()`` (opt level 1): local functions become global ones, on
    the Relay graph (see the module docstring)."""
    return module_graph_pass("LambdaLift", 1, _lift)
