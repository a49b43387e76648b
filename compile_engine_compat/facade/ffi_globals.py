"""The ``relay.backend.*`` global functions, registered with the old names and argument lists.

C++ and other FFI users (RAF, tvm-clj) looked these up by name. The legacy modules
``compile_engine_compat.compile_engine`` and ``.te_compiler`` call :func:`register` when they are
imported, as TVM's did through ``_init_api``: it registers every global of the legacy API table
(``_CompileEngine*``, ``_TECompiler*``, ``_make_*`` and ``relay.backend.lower_call``), acting on
the one engine singleton, and makes PassContext accept the legacy keys. Importing this module
registers nothing.

The engine, keys and values are plain Python objects; they cross the FFI unchanged. A user's
``relay.backend.lower_call`` registered before this import is kept, and one registered later
(``override=True``) replaces the shim's; either is then called for every op the engine lowers.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_surface
from compile_engine_compat.pipeline import implementations as _implementations
from compile_engine_compat.surfaces import passconfig as _passconfig

__all__ = ["GLOBAL_NAMES", "register"]

_PREFIX = "relay.backend."

#: Global name (without ``relay.backend.``) -> the registered function, made from the API table:
#: each row of :data:`~compile_engine_compat.api_table.GLOBAL_ROWS` names its core.
GLOBAL_NAMES: dict[str, Any] = legacy_surface(_PREFIX.rstrip("."))


def register() -> None:
    """Register every legacy global and make PassContext accept the legacy keys.

    Idempotent. A ``relay.backend.lower_call`` that is already registered and is not the shim's
    own (a user override) is left in place.
    """
    for name, func in GLOBAL_NAMES.items():
        full = _PREFIX + name
        if name == "lower_call":
            current = tvm.get_global_func(full, allow_missing=True)
            own = _implementations.own_lower_call()
            if current is not None and (own is None or not current.same_as(own)):
                continue
        tvm.register_global_func(full, func, override=True)
        if name == "lower_call":
            _implementations.remember_own_lower_call(tvm.get_global_func(full))
    _passconfig.install_from_env()
