"""``tvm._ffi`` of TVM <=0.19 (served by ``install()``): its names over ``tvm_ffi``.

``register_func``, ``get_global_func``, ``register_object``, ``register_error`` and
``list_global_func_names`` are ``tvm_ffi``'s (``register_global_func`` was ``register_func``);
``base.TVMError`` is the base class of TVM 0.27's errors (see :mod:`.base`).
"""

from __future__ import annotations

from typing import Any

import tvm_ffi

from compile_engine_compat.surfaces.import_alias import refused_name

from ..virtual_device import PLANNING_WHY
from . import base
from .base import register_error

__all__ = [
    "REFUSED_GLOBALS",
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
REFUSED_GLOBALS: dict[str, str] = {
    "relay.transform.RecoverVirtualDeviceMap": PLANNING_WHY,
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

    A Relay global of :data:`REFUSED_GLOBALS` is a stand-in that refuses when called, naming
    what replaces it (with ``allow_missing``: None, as a program probing for it expects).
    """
    found = tvm_ffi.get_global_func(name, allow_missing=True)
    if found is not None or allow_missing:
        return found  # a program probing with allow_missing takes its fallback, as on 0.19
    if name in REFUSED_GLOBALS:
        return refused_name(name, REFUSED_GLOBALS[name])
    return tvm_ffi.get_global_func(name)


def list_global_func_names() -> list[str]:
    """The names of every registered global function."""
    return list(tvm_ffi.registry.list_global_func_names())
