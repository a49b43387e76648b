"""``tvm._ffi`` of TVM <=0.19 (served by ``install()``): its names over ``tvm_ffi``.

``register_func``, ``get_global_func``, ``register_object``, ``register_error`` and
``list_global_func_names`` are ``tvm_ffi``'s (``register_global_func`` was ``register_func``);
``base.TVMError`` is the base class of TVM 0.27's errors (see :mod:`.base`).
"""

from __future__ import annotations

from typing import Any

import tvm_ffi

from . import base
from .base import register_error

__all__ = [
    "base",
    "get_global_func",
    "list_global_func_names",
    "register_error",
    "register_func",
    "register_object",
    "remove_global_func",
]

register_func = tvm_ffi.register_global_func
register_object = tvm_ffi.register_object
remove_global_func = tvm_ffi.remove_global_func


#: TVM 0.19's C++ Relay functions that programs fetched by name -> why they are gone and what
#: replaces them. ``get_global_func`` gives a stand-in refused at the call, so a module that
#: fetches one at import (upstream's backend tests do) loads, and the call says why.
REMOVED_GLOBAL_FUNCS: dict[str, str] = {
    "relay.tec.LowerTE": (
        "Relay's TE lowering pass (call_lowered, per-function PrimFuncs) went with Relay: "
        "relay.build lowers through the shim's TE compiler; in Relax, "
        "relax.transform.LegalizeOps() then tvm.compile"
    ),
    "relay._transform.RemoveStandaloneReshapes": (
        "it rewrote Relay's lowered call_lowered form, which TVM 0.27 has no longer; in Relax, "
        "relax.transform.RemoveRedundantReshape()"
    ),
    "relay.collage.PartitionForTesting": (
        "Collage partitioning went with Relay: relax.transform.FuseOpsByPattern and "
        "relax.transform.RunCodegen partition for external compilers"
    ),
}


def get_global_func(name: str, allow_missing: bool = False) -> Any:
    """The global function ``name``; None when missing and ``allow_missing`` (TVM 0.19's).

    A C++ Relay function TVM 0.19 had (:data:`REMOVED_GLOBAL_FUNCS`) comes back as a stand-in
    refused at the call, naming its replacement (with ``allow_missing``: None, as a program
    probing for it expects).
    """
    found = tvm_ffi.get_global_func(name, allow_missing=True)
    if found is not None or allow_missing:
        return found
    if name in REMOVED_GLOBAL_FUNCS:
        from compile_engine_compat.surfaces.import_alias import refused_name

        return refused_name(f"global function {name}", REMOVED_GLOBAL_FUNCS[name])
    return tvm_ffi.get_global_func(name)


def list_global_func_names() -> list[str]:
    """The names of every registered global function."""
    return list(tvm_ffi.registry.list_global_func_names())
