"""Tuned schedules in force: how a scope of tuning records swaps a kernel's schedule in builds.

A tuning records scope (``autotvm.apply_history_best(log)``, ``auto_scheduler.ApplyHistoryBest``,
``meta_schedule``'s ``compile_relay``) enters :func:`applied` with a lookup: a function from an
unscheduled kernel (a PrimFunc without a global symbol) and its target to the scheduled PrimFunc
to use instead, or None. Whole-module builds (``relay.build``) ask :func:`tuned_schedule` for
each kernel before scheduling it with the shim's rules. The scopes nest: the innermost lookup
that answers wins. Outside every scope nothing changes.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator

import tvm
from tvm import tirx

__all__ = ["TunedLookup", "active", "applied", "tuned_schedule"]

#: (unscheduled kernel, target) -> the tuned scheduled kernel, or None to keep the shim's rules.
TunedLookup = Callable[[tirx.PrimFunc, tvm.target.Target], "tirx.PrimFunc | None"]

_lookups: contextvars.ContextVar[tuple[TunedLookup, ...]] = contextvars.ContextVar(
    "compile_engine_compat_tuned_lookups", default=()
)


@contextlib.contextmanager
def applied(lookup: TunedLookup) -> Iterator[None]:
    """Within the block, builds ask ``lookup`` for each kernel first (innermost scope first)."""
    token = _lookups.set((*_lookups.get(), lookup))
    try:
        yield
    finally:
        _lookups.reset(token)


def active() -> bool:
    """Whether a tuning records scope is in force (builds then skip the persistent cache)."""
    return bool(_lookups.get())


def tuned_schedule(func: tirx.PrimFunc, target: tvm.target.Target) -> tirx.PrimFunc | None:
    """The tuned schedule of ``func`` for ``target`` in force, or None (the shim's rules apply).

    Parameters
    ----------
    func : tvm.tirx.PrimFunc
        An unscheduled kernel, without a global symbol.
    target : tvm.target.Target
        The target of the build.
    """
    for lookup in reversed(_lookups.get()):
        found = lookup(func, target)
        if found is not None:
            return found
    return None
