"""The refusal of the TVM <=0.19 tuning names the shim does not serve, raised at the call.

Tuning programs are served (:mod:`.tune`, :mod:`.autotvm`, :mod:`.auto_scheduler`); what
works on other objects than the kernels of a module's build (``autotvm.task.create`` templates,
a hand-made ``auto_scheduler.SearchTask``, ``auto_schedule``, ``record.pick_best``...) imports,
and raises :class:`TuningRemovedError` when called, naming what replaces it on TVM 0.27 and the
migration guide's section (the ``tvm.autotvm.tuning`` row of the API table).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn

from compile_engine_compat.api_table import lookup

__all__ = ["TuningRemovedError", "refuse_tuning", "refused_callable", "refused_class"]


class TuningRemovedError(NotImplementedError):
    """A TVM <=0.19 tuning name the shim does not serve was called."""


def refuse_tuning(name: str) -> NoReturn:
    """Raise the refusal of the tuning entry point ``name`` (e.g. ``"autotvm.tuner.XGBTuner"``).

    Raises
    ------
    TuningRemovedError
        Always: it names ``tvm.s_tir.meta_schedule`` and the guide's section.
    """
    row = lookup("tvm.autotvm.tuning")
    raise TuningRemovedError(
        f"tvm.{name} was removed with AutoTVM and auto_scheduler (TVM 0.20) and is not served: "
        "the shim tunes the kernels of a module's build (autotvm.task.extract_from_program, "
        "auto_scheduler.extract_tasks), not templates or hand-made computes. "
        f"To tune these on TVM 0.27, {row.replacement}. See {row.docs}."
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
