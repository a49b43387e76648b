"""A module's global functions as Relay functions, for the passes over the whole module
(``Inline``, ``LambdaLift``, ``RemoveUnusedFunctions``, ``DeadCodeElimination``, ...).

:func:`relay_definitions` reads every function of a module back as its Relay function (a
front-end function's Relax form, or the stand-in of an interpreted one); :func:`module_of`
stores Relay functions as a new module the way ``mod[gv] = func`` does, callees before their
callers, with the ADT declarations of the old module. :func:`module_graph_pass` makes a real
``tvm.transform.Pass`` of a rewrite of that mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import give_type
from compile_engine_compat.relay._impl.graph_walk import GraphVisitor
from compile_engine_compat.relay._impl.passes import relay_pass

from ..backend.interpreter import declare_type, module_form, module_types, relay_definition
from ..expr import GlobalRef
from ..function import Function

__all__ = [
    "MODULE_PASS_KINDS",
    "global_refs",
    "module_graph_pass",
    "module_of",
    "relay_definitions",
]

#: Relay pass -> "real: <what it does to the module's Relay functions>" (one module each).
MODULE_PASS_KINDS: dict[str, str] = {
    "Inline": "real: on the Relay graph (inline.py), calls to global functions marked Inline "
    "that call no other global function replaced by their bodies, the inlined functions "
    "removed; a callee with a Compiler attribute called as a function literal",
    "LambdaLift": "real: on the Relay graph (lambda_lift.py), each local function a global "
    "function lifted_name<hash>, a closure of its free variables where it has some",
    "EtaExpand": "real: on the Relay graph (eta_expand.py), global functions (expand_global_var)"
    " and constructors (expand_constructor) used as values wrapped in a function calling them",
    "ManifestLifetimes": "real: on the Relay graph (manifest_lifetimes.py), aliases removed "
    "and a memory.kill bound after each variable's last use, from its liveness",
    "PartialEvaluate": "real: on the Relay graph (partial_eval.py), constants folded, known "
    "calls unfolded, branches and matches on known values taken, known reference contents "
    "read; the rest emitted as let bindings",
}

#: GlobalVar -> a Relay function (or a function with no Relay graph, kept as it is).
Functions = dict[Any, Any]


def relay_definitions(mod: tvm.IRModule) -> Functions:
    """GlobalVar -> the Relay function behind each function of ``mod``; a function with no
    Relay graph (a PrimFunc, a Relax function a Relax pass made) maps to itself."""
    found: Functions = {}
    for gvar, func in mod.functions.items():
        relay_func = relay_definition(func)
        found[gvar] = relay_func if relay_func is not None else func
    return found


class _GlobalRefs(GraphVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def visit_other(self, expr: Any) -> Any:
        if isinstance(expr, GlobalRef | tvm.ir.GlobalVar):
            self.names.append(str(expr.name_hint))

    def visit_call(self, call: Any) -> Any:
        if isinstance(call.op, tvm.ir.GlobalVar):
            self.names.append(str(call.op.name_hint))
        return self._visit_children(call)


def global_refs(func: Any) -> list[str]:
    """The names of the global functions ``func`` refers to (called or used as values), once
    per distinct node, children first."""
    if not isinstance(func, Function):
        return []
    walk = _GlobalRefs()
    walk.visit(func)
    return walk.names


def _callees_first(functions: Functions) -> list[Any]:
    by_name = {str(g.name_hint): g for g in functions}
    order: list[Any] = []
    done: set[str] = set()

    def visit(name: str, path: set[str]) -> None:
        if name in done or name in path or name not in by_name:
            return
        path.add(name)
        for callee in global_refs(functions[by_name[name]]):
            visit(callee, path)
        done.add(name)
        order.append(by_name[name])

    for name in by_name:
        visit(name, set())
    return order


def module_of(functions: Functions, like: tvm.IRModule) -> tvm.IRModule:
    """A module of ``functions`` (GlobalVar -> Relay function or TVM function), stored as
    ``mod[gv] = func`` stores them, with the attributes and ADT declarations of ``like``."""
    mod = tvm.IRModule({}, attrs=like.attrs) if like.attrs is not None else tvm.IRModule()
    for header, data in module_types(like).items():
        declare_type(mod, header, data)
    for gvar in _callees_first(functions):
        func = functions[gvar]
        if isinstance(func, Function):
            func = module_form(func, str(gvar.name_hint), mod)
        mod[gvar] = func
        if isinstance(func, relax.Function) and not isinstance(gvar.ty, relax.FuncType):
            give_type(gvar, func.ty)
    return mod


def module_graph_pass(
    name: str, opt_level: int, run: Callable[[Functions], Functions | None]
) -> tvm.transform.Pass:
    """A module pass applying ``run`` to the module's functions (:func:`relay_definitions`);
    ``run`` returning None means no change (the module comes back as it is)."""

    def apply(mod: tvm.IRModule) -> tvm.IRModule:
        out = run(relay_definitions(mod))
        return mod if out is None else module_of(out, mod)

    return relay_pass(name, opt_level, apply)
