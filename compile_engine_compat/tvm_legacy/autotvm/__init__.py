"""``tvm.autotvm`` (served by ``install()``): what Relay-era strategy code imports from AutoTVM.

AutoTVM is gone from modern TVM, and with it tuning records and TE schedules. This module keeps
Relay-era files importable and their computes usable:

* ``register_topi_compute(name)`` decorates ``compute(cfg, *args)``; the decorated function is
  called without ``cfg`` (a fallback config is passed), as under AutoTVM;
* ``register_topi_schedule(name)`` keeps the schedule function, which the engine never runs;
* tuning (:mod:`.tuning`): ``task.extract_from_program`` gives one task per kernel the shim
  builds, the tuners of :mod:`.tuner` tune it with MetaSchedule, ``measure_option``,
  ``LocalBuilder``/``LocalRunner``/``RPCRunner`` and the callbacks ``log_to_file`` and
  ``progress_bar`` keep their meaning, and ``apply_history_best(log)`` around ``relay.build``
  gives each kernel the faster of its tuned schedule and the shim's (the shim's record file;
  TVM 0.19's AutoTVM logs are refused: re-tune). Strategy selection
  (``select_implementation(use_autotvm=True)``) inside a records scope still refuses: records
  choose schedules, not implementations.
"""

from __future__ import annotations

import functools
import importlib
import os
import types
from collections.abc import Callable
from typing import Any, NamedTuple

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.facade.legacy_strategy import add_autotvm_check
from compile_engine_compat.pipeline.tuned import applied

from ..tune.applied import AppliedRecords
from ..tune.records import TuningRecordsError, read_records
from ..tuning import TuningRemovedError, refused_callable
from .tuning import (
    LocalBuilder,
    LocalRunner,
    LogToFile,
    ProgressBar,
    RPCRunner,
    TunableTask,
    extract_from_multiple_program,
    extract_from_program,
)
from .tuning import measure_option as _measure_option

__all__ = [
    "GLOBAL_SCOPE",
    "AutoTVMRecordsError",
    "ConfigEntity",
    "DispatchContext",
    "FallbackConfigEntity",
    "FallbackContext",
    "LocalBuilder",
    "LocalRunner",
    "MeasureInput",
    "MeasureResult",
    "RPCRunner",
    "TuningRecordsError",
    "TuningRemovedError",
    "apply_history_best",
    "callback",
    "measure_option",
    "record",
    "register_topi_compute",
    "register_topi_schedule",
    "task",
    "tuner",
]


class ConfigEntity:
    """A tuning configuration: ``ConfigEntity(index, code_hash, entity_map, constraints)``."""

    def __init__(
        self, index: int = 0, code_hash: Any = None, entity_map: Any = None, constraints: Any = None
    ) -> None:
        self.index = index
        self.code_hash = code_hash
        self._entity_map = dict(entity_map or {})
        self._constraints = list(constraints or [])
        self.cost: float | None = None
        self.is_fallback = False

    def __getitem__(self, name: str) -> Any:
        return self._entity_map[name]


class FallbackConfigEntity(ConfigEntity):
    """The configuration used when no record applies (always, on modern TVM)."""

    def __init__(self) -> None:
        super().__init__()
        self.is_fallback = True

    def define_knob(self, *args: Any, **kwargs: Any) -> None:
        """Knobs have no effect: nothing is tuned."""

    def define_split(self, *args: Any, **kwargs: Any) -> None:
        """Splits have no effect: nothing is tuned."""


class MeasureInput(NamedTuple):
    """``autotvm.MeasureInput(target, task, config)``."""

    target: Any
    task: Any
    config: Any


class MeasureResult(NamedTuple):
    """``autotvm.MeasureResult(costs, error_no, all_cost, timestamp)``."""

    costs: Any
    error_no: int
    all_cost: float
    timestamp: float


class Task:
    """``autotvm.task.create(name, args, target)``: a task description (never tuned)."""

    def __init__(self, name: str, args: Any, target: Any) -> None:
        self.name = name
        self.args = args
        self.target = target


class _Scope:
    def __init__(self) -> None:
        self.silent = False
        self.in_tuning = False


GLOBAL_SCOPE = _Scope()


class AutoTVMRecordsError(RuntimeError):
    """Tuning records are in force, and modern TVM cannot apply them."""


class DispatchContext:
    """AutoTVM's dispatch context; it never applies records on modern TVM."""

    current: Any = None
    warning_messages: set[str] = set()

    def query(self, target: Any, workload: Any) -> FallbackConfigEntity:
        """Always the fallback configuration."""
        return FallbackConfigEntity()


