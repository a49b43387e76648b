"""``relay.op.contrib.register``: the pattern tables of external compilers (BYOC).

A vendor registers its table once (``@register_pattern_table("forge")``); ``MergeComposite``
takes the table, and ``get_pattern_table`` reads it back. Moving to Relax:
``tvm.relax.backend.pattern_registry.register_patterns``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.runtime import threads

__all__ = ["get_pattern_table", "register_pattern_table"]

_PATTERN_TABLES: dict[str, Any] = {}
_lock = threads.fork_safe(threading.Lock())


@legacy_api("relay.op.contrib.register_pattern_table")
def register_pattern_table(compiler: str, table: Callable[[], Any] | None = None) -> Any:
    """Register the pattern table of ``compiler`` (Relay's decorator).

    Parameters
    ----------
    compiler : str
        The external compiler's name.
    table : callable, optional
        A function returning the table: a list of ``(name, pattern)`` or
        ``(name, pattern, check)``. Without it, a decorator is returned.

    Returns
    -------
    callable
        ``table`` itself, or the decorator.
    """
    if not isinstance(compiler, str) or not compiler:
        raise TypeError(f"register_pattern_table takes a compiler name (str), got {compiler!r}")

    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        if not callable(fn):
            raise TypeError(f"register_pattern_table({compiler!r}) takes a function, got {fn!r}")
        entries = fn()
        with _lock:
            _PATTERN_TABLES[compiler] = entries
        return fn

    return register(table) if table is not None else register


def get_pattern_table(compiler: str) -> Any:
    """The pattern table registered for ``compiler``, or None."""
    with _lock:
        return _PATTERN_TABLES.get(compiler)
