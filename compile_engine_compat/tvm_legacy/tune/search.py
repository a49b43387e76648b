"""One kernel tuned by MetaSchedule's ``tune_tir``, and the shim's own schedule timed beside it.

The legacy tuners map onto MetaSchedule's search strategies and cost models:

=================  ============================================================================
legacy tuner       MetaSchedule
=================  ============================================================================
``XGBTuner``       ``EvolutionarySearch`` guided by the ``xgb`` cost model (the default)
``GATuner``        ``EvolutionarySearch`` with the ``random`` cost model (a genetic search)
``RandomTuner``    ``ReplayTrace`` (random samples of the design space), ``random`` model
``GridSearchTuner`` ``ReplayTrace`` with a fixed seed (MetaSchedule has no grid order)
auto_scheduler     ``EvolutionarySearch`` with ``xgb`` (Ansor's own default)
=================  ============================================================================
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import tirx

from compile_engine_compat.boundary import cpu_tensor_intrinsics, guarded_save_json
from compile_engine_compat.pipeline.schedule import schedule_prim_func

from .extra import require_tune_extra
from .kernels import KernelTask
from .measure import (
    MeasureConfig,
    in_process_builder,
    in_process_runner,
    paired_seconds,
    seconds_of,
)
from .progress import Progress

__all__ = [
    "KEEP_MARGIN",
    "STRATEGIES",
    "KernelOutcome",
    "shim_seconds",
    "time_weights",
    "trial_shares",
    "tune_kernel",
    "tuning_target",
]

#: Legacy tuner name -> (MetaSchedule search strategy, cost model, fixed seed).
STRATEGIES: dict[str, tuple[str, str, int | None]] = {
    "XGBTuner": ("evolutionary", "xgb", None),
    "GATuner": ("evolutionary", "random", None),
    "RandomTuner": ("replay-trace", "random", None),
    "GridSearchTuner": ("replay-trace", "random", 0),
    "DropoutTuner": ("evolutionary", "xgb", None),
    "auto_scheduler": ("evolutionary", "xgb", None),
    "meta_schedule": ("evolutionary", "xgb", None),
}


#: How much faster than the shim's schedule a tuned one must time to be kept: within timing
#: noise the shim's own schedule stays (tuning never makes a kernel slower).
KEEP_MARGIN = 0.03


@dataclass(frozen=True)
class KernelOutcome:
    """What tuning one kernel found: the record the record file keeps.

    Attributes
    ----------
    tuned : tvm.tirx.PrimFunc or None
        The best schedule MetaSchedule measured (None when no candidate built and ran).
    tuned_seconds, shim_seconds : float or None
        The mean seconds of one call of each (None: not measured).
    """

    task: KernelTask
    tuner: str
    trials: int
    tuned: tirx.PrimFunc | None
    tuned_seconds: float | None
    shim_seconds: float | None

    @property
    def use(self) -> str:
        """``"tuned"`` when the tuned schedule timed :data:`KEEP_MARGIN` faster than the shim's
        rules, else ``"shim"``."""
        if self.tuned is None or self.tuned_seconds is None:
            return "shim"
        if self.shim_seconds is None or self.tuned_seconds < self.shim_seconds * (1 - KEEP_MARGIN):
            return "tuned"
        return "shim"

    @property
    def best_seconds(self) -> float | None:
        """The seconds of the schedule :attr:`use` names (None: neither was measured)."""
        return self.tuned_seconds if self.use == "tuned" else self.shim_seconds

    def record(self) -> dict[str, Any]:
        """The record line (:mod:`.records`) of this outcome."""
        return {
            "workload": self.task.workload_key,
            "task": self.task.name,
            "target": str(self.task.target),
            "tuner": self.tuner,
            "trials": self.trials,
            "flop": self.task.flop,
            "shim_seconds": self.shim_seconds,
            "tuned_seconds": self.tuned_seconds,
            "use": self.use,
            "kernel": guarded_save_json(self.task.func),
            "schedule": None if self.tuned is None else guarded_save_json(self.tuned),
            "timestamp": time.time(),
        }


def _strategy(kind: str, trials: int) -> Any:
    from tvm.s_tir.meta_schedule.search_strategy import EvolutionarySearch

    if kind != "evolutionary":
        return kind
    # Small budgets: a population sized to them (the default 512 costs minutes per batch).
    population = max(16, 4 * trials)
    return EvolutionarySearch(population_size=population, init_min_unmeasured=min(50, population))


def _progress_callback(task: KernelTask, progress: Progress | None) -> Any:
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

    flop = task.flop

    @derived_object
    class ProgressCallback(PyMeasureCallback):
        def apply(
            self, scheduler: Any, task_id: int, candidates: Any, built: Any, ran: Any
        ) -> None:
            if progress is None:
                return
            speeds = []
            for result in ran:
                secs = [float(s) for s in result.run_secs] if result.run_secs else []
                mean = sum(secs) / len(secs) if secs else 0.0
                speeds.append(flop / mean / 1e9 if mean > 0 else 0.0)
            progress.update(len(ran), speeds)

    return ProgressCallback()


@contextlib.contextmanager
def _quiet_meta_schedule() -> Iterator[None]:
    """MetaSchedule's INFO lines (a table per batch) kept off the console while tuning."""
    loggers = [logging.getLogger(name) for name in ("tvm.s_tir.meta_schedule", "tvm.meta_schedule")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def tune_kernel(
    task: KernelTask,
    trials: int,
    tuner: str,
    config: MeasureConfig,
    progress: Progress | None = None,
    runner: Any = None,
) -> KernelOutcome:
    """Tune one kernel with ``tune_tir`` (``trials`` candidates) and time the shim's schedule.

    Parameters
    ----------
    task : KernelTask
    trials : int
        MetaSchedule's ``max_trials_global`` for this kernel.
    tuner : str
        A key of :data:`STRATEGIES`.
    config : MeasureConfig
        How candidates and the shim's schedule are timed.
    progress : Progress, optional
        Updated after each batch of candidates.
    runner : tvm.s_tir.meta_schedule.Runner, optional
        Default: :func:`.measure.in_process_runner` (an RPC runner measures remotely).

    Raises
    ------
    ImportError
        Without the ``[tune]`` extra.
    ValueError
        For ``trials`` below 1, an unknown tuner or a kernel with scalar parameters.
    """
    require_tune_extra(f"{tuner}.tune")
    if trials < 1:
        raise ValueError(f"a kernel is tuned with at least 1 trial, got {trials}")
    if tuner not in STRATEGIES:
        raise ValueError(f"unknown tuner {tuner!r}: one of {sorted(STRATEGIES)}")
    if not task.measurable:
        raise ValueError(
            f"kernel {task.name} takes scalar parameters (dimensions of a dynamic shape): "
            "MetaSchedule cannot time it, so it keeps the shim's schedule untuned"
        )
    cpu_tensor_intrinsics()
    from tvm.s_tir import meta_schedule as ms

    kind, cost_model, seed = STRATEGIES[tuner]
    func = task.func.with_attr("global_symbol", "main")
    mod = tvm.IRModule({"main": func})
    target = tuning_target(task.target)
    with tempfile.TemporaryDirectory(prefix="compile-engine-compat-tune-") as work_dir, \
            _quiet_meta_schedule():  # fmt: skip
        database = ms.tune_tir(
            mod,
            target,
            work_dir,
            max_trials_global=trials,
            num_trials_per_iter=min(trials, 16),
            builder=in_process_builder(export=runner is not None),
            runner=runner if runner is not None else in_process_runner(config),
            database="memory",
            cost_model=cost_model,
            measure_callbacks=[
                ms.measure_callback.AddToDatabase(),
                ms.measure_callback.UpdateCostModel(),
                _progress_callback(task, progress),
            ],
            task_scheduler="round-robin",
            strategy=_strategy(kind, trials),
            seed=seed,
        )
    tuned, tuned_seconds = _best(database, mod, target)
    shim = schedule_prim_func(func, "main", task.target).schedule.mod["main"]
    shim_seconds: float | None
    if runner is None:
        # The search's timing of the best candidate was one of many under a varying load:
        # both schedules timed again, side by side, for the choice.
        tuned_seconds, shim_seconds = paired_seconds([tuned, shim], task.target, config)
    else:
        try:
            shim_seconds = seconds_of(shim, task.target, config)
        except Exception:
            shim_seconds = None
    return KernelOutcome(task, tuner, trials, tuned, tuned_seconds, shim_seconds)


def shim_seconds(task: KernelTask, config: MeasureConfig) -> float | None:
    """The seconds of one call of ``task``'s kernel under the shim's own schedule (None where
    it cannot be timed: scalar parameters, or it does not build or run)."""
    if not task.measurable:
        return None
    func = task.func.with_attr("global_symbol", "main")
    try:
        return seconds_of(schedule_prim_func(func, "main", task.target).schedule.mod["main"],
                          task.target, config)  # fmt: skip
    except Exception:  # TVM's error: the kernel is then not worth trials
        return None


def time_weights(tasks: Sequence[KernelTask], config: MeasureConfig) -> list[float]:
    """Each kernel's share of the model's time under the shim's schedules: its calls times the
    seconds of one call (:func:`shim_seconds`; 0 where it cannot be timed). Trials shared by
    these go where the time is, as Ansor's task scheduler spent its rounds on the tasks that
    weighed most in the latency, not by call count alone."""
    seconds = [shim_seconds(task, config) for task in tasks]
    return [task.weight * (s or 0.0) for task, s in zip(tasks, seconds)]


def trial_shares(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` trials split by weight, each kernel at least one."""
    whole = sum(max(float(w), 0.0) for w in weights) or float(len(weights))
    return [max(1, round(total * max(float(w), 0.0) / whole)) for w in weights]


def tuning_target(target: tvm.target.Target) -> tvm.target.Target:
    """``target`` with the ``num-cores`` MetaSchedule needs (this machine's physical cores)."""
    if "num-cores" in target.attrs:
        return target
    import psutil

    cores = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    return tvm.target.Target({**dict(target.export()), "num-cores": int(cores)})


def _best(database: Any, mod: tvm.IRModule, target: Any) -> tuple[Any, float | None]:
    """The best measured schedule in ``database`` and its mean seconds, or (None, None)."""
    if not database.has_workload(mod):
        return None, None
    best = database.get_top_k(database.commit_workload(mod), 1)
    if not best or not best[0].run_secs:
        return None, None
    secs = [float(s) for s in best[0].run_secs]
    from tvm.s_tir.meta_schedule.tir_integration import compile_tir

    scheduled = compile_tir(database, mod, target).mod["main"]
    return scheduled.without_attr("global_symbol"), sum(secs) / len(secs)
