"""The un-warned cores of the ``relay.backend.*`` globals, and te_compiler's view of a cache value.

The API table names a core here for each registered global; ``legacy_surface("relay.backend")``
makes the global from it. A core takes the C++ argument list (the engine or TECompiler object
first) and runs the engine's methods with ``**INTERNAL``: ``relay.backend._CompileEngineJIT``
warns once, as itself.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.facade.engine import CompileEngine
from compile_engine_compat.facade.objects import CCacheKey, CCacheValue
from compile_engine_compat.targets import as_target

__all__ = [
    "TECCacheValue",
    "clear",
    "current_key",
    "engine_of",
    "flat_items",
    "flat_shape_func_items",
    "jit",
    "key_of",
    "lower",
    "lower_external_functions",
    "lower_shape_func",
    "make_key",
    "te_flat_items",
    "te_value",
]


def engine_of(obj: Any) -> CompileEngine:
    """Return the engine behind ``obj`` (the CompileEngine or the TECompiler singleton)."""
    engine = getattr(obj, "_engine", obj)
    if not isinstance(engine, CompileEngine):
        raise TypeError(
            f"expected the CompileEngine or TECompiler, got {type(obj).__module__}."
            f"{type(obj).__qualname__}"
        )
    return engine


def key_of(key: Any) -> CCacheKey:
    """``key`` if it is a CCacheKey; the legacy TypeError otherwise."""
    if not isinstance(key, CCacheKey):
        raise TypeError(f"Expect source_func to be CCacheKey, got {type(key).__qualname__}")
    return key


# -- the cores of the relay.backend.* globals (C++ argument lists) ------------------------------


def make_key(source_func: Any, target: Any) -> CCacheKey:
    """``_make_CCacheKey``: a key, the target converted as the FFI constructor did."""
    return CCacheKey._make(source_func, as_target(target))


def clear(obj: Any) -> None:
    """Empty the lowering cache (not the shape-function cache or the name map, as legacy)."""
    engine_of(obj).clear(**INTERNAL)


def lower(obj: Any, key: Any, prefix: str = "") -> Any:
    """Lower ``key`` with a literal, already mangled symbol prefix (as C++ received it)."""
    if not isinstance(prefix, str):
        raise TypeError(f"mod_name must be a str, got {type(prefix).__qualname__}")
    return engine_of(obj)._lower_value(key_of(key), prefix).cached_func


def lower_shape_func(obj: Any, key: Any) -> Any:
    """Lower the shape function of ``key``."""
    return engine_of(obj).lower_shape_func(key_of(key), **INTERNAL)


def lower_external_functions(obj: Any) -> list[Any]:
    """The external (BYOC) functions to build: none, the shim never caches any."""
    engine_of(obj)
    return []


def jit(obj: Any, key: Any) -> Any:
    """JIT ``key`` through the shared cache and return its memoized kernel."""
    return engine_of(obj).jit(key_of(key), **INTERNAL)


def flat_items(obj: Any) -> list[Any]:
    """The cache as the legacy flat list: key 0, value 0, key 1, value 1, ..."""
    return [item for pair in engine_of(obj).items(**INTERNAL) for item in pair]


def flat_shape_func_items(obj: Any) -> list[Any]:
    """The shape-function cache as the legacy flat list."""
    return [item for pair in engine_of(obj).shape_func_items(**INTERNAL) for item in pair]


def te_flat_items(obj: Any) -> list[Any]:
    """The cache as te_compiler's flat list: its values count ``use_count`` from 1."""
    return [te_value(item) if i % 2 else item for i, item in enumerate(flat_items(obj))]


def current_key(obj: Any) -> CCacheKey | None:
    """The key of the latest ``lower``/``jit`` call, or None before the first."""
    return engine_of(obj).get_current_ccache_key(**INTERNAL)


# -- te_compiler's view of the cache: use_count is 1-based -----------------------------------------


class TECCacheValue:
    """``te_compiler.CCacheValue``: a view of a shared cache entry whose ``use_count`` is 1-based.

    te_compiler (TVM 0.8-0.19) started a new entry at ``use_count = 1``; compile_engine at 0. Both
    modules share one cache, so this view reports (and sets) the shared count plus one.
    """

    __slots__ = ("_value",)

    def __init__(self, value: CCacheValue) -> None:
        self._value = value

    @property
    def cached_func(self) -> Any:
        """The lowered function (``CachedFunc``)."""
        return self._value.cached_func

    @property
    def use_count(self) -> int:
        """Lowerings of this entry: 1 after the first, +1 per cache hit."""
        return self._value.use_count + 1

    @use_count.setter
    def use_count(self, count: int) -> None:
        self._value.use_count = count - 1

    def same_as(self, other: object) -> bool:
        """Legacy ``Object.same_as``: the same cache entry."""
        return isinstance(other, TECCacheValue) and other._value is self._value

    def __eq__(self, other: object) -> bool:
        return self.same_as(other)

    def __hash__(self) -> int:
        return id(self._value)

    def __repr__(self) -> str:
        return f"CCacheValue({self.cached_func!r}, use_count={self.use_count})"


def te_value(value: CCacheValue) -> TECCacheValue:
    """Wrap a shared cache value as te_compiler sees it."""
    return TECCacheValue(value)