class _ApplyHistoryBest(DispatchContext):
    def __init__(self, records: Any) -> None:
        self.records = AppliedRecords(_record_source(records))
        self._previous: Any = None
        self._scope: Any = None

    def __enter__(self) -> _ApplyHistoryBest:
        # Selection checks for records only once a records context exists (first use).
        add_autotvm_check(_refuse_records)
        self._previous = DispatchContext.current
        DispatchContext.current = self
        self._scope = applied(self.records.lookup)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        DispatchContext.current = self._previous
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(*exc)


def _record_source(records: Any) -> Any:
    """A file path, or records: TVM 0.19's in-memory (MeasureInput, MeasureResult) pairs refused."""
    if isinstance(records, (str, os.PathLike)) or records is None:
        return [] if records is None else records
    listed = list(records)
    if any(isinstance(item, tuple) and item and isinstance(item[0], MeasureInput)
           for item in listed):  # fmt: skip
        raise TuningRecordsError(
            "apply_history_best got AutoTVM (MeasureInput, MeasureResult) records: they name "
            "AutoTVM template configurations, which TVM 0.27's MetaSchedule cannot apply; "
            "re-tune (tuner.tune(..., callbacks=[autotvm.callback.log_to_file(path)])) and "
            "apply the file it writes"
        )
    return listed


@legacy_api("tvm.autotvm.apply_history_best")
def apply_history_best(records: Any) -> _ApplyHistoryBest:
    """``autotvm.apply_history_best(records)``: builds inside use the tuned schedules.

    ``records`` is a record file written by ``autotvm.callback.log_to_file`` on the shim (or its
    records). Inside the scope ``relay.build`` gives each kernel with a record the faster of its
    tuned schedule and the shim's own; a ``select_implementation(..., use_autotvm=True)`` raises
    :class:`AutoTVMRecordsError`, since records choose schedules, not implementations.

    Raises
    ------
    TuningRecordsError
        For TVM <=0.19's AutoTVM or auto_scheduler records (they must be re-tuned).
    """
    return _ApplyHistoryBest(records)


def _refuse_records() -> None:
    context = DispatchContext.current
    if isinstance(context, _ApplyHistoryBest) and len(context.records):
        raise AutoTVMRecordsError(
            "select_implementation(use_autotvm=True) inside autotvm.apply_history_best(...): "
            "AutoTVM records cannot choose implementations on modern TVM (AutoTVM and its "
            "templates were removed; the shim's records choose kernel schedules), and selecting "
            "by plevel would silently ignore them. Select with "
            "use_autotvm=False, give the tuned implementation the highest plevel "
            "(compile_engine_compat.register_implementation), and schedule it with "
            "tvm.s_tir.Schedule."
        )


def _with_fallback_config(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(FallbackConfigEntity(), *args, **kwargs)

    return wrapper


def register_topi_compute(task_name: str, func: Callable[..., Any] | None = None) -> Any:
    """``@autotvm.register_topi_compute(name)``: call the compute with a fallback config."""
    if func is not None:
        return _with_fallback_config(func)
    return _with_fallback_config


def register_topi_schedule(task_name: str, func: Callable[..., Any] | None = None) -> Any:
    """``@autotvm.register_topi_schedule(name)``: kept, never run (TE schedules are gone)."""
    if func is not None:
        return _with_fallback_config(func)
    return _with_fallback_config


def _create(task_name: str, args: Any, target: Any, target_host: Any = None) -> Task:
    return Task(task_name, args, target)


def _get_workload(outs: Any) -> None:
    return None


class FallbackContext(DispatchContext):
    """``autotvm.FallbackContext()``: a scope in which every query gets the fallback config."""

    def __enter__(self) -> FallbackContext:
        self._previous = DispatchContext.current
        DispatchContext.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        DispatchContext.current = self._previous


task = types.SimpleNamespace(
    create=_create,
    Task=Task,
    DispatchContext=DispatchContext,
    FallbackContext=FallbackContext,
    get_workload=_get_workload,
    ApplyHistoryBest=_ApplyHistoryBest,
    TunableTask=TunableTask,
    extract_from_program=legacy_api("tvm.autotvm.tuning")(extract_from_program),
    extract_from_multiple_program=legacy_api("tvm.autotvm.tuning")(extract_from_multiple_program),
)

# -- tuning: served on MetaSchedule (see .tuning) ---------------------------------------------
measure_option = legacy_api("tvm.autotvm.tuning")(_measure_option)
callback = types.SimpleNamespace(log_to_file=LogToFile, progress_bar=ProgressBar)
record = types.SimpleNamespace(
    load_from_file=read_records, pick_best=refused_callable("autotvm.record.pick_best")
)


def __getattr__(name: str) -> Any:
    # ``autotvm.tuner`` is loaded on first use, not bound at import: install() serves it as
    # tvm.autotvm.tuner, and uninstall() removes that binding again (a bound name would go).
    if name == "tuner":
        return importlib.import_module(f"{__name__}.tuner")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
