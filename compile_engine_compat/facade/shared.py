"""The un-warned core that the registered globals and the TECompiler share.

Both reach the one engine and its cache directly, without the legacy warnings of the public
methods: ``relay.backend._CompileEngineJIT`` and ``TECompiler.jit`` warn once, as themselves,
and then call :func:`jit` here.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.cache.keys import CCacheKey, CCacheValue
from compile_engine_compat.facade.engine import CompileEngine

__all__ = [
    "TECCacheValue",
    "clear",
    "engine_of",
    "flat_items",
    "jit",
    "key_of",
    "lower",
    "te_value",
    "te_values",
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


def flat_items(engine: CompileEngine, shape_funcs: bool = False) -> list[Any]:
    """The cache as the legacy flat list: key 0, value 0, key 1, value 1, ..."""
    with engine._lock:
        pairs = list((engine._shape_cache if shape_funcs else engine._cache).values())
    return [item for pair in pairs for item in pair]


def clear(engine: CompileEngine) -> None:
    """Empty the lowering cache (not the shape-function cache or the name map, as legacy)."""
    with engine._lock:
        engine._cache.clear()


def jit(engine: CompileEngine, key: Any) -> Any:
    """JIT ``key`` through the shared cache and return its memoized kernel."""
    return engine._kernel(engine._lower_wrapped(key_of(key), None, ""))


def lower(engine: CompileEngine, key: Any, prefix: str) -> Any:
    """Lower ``key`` with a literal, already mangled symbol prefix (as C++ received it)."""
    if not isinstance(prefix, str):
        raise TypeError(f"mod_name must be a str, got {type(prefix).__qualname__}")
    return engine._lower_value(key_of(key), prefix).cached_func


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


def te_values(flat: list[Any]) -> list[Any]:
    """Rewrite a flat key/value list with te_compiler's value views."""
    return [te_value(item) if i % 2 else item for i, item in enumerate(flat)]
