"""``tvm.auto_scheduler`` (served by ``install()``): what Relay-era programs use of it.

The auto-scheduler is gone from modern TVM, and with it its tuning logs. Programs used it two
ways, and each is kept as far as it can be:

* **applying** a log: ``with auto_scheduler.ApplyHistoryBest(log):`` around ``relay.build``.
  The scope is accepted and warns once; the records are not applied, and the shim builds with
  its own schedules (``DispatchContext`` scopes likewise);
* **tuning**: ``extract_tasks``, ``SearchTask``, ``TaskScheduler``, ``TuningOptions``, the
  builders, runners and measure callbacks. The names import, so a file that tunes behind a flag
  runs; calling one raises
  :class:`~compile_engine_compat.tvm_legacy.tuning.TuningRemovedError`, naming
  ``tvm.s_tir.meta_schedule``.

``register_workload`` runs at import time as a decorator, so it is accepted and returns the
function unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.deprecations import legacy_api

from .tuning import TuningRemovedError, refused_callable, refused_class

__all__ = [
    "ApplyHistoryBest",
    "ApplyHistoryBestOrSample",
    "DispatchContext",
    "LocalBuilder",
    "LocalRPCMeasureContext",
    "LocalRunner",
    "RPCRunner",
    "RecordToFile",
    "SearchTask",
    "TaskScheduler",
    "TuningOptions",
    "TuningRemovedError",
    "auto_schedule",
    "extract_tasks",
    "is_auto_scheduler_enabled",
    "load_records",
    "register_workload",
]


class DispatchContext:
    """auto_scheduler's dispatch context: a scope that applies no records on modern TVM.

    ``DispatchContext.current`` is the innermost scope entered (None outside any).
    """

    current: DispatchContext | None = None

    def __init__(self) -> None:
        self._previous: DispatchContext | None = None

    def query(
        self, target: Any, workload_key: Any, has_complex_op: Any, dag: Any, func_name: Any
    ) -> None:
        """Always None: no tuned state is ever found."""
        return None

    def __enter__(self) -> DispatchContext:
        self._previous = DispatchContext.current
        DispatchContext.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        DispatchContext.current = self._previous


@legacy_api("tvm.auto_scheduler")
class ApplyHistoryBest(DispatchContext):
    """``auto_scheduler.ApplyHistoryBest(records, n_lines=None, include_compatible=False)``.

    Accepted with one warning (at construction): the records are kept on the object but never
    applied; builds inside the scope use the shim's schedules.
    """

    def __init__(self, records: Any, n_lines: int | None = None, include_compatible: bool = False):
        super().__init__()
        self.records = records
        self.n_lines = n_lines
        self.include_compatible = include_compatible


class ApplyHistoryBestOrSample(ApplyHistoryBest):
    """``auto_scheduler.ApplyHistoryBestOrSample(records, ...)``: as :class:`ApplyHistoryBest`."""

    def __init__(
        self,
        records: Any,
        sample_simple_workloads: bool = False,
        cost_model: Any = None,
        num_measure: int = -1,
    ) -> None:
        super().__init__(records)


def register_workload(
    func_name: Any, f: Callable[..., Any] | None = None, override: bool = False
) -> Any:
    """``@auto_scheduler.register_workload``: the function comes back unchanged (never tuned)."""
    if callable(func_name):
        return func_name
    if f is not None:
        return f
    return lambda func: func


def is_auto_scheduler_enabled() -> bool:
    """False: the ``relay.backend.use_auto_scheduler`` key has no effect on modern TVM."""
    return False


# -- the tuning entry points: importable, refused at the call --------------------------------
extract_tasks, auto_schedule, load_records = (
    refused_callable(f"auto_scheduler.{name}")
    for name in ("extract_tasks", "auto_schedule", "load_records")
)
(
    SearchTask,
    TaskScheduler,
    TuningOptions,
    LocalBuilder,
    LocalRunner,
    RPCRunner,
    LocalRPCMeasureContext,
    RecordToFile,
) = (
    refused_class(f"auto_scheduler.{name}")
    for name in (
        "SearchTask",
        "TaskScheduler",
        "TuningOptions",
        "LocalBuilder",
        "LocalRunner",
        "RPCRunner",
        "LocalRPCMeasureContext",
        "RecordToFile",
    )
)
