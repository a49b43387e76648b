"""Which Relay function a Relax function of a module was made from.

Modules hold Relax (``tvm.IRModule.from_expr(relay_func)``), but the passes that work on Relay's
graph (``MergeComposite``, ``AnnotateTarget``, ``PartitionGraph``) and the external codegens
(``relay.ext.<compiler>`` takes a Relay function) need the Relay graph back. Each Relax function
the front end makes is remembered here with its Relay function, by the Relax object's identity.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.runtime import threads

__all__ = ["relay_origin", "remember"]

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
