"""A module's Relay functions, for the passes that work on Relay's graph (the BYOC passes).

Modules hold the Relax form of each front-end function; :mod:`..origin` remembers the Relay
function behind it. :func:`relay_functions` reads them back and :func:`to_module` stores Relay
functions as a new module (each Relax form remembered again), so a pass written on the Relay
graph is a real ``tvm.transform.Pass`` over ``tvm.IRModule``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import give_type
from compile_engine_compat.relay._impl.carried import settle_module
from compile_engine_compat.relay._impl.origin import relay_origin, remember

from ..function import Function

__all__ = ["CODEGEN_ATTRS", "relay_functions", "relay_graph_pass", "to_module"]

#: Relay attribute -> the Relax attribute ``relax.transform.RunCodegen`` reads.
CODEGEN_ATTRS = {"Compiler": "Codegen", "global_symbol": "global_symbol"}


def relay_functions(mod: tvm.IRModule, pass_name: str) -> dict[Any, Function]:
    """GlobalVar -> the Relay function of each Relax function of ``mod`` (PrimFuncs skipped).

    Raises
    ------
    TypeError
        For a Relax function not made by the Relay front end (Relay passes need its graph).
    """
    found: dict[Any, Function] = {}
    for gvar, func in mod.functions.items():
        if not isinstance(func, relax.Function):
            continue
        origin = relay_origin(func)
        if origin is None:
            raise TypeError(
                f"relay.transform.{pass_name}: @{gvar.name_hint} is a Relax function that the "
                "Relay front end did not build, so it has no Relay graph to work on. Build it "
                "with relay.Function (tvm.IRModule.from_expr(relay_func)), or use the Relax "
                "passes: relax.transform.FuseOpsByPattern, MergeCompositeFunctions, RunCodegen"
            )
        found[gvar] = origin
    return found


def to_module(functions: dict[Any, Function], attrs: Any = None) -> tvm.IRModule:
    """A module of the Relax forms of Relay ``functions`` (GlobalVar or name -> function).

    Functions called by others come first (their GlobalVar is typed before the caller is
    built); a function with a ``Compiler`` attribute carries ``Codegen`` and ``global_symbol``
    in its Relax form, for ``relax.transform.RunCodegen``.
    """
    mod = tvm.IRModule({}, attrs=attrs) if attrs is not None else tvm.IRModule()
    ordered = sorted(functions.items(), key=lambda kv: 0 if "Compiler" in kv[1].attrs else 1)
    for key, func in ordered:
        gvar = key if isinstance(key, tvm.ir.GlobalVar) else tvm.ir.GlobalVar(key)
        relax_func = func.__relax_function__().with_attr("global_symbol", gvar.name_hint)
        for relay_key, relax_key in CODEGEN_ATTRS.items():
            if relay_key in func.attrs:
                relax_func = relax_func.with_attr(relax_key, str(func.attrs[relay_key]))
        mod[gvar] = remember(relax_func, func)
        if not isinstance(gvar.ty, relax.FuncType):
            give_type(gvar, relax_func.ty)
    # The kernels the functions carry go into the module (mod[gvar] = ... does so only under
    # install()).
    return settle_module(mod)


def relay_graph_pass(
    name: str, run: Callable[[dict[Any, Function]], dict[Any, Function]]
) -> tvm.transform.Pass:
    """A module pass applying ``run`` to the module's Relay functions.

    Parameters
    ----------
    name : str
        Relay's pass name (``"MergeComposite"``).
    run : callable
        GlobalVar -> Relay function, to the new mapping (GlobalVars or names).
    """

    def transform(mod: tvm.IRModule, _ctx: Any) -> tvm.IRModule:
        return to_module(run(relay_functions(mod, name)), mod.attrs)

    return tvm.transform.module_pass(transform, opt_level=0, name=name)
