"""``relay.transform.RemoveUnusedFunctions``: the global functions no entry function reaches
leave the module, as TVM 0.19's pass did.

A function is reached when an entry function (``main`` by default) or a reached function
refers to it: calls it, or uses it as a value (``relay.GlobalVar`` passed as an argument or
returned by an ``If``). Functions with no Relay graph (Relax functions a Relax pass made) are
read by their Relax form. The kept functions are the old module's own objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.passes import relay_pass

from ..backend.interpreter import declare_type, module_types
from .module_functions import global_refs, relay_definitions

__all__ = ["RemoveUnusedFunctions", "reachable"]


def _refs(func: Any) -> list[str]:
    if isinstance(func, relax.Function):
        names: list[str] = []

        def visit(node: Any) -> None:
            if isinstance(node, tvm.ir.GlobalVar):
                names.append(str(node.name_hint))

        relax.analysis.post_order_visit(func, visit)
        return names
    return global_refs(func)


def reachable(functions: dict[Any, Any], entries: Sequence[str]) -> set[str]:
    """The names of the functions the ``entries`` reach (themselves included)."""
    by_name = {str(g.name_hint): f for g, f in functions.items()}
    seen: set[str] = set()
    stack = [name for name in entries if name in by_name]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(n for n in _refs(by_name[name]) if n in by_name)
    return seen


def _remove_unused(mod: tvm.IRModule, entries: Sequence[str]) -> tvm.IRModule:
    kept = reachable(relay_definitions(mod), entries)
    if len(kept) == len(mod.functions):
        return mod
    new = tvm.IRModule({}, attrs=mod.attrs) if mod.attrs is not None else tvm.IRModule()
    for header, data in module_types(mod).items():
        declare_type(new, header, data)
    for gvar, func in mod.functions.items():
        if str(gvar.name_hint) in kept:
            new[gvar] = func
    return new


@legacy_api("relay.transform")
def RemoveUnusedFunctions(entry_functions: Sequence[str] | None = None) -> tvm.transform.Pass:
    """``relay.transform.RemoveUnusedFunctions(entry_functions=None)`` (opt level 1): the
    functions that no entry function (default ``["main"]``) reaches are removed."""
    if isinstance(entry_functions, str):
        raise TypeError(
            "RemoveUnusedFunctions(entry_functions) takes a list of names, got the string "
            f"{entry_functions!r}"
        )
    entries = [str(n) for n in entry_functions] if entry_functions is not None else ["main"]
    return relay_pass("RemoveUnusedFunctions", 1, lambda mod: _remove_unused(mod, entries))
