"""Which Relay function a Relax function of a module was made from.

Modules hold Relax (``tvm.IRModule.from_expr(relay_func)``), but Relay-era code expects to read
that function back as Relay: the passes that work on Relay's graph (``MergeComposite``,
``AnnotateTarget``, ``PartitionGraph``), the external codegens (``relay.ext.<compiler>`` takes a
Relay function), a user pass written with ``relay.ExprMutator``,
``relay.analysis.post_order_visit(mod["main"], ...)`` and ``mod.astext()``. Each Relax function
the front end makes is remembered here with its Relay function, by the Relax object's identity;
the :data:`LIMIT` most recently made or used ones are kept. A Relax function that a Relax pass
rewrote, or one made long ago, has no Relay origin: callers then work on its Relax form.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.runtime import threads

__all__ = ["LIMIT", "record", "relay_of", "relay_origin", "remember"]

#: How many functions are remembered (the oldest go first): modules being transformed are
#: among the most recent; a function forgotten is refused by the Relay passes, not mistaken.
LIMIT = 512

#: Relax object address -> (the Relax function, kept alive so its address is not reused; the
#: Relay function).
_ORIGINS: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
_lock = threads.fork_safe(threading.Lock())


def remember(relax_func: Any, relay_func: Any) -> Any:
    """Record that ``relax_func`` is the Relax form of ``relay_func``; returns ``relax_func``."""
    with _lock:
        key = handle_of(relax_func)
        _ORIGINS[key] = (relax_func, relay_func)
        _ORIGINS.move_to_end(key)
        while len(_ORIGINS) > LIMIT:
            _ORIGINS.popitem(last=False)
    return relax_func


def relay_origin(relax_func: Any) -> Any:
    """The Relay function ``relax_func`` was made from, or None."""
    try:
        key = handle_of(relax_func)
    except (TypeError, AttributeError):
        return None
    with _lock:
        entry = _ORIGINS.get(key)
    return entry[1] if entry is not None and entry[0].same_as(relax_func) else None


def record(relax_func: Any, relay_func: Any) -> None:
    """:func:`remember`, for callers that do not need the function back."""
    remember(relax_func, relay_func)


def relay_of(value: Any) -> Any:
    """The Relay function ``value`` is the Relax form of, or None.

    Parameters
    ----------
    value : relax.Function, relay.Function, tvm.IRModule or anything
        A Relax function (``mod["main"]``), or a module (its ``main``). A Relay function (what
        Relay-era code reads from ``mod[...]`` under ``install()``) is its own answer, so
        callers need not know which view they hold.
    """
    if isinstance(value, tvm.IRModule):
        if "main" not in value:
            return None
        value = value["main"]
    if callable(getattr(value, "__relax_function__", None)):
        return value  # a relay.Function (the class imports this module: known by its protocol)
    if not isinstance(value, relax.Function):
        return None
    found = relay_origin(value)
    if found is not None:
        with _lock:
            key = handle_of(value)
            if key in _ORIGINS:
                _ORIGINS.move_to_end(key)
    return found
