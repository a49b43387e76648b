"""The ``relay.backend.*`` global functions, registered with the old names and argument lists.

C++ and other FFI users (RAF, tvm-clj) looked these up by name. Importing
``compile_engine_compat.compile_engine`` or ``.te_compiler`` imports this module, which

* registers every global of the legacy API table (``_CompileEngine*``, ``_TECompiler*``,
  ``_make_*`` and ``relay.backend.lower_call``), acting on the one engine singleton;
* plugs the strategy registry into the engine (``engine.op_lowering``, ``engine.schedule_hook``)
  and the legacy pass-config keys into it (``engine.caching_enabled``).

The engine, keys and values are plain Python objects; they cross the FFI unchanged. A user's
``relay.backend.lower_call`` registered before this import is kept, and one registered later
(``override=True``) replaces the shim's; either is then called for every op the engine lowers.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.cache.keys import CCacheKey, as_target
from compile_engine_compat.facade.engine import CompileEngine, global_engine
from compile_engine_compat.facade.shared import (
    clear,
    engine_of,
    flat_items,
    jit,
    key_of,
    lower,
    te_values,
)
from compile_engine_compat.pipeline import strategy as _strategy
from compile_engine_compat.surfaces import passconfig as _passconfig
from compile_engine_compat.surfaces.deprecation import warn_legacy

__all__ = ["GLOBAL_NAMES"]

_PREFIX = "relay.backend."


# -- the registered functions ---------------------------------------------------------------------


def _make_lowered_output(outputs: Any, impl: Any) -> Any:
    warn_legacy("relay.backend._make_LoweredOutput")
    return _strategy.make_lowered_output(list(outputs), impl)


def _make_ccache_key(source_func: Any, target: Any) -> CCacheKey:
    warn_legacy("relay.backend._make_CCacheKey")
    return CCacheKey._make(source_func, as_target(target))


def _compile_engine_global() -> CompileEngine:
    warn_legacy("relay.backend._CompileEngineGlobal")
    return global_engine()


def _compile_engine_clear(engine: Any) -> None:
    warn_legacy("relay.backend._CompileEngineClear")
    clear(engine_of(engine))


def _compile_engine_lower(engine: Any, key: Any, mod_name: str = "") -> Any:
    warn_legacy("relay.backend._CompileEngineLower")
    return lower(engine_of(engine), key, mod_name)


def _compile_engine_lower_shape_func(engine: Any, key: Any) -> Any:
    warn_legacy("relay.backend._CompileEngineLowerShapeFunc")
    return engine_of(engine)._shape_func_value(key_of(key)).cached_func


def _compile_lower_external_functions(engine: Any) -> list[Any]:
    warn_legacy("relay.backend._CompileLowerExternalFunctions")
    engine_of(engine)
    return []  # the shim never caches external (BYOC) functions: nothing to build


def _compile_engine_jit(engine: Any, key: Any) -> Any:
    warn_legacy("relay.backend._CompileEngineJIT")
    return jit(engine_of(engine), key)


def _compile_engine_list_items(engine: Any) -> list[Any]:
    warn_legacy("relay.backend._CompileEngineListItems")
    return flat_items(engine_of(engine))


def _compile_engine_list_shape_func_items(engine: Any) -> list[Any]:
    warn_legacy("relay.backend._CompileEngineListShapeFuncItems")
    return flat_items(engine_of(engine), shape_funcs=True)


def _compile_engine_get_current_ccache_key(engine: Any) -> CCacheKey | None:
    warn_legacy("relay.backend._CompileEngineGetCurrentCCacheKey")
    return engine_of(engine)._current_key


def _te_compiler_global() -> Any:
    warn_legacy("relay.backend._TECompilerGlobal")
    from compile_engine_compat.facade.te_compiler import global_compiler

    return global_compiler()


def _te_compiler_clear(compiler: Any) -> None:
    warn_legacy("relay.backend._TECompilerClear")
    clear(engine_of(compiler))


def _te_compiler_lower(compiler: Any, key: Any, mod_name: str = "") -> Any:
    warn_legacy("relay.backend._TECompilerLower")
    return lower(engine_of(compiler), key, mod_name)


def _te_compiler_jit(compiler: Any, key: Any) -> Any:
    warn_legacy("relay.backend._TECompilerJIT")
    return jit(engine_of(compiler), key)


def _te_compiler_list_items(compiler: Any) -> list[Any]:
    warn_legacy("relay.backend._TECompilerListItems")
    return te_values(flat_items(engine_of(compiler)))


def _lower_call(call: Any, inputs: Any, target: Any, otype: Any = None) -> Any:
    warn_legacy("relay.backend.lower_call")
    return _strategy.lower_one_call(call, list(inputs), target, otype)


#: Global name (without ``relay.backend.``) -> implementation.
GLOBAL_NAMES: dict[str, Any] = {
    "_make_LoweredOutput": _make_lowered_output,
    "_make_CCacheKey": _make_ccache_key,
    "_CompileEngineGlobal": _compile_engine_global,
    "_CompileEngineClear": _compile_engine_clear,
    "_CompileEngineLower": _compile_engine_lower,
    "_CompileEngineLowerShapeFunc": _compile_engine_lower_shape_func,
    "_CompileLowerExternalFunctions": _compile_lower_external_functions,
    "_CompileEngineJIT": _compile_engine_jit,
    "_CompileEngineListItems": _compile_engine_list_items,
    "_CompileEngineListShapeFuncItems": _compile_engine_list_shape_func_items,
    "_CompileEngineGetCurrentCCacheKey": _compile_engine_get_current_ccache_key,
    "_TECompilerGlobal": _te_compiler_global,
    "_TECompilerClear": _te_compiler_clear,
    "_TECompilerLower": _te_compiler_lower,
    "_TECompilerJIT": _te_compiler_jit,
    "_TECompilerListItems": _te_compiler_list_items,
    "lower_call": _lower_call,
}


def register() -> None:
    """Register every legacy global and plug the strategy and pass-config hooks into the engine.

    Idempotent. A ``relay.backend.lower_call`` that is already registered and is not the shim's
    own (a user override) is left in place.
    """
    for name, func in GLOBAL_NAMES.items():
        full = _PREFIX + name
        if name == "lower_call":
            current = tvm.get_global_func(full, allow_missing=True)
            own = _strategy.own_lower_call
            if current is not None and (own is None or not current.same_as(own)):
                continue
        tvm.register_global_func(full, func, override=True)
        if name == "lower_call":
            _strategy.own_lower_call = tvm.get_global_func(full)
    engine = global_engine()
    engine.op_lowering = _strategy.engine_op_lowering
    engine.schedule_hook = _strategy.apply_schedules
    engine.lowering_customized = _strategy.customized
    engine.caching_enabled = _passconfig.caching_enabled
    _passconfig.install_from_env()


register()
