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


#: TVM 0.19's Relay globals that Relay-era code looks up and TVM 0.27 cannot serve -> why, and
#: what replaces them: the lookup gives a stand-in that refuses when called.
REFUSED_GLOBALS: dict[str, str] = {
    "relay.transform.RecoverVirtualDeviceMap": PLANNING_WHY,
}


def get_global_func(name: str, allow_missing: bool = False) -> Any:
    """The global function ``name``; None when missing and ``allow_missing`` (TVM 0.19's).

    A Relay global of :data:`REFUSED_GLOBALS` is a stand-in that refuses when called, naming
    what replaces it.
    """
    found = tvm_ffi.get_global_func(name, allow_missing=True)
    if found is None and name in REFUSED_GLOBALS:
        return refused_name(name, REFUSED_GLOBALS[name])
    if allow_missing:
        return found
    return tvm_ffi.get_global_func(name)


def list_global_func_names() -> list[str]:
    """The names of every registered global function."""
    return list(tvm_ffi.registry.list_global_func_names())
