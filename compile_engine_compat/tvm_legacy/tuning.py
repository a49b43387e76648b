"""The refusal of TVM <=0.19's tuning entry points (AutoTVM, auto_scheduler), raised at the call.

Relay-era files import the tuners, runners and task extractors at the top and call them in a
tuning step, often behind a flag. The names therefore exist and the files import; calling one
raises :class:`TuningRemovedError`, which names what replaces tuning on TVM 0.27 and the
migration guide's section (the ``tvm.autotvm.tuning`` row of the API table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from compile_engine_compat.api_table import lookup

__all__ = ["TuningRemovedError", "refuse_tuning", "refused_callable", "refused_class"]


class TuningRemovedError(NotImplementedError):
    """A TVM <=0.19 tuning entry point was called; modern TVM has no AutoTVM/auto_scheduler."""


def refuse_tuning(name: str) -> NoReturn:
    """Raise the refusal of the tuning entry point ``name`` (e.g. ``"autotvm.tuner.XGBTuner"``).

    Raises
    ------
    TuningRemovedError
        Always: it names ``tvm.s_tir.meta_schedule`` and the guide's section.
    """
    row = lookup("tvm.autotvm.tuning")
    raise TuningRemovedError(
        f"tvm.{name} was removed with AutoTVM and auto_scheduler (TVM 0.20): tuning tasks "
        "cannot be extracted, tuned or measured, and the shim builds with its own schedules. "
        f"To tune on TVM 0.27, {row.replacement}. See {row.docs}."
    )


def refused_callable(name: str) -> Callable[..., Any]:
    """A function ``name`` that raises :class:`TuningRemovedError` when called."""

    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        refuse_tuning(name)

    refused.__name__ = refused.__qualname__ = name.rsplit(".", 1)[-1]
    refused.__doc__ = f"``tvm.{name}``: removed; calling it raises TuningRemovedError."
    refused.__legacy_refused__ = True  # type: ignore[attr-defined]  # a refusal stand-in
    return refused


def refused_class(name: str) -> type:
    """A class ``name`` (importable, subclassable) whose construction raises the refusal."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        refuse_tuning(name)

    doc = f"``tvm.{name}``: removed; constructing it raises TuningRemovedError."
    namespace = {"__init__": __init__, "__doc__": doc, "__legacy_refused__": True}
    return type(name.rsplit(".", 1)[-1], (), namespace)
