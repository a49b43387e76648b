"""``relay.transform.Inline``: global functions marked ``Inline`` inlined into their callers,
on the Relay graph, as TVM 0.19's pass did.

Functions are visited callees first. In each, a call to a global function that is marked
``Inline``, is not recursive and calls no other global function (after its own inlining) is
replaced by the callee's body with its parameters bound to the arguments; a reference to such
a function that is not a call becomes the function itself (a closure). A callee handed to an
external compiler (``Compiler`` attribute) is not opened: the call calls the function literal.
Inlined functions that nothing refers to any more leave the module, unless nothing called them
in the first place (entry functions stay).
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, bind

from ..expr import Call, GlobalRef
from ..function import Function
from .module_functions import Functions, global_refs, module_graph_pass

__all__ = ["Inline"]


def _marked(func: Any, key: str) -> bool:
    value = func.attrs.get(key) if isinstance(func, Function) else None
    if value is None:
        return False
    return bool(value) if not isinstance(value, str) else True


class _Inliner(GraphMutator):
    def __init__(self, state: _State, caller: str) -> None:
        super().__init__()
        self.state = state
        self.caller = caller

    def _target(self, gvar: Any) -> Function | None:
        name = str(gvar.name_hint)
        if not self.state.can_inline(name):
            return None
        self.state.calls[self.caller].remove(name)
        func: Function = self.state.functions[name]
        return Function(func.params, func.body, func.ret_type, func.type_params, func.attrs)

    def visit_call(self, call: Call) -> Any:
        if isinstance(call.op, tvm.ir.GlobalVar):
            args = [self.visit(a) for a in call.args]
            func = self._target(call.op)
            if func is not None:
                if "Compiler" in func.attrs:
                    return Call(func, args, call.attrs, call.type_args)
                return bind(func.body, dict(zip(func.params, args, strict=True)))
        return self._visit_children(call)

    def visit_function(self, func: Function) -> Any:
        return func if _marked(func, "Primitive") else self._visit_children(func)

    def visit_other(self, expr: Any) -> Any:
        if isinstance(expr, GlobalRef | tvm.ir.GlobalVar):
            func = self._target(expr)
            return func if func is not None else expr
        return super().visit_other(expr)


class _State:
    def __init__(self, functions: Functions) -> None:
        self.gvars = {str(g.name_hint): g for g in functions}
        self.functions = {str(g.name_hint): f for g, f in functions.items()}
        self.calls = {name: global_refs(f) for name, f in self.functions.items()}

    def recursive(self, name: str) -> bool:
        return name in self.calls.get(name, [])

    def can_inline(self, name: str) -> bool:
        func = self.functions.get(name)
        return (
            isinstance(func, Function)
            and not self.calls[name]
            and not self.recursive(name)
            and _marked(func, "Inline")
        )

    def refs(self, name: str) -> int:
        return sum(callees.count(name) for callees in self.calls.values())

    def order(self) -> list[str]:
        """Callees before callers."""
        order: list[str] = []
        done: set[str] = set()

        def visit(name: str, path: set[str]) -> None:
            if name in done or name in path or name not in self.calls:
                return
            path.add(name)
            for callee in self.calls[name]:
                visit(callee, path)
            done.add(name)
            order.append(name)

        for name in self.calls:
            visit(name, set())
        return order


def _inline(functions: Functions) -> Functions | None:
    state = _State(functions)
    entries = {name for name in state.calls if state.refs(name) == 0}
    order = state.order()
    for name in order:
        callees = state.calls[name]
        func = state.functions[name]
        if not callees or (state.recursive(name) and len(callees) == 1):
            continue
        if isinstance(func, Function):
            body = _Inliner(state, name).visit(func.body)
            state.functions[name] = Function(
                func.params, body, func.ret_type, func.type_params, func.attrs
            )
    kept: Functions = {}
    for name in state.functions:
        func = state.functions[name]
        removable = name not in entries and not state.recursive(name) and _marked(func, "Inline")
        if removable and state.refs(name) == 0:
            continue
        kept[state.gvars[name]] = func
    return kept


@legacy_api("relay.transform.more_passes")
def Inline() -> tvm.transform.Pass:
    """``relay.transform.Inline()`` (opt level 1): the global functions marked ``Inline``
    inlined into their callers, on the Relay graph (see the module docstring)."""
    return module_graph_pass("Inline", 1, _inline)
