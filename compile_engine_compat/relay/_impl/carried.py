"""The kernels a front-end Relax function carries, stored in the module that holds it.

A Relax function the front end builds travels alone (``tvm.IRModule.from_expr(relay_func)``,
``mod[name] = relay_func``), so the PrimFuncs its ``call_tir`` calls name (the TOPI-served ops,
a called ``Primitive`` function's one kernel) ride in its attribute
:data:`~compile_engine_compat.pipeline.model.vm_executable.PRIM_FUNCS_ATTR`. A module holding
such a function as it is calls GlobalVars it lacks (``relax.analysis.well_formed`` fails) and
does not print (TVMScript cannot print a PrimFunc as an attribute value). So every place that
stores one (:func:`settle_module`: ``mod[...] = ...``, ``IRModule.from_expr``, the Relay pass
wrappers) puts the kernels in the module under their GlobalVars and the function without the
attribute, still mapped to its Relay function (:mod:`.origin`).
"""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.boundary import give_type
from compile_engine_compat.pipeline.model.vm_executable import carried_prim_funcs
from compile_engine_compat.relay._impl.origin import relay_origin, remember

__all__ = ["settle_function", "settle_module", "settled_module"]


def settle_function(mod: tvm.IRModule, func: Any) -> Any:
    """Add the kernels ``func`` carries to ``mod`` (in place); the function to store.

    Parameters
    ----------
    mod : tvm.IRModule
        The module ``func`` is about to be stored in.
    func : tvm.ir.BaseFunc
        The function being stored.

    Returns
    -------
    tvm.ir.BaseFunc
        ``func`` itself when it carries nothing; otherwise ``func`` without the attribute, its
        calls naming the kernels as ``mod`` now holds them. A kernel whose name ``mod`` holds
        already is shared when it is the same PrimFunc, renamed when it is another (two
        functions of a module each built their own ``add``).
    """
    stripped, kernels = carried_prim_funcs(func)
    if stripped is func:
        return func
    held = {gvar.name_hint: (gvar, held_func) for gvar, held_func in mod.functions.items()}
    renames: dict[Any, Any] = {}
    for gvar, kernel in kernels.items():
        known = held.get(gvar.name_hint)
        if known is not None and known[0].same_as(gvar):
            continue
        if known is not None and tvm_ffi.structural_equal(known[1], kernel):
            renames[gvar] = known[0]
            continue
        target = gvar if known is None else _fresh_global_var(gvar, held)
        if target is not gvar:
            renames[gvar] = target
        mod.update_func(target, kernel)
        held[target.name_hint] = (target, kernel)
    if renames:
        stripped = _GlobalVarRenamer(renames).visit_expr(stripped)
    relay_func = relay_origin(func)
    return stripped if relay_func is None else remember(stripped, relay_func)


def settle_module(mod: tvm.IRModule) -> tvm.IRModule:
    """Settle every function of ``mod`` that carries kernels (:func:`settle_function`), in
    place: for a module just made (``IRModule.from_expr``, a pass's new module). Returns it."""
    for gvar, func in list(mod.functions.items()):
        settled = settle_function(mod, func)
        if settled is not func:
            mod.update_func(gvar, settled)
    return mod


def settled_module(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` itself when no function of it carries kernels; otherwise a settled copy (the
    module a pass was given stays as it was)."""
    if all(carried_prim_funcs(func)[0] is func for func in mod.functions.values()):
        return mod
    return settle_module(mod.clone())


def _fresh_global_var(gvar: Any, held: dict[str, Any]) -> Any:
    """A GlobalVar of ``gvar``'s type named ``<name>_<n>``, a name ``held`` lacks."""
    index = 1
    while f"{gvar.name_hint}_{index}" in held:
        index += 1
    fresh = tvm.ir.GlobalVar(f"{gvar.name_hint}_{index}")
    if gvar.ty is not None:
        give_type(fresh, gvar.ty)
    return fresh


@relax.expr_functor.mutator
class _GlobalVarRenamer(relax.PyExprMutator):
    """Replaces the GlobalVars a function names, by identity (a call's kernel renamed)."""

    def __init__(self, renames: dict[Any, Any]) -> None:
        super().__init__()
        self.renames = renames

    def visit_global_var_(self, op: Any) -> Any:
        for old, new in self.renames.items():
            if old.same_as(op):
                return new
        return op
