"""Which Relay function a Relax function was built from: the Relay graph behind a module.

A module made by the front end (``tvm.IRModule.from_expr(relay_func)``) holds the Relax form of
a Relay function. Relay-era code expects to read that function back as Relay: a user pass written
with ``relay.ExprMutator``, ``relay.analysis.post_order_visit(mod["main"], ...)``,
``mod.astext()``. This module remembers, for each Relax function the front end built, the Relay
function it came from, so those see the Relay graph.

The table holds both functions strongly (the Relax function's address is the key, so it must
stay alive while it is one) and keeps the :data:`CAPACITY` most recent ones: a Relax function
that a Relax pass rewrote, or one built long ago, has no Relay origin, and callers then work on
its Relax form as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import handle_of

__all__ = ["CAPACITY", "record", "relay_of"]

#: How many Relax functions keep their Relay origin (the most recently built or used ones).
CAPACITY = 256

#: Relax function address -> (the Relax function, the Relay function it was built from).
_ORIGINS: OrderedDict[int, tuple[Any, Any]] = OrderedDict()
_LOCK = threading.Lock()


def record(relax_func: Any, relay_func: Any) -> None:
    """Remember that ``relax_func`` is the Relax form of ``relay_func``.

    Parameters
    ----------
    relax_func : relax.Function
        The function TVM holds.
    relay_func : relay.Function
        The Relay function it was built from.
    """
    key = handle_of(relax_func)
    with _LOCK:
        _ORIGINS[key] = (relax_func, relay_func)
        _ORIGINS.move_to_end(key)
        while len(_ORIGINS) > CAPACITY:
            _ORIGINS.popitem(last=False)


def relay_of(value: Any) -> Any:
    """The Relay function ``value`` is the Relax form of, or None.

    Parameters
    ----------
    value : relax.Function, tvm.IRModule or anything
        A Relax function (``mod["main"]``), or a module (its ``main``).

    Returns
    -------
    relay.Function or None
        The Relay function, when the front end built ``value`` and still remembers it.
    """
    if isinstance(value, tvm.IRModule):
        if "main" not in value:
            return None
        value = value["main"]
    if not isinstance(value, relax.Function):
        return None
    key = handle_of(value)
    with _LOCK:
        entry = _ORIGINS.get(key)
        if entry is None:
            return None
        _ORIGINS.move_to_end(key)
        return entry[1]
