"""``tvm.auto_scheduler`` (served by ``install()``): Relay-era tuning programs, on MetaSchedule.

The auto-scheduler is gone from modern TVM; its programs keep their calls, served by the shim's
tuning core (:mod:`compile_engine_compat.tvm_legacy.tune`), as the AutoTVM ones:

* **tuning**: ``extract_tasks(mod, params, target)`` gives ``(tasks, task_weights)``, one task
  per kernel the shim builds (kernels with a reduction, or all with
  ``include_simple_tasks=True``); ``TaskScheduler(tasks, task_weights).tune(TuningOptions(
  num_measure_trials, runner=LocalRunner(...), measure_callbacks=[RecordToFile(log)]))`` tunes
  each with MetaSchedule's evolutionary search on the xgb cost model, the trials shared by
  weight, and times the shim's own schedule beside;
* **applying** a log: ``with auto_scheduler.ApplyHistoryBest(log), tvm.transform.PassContext(
  opt_level=3, config={"relay.backend.use_auto_scheduler": True}):`` around ``relay.build``
  gives each kernel the faster of its tuned schedule and the shim's. Without the key the records
  are not applied, as in TVM 0.19. Ansor's own logs (``{"i": ..., "r": ...}`` lines) are
  refused: re-tune.

``SearchTask`` made by hand (a registered workload function) and ``auto_schedule`` are refused:
their compute is not a kernel of the shim's builds.

``register_workload`` runs at import time as a decorator, so it is accepted and returns the
function unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compile_engine_compat import new_files
from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.pipeline.tuned import applied
from compile_engine_compat.surfaces.passconfig import current_config, install_from_env

from .tune.applied import AppliedRecords
from .tune.kernels import KernelTask, extract_kernels
from .tune.measure import MeasureConfig
from .tune.progress import Progress
from .tune.records import append_record, read_records
from .tune.search import shim_seconds, trial_shares, tune_kernel
from .tuning import TuningRemovedError, refuse_tuning, refused_callable, refused_class

#: The legacy PassContext key under which ``relay.build`` applies auto_scheduler records.
USE_AUTO_SCHEDULER = "relay.backend.use_auto_scheduler"

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

    ``records``: a log written by :class:`RecordToFile` on the shim. Inside the scope, builds
    under a ``PassContext`` with ``relay.backend.use_auto_scheduler=True`` give each kernel the
    faster of its tuned schedule and the shim's.

    Raises
    ------
    TuningRecordsError
        For Ansor's or AutoTVM's own logs (TVM <=0.19): they must be re-tuned.
    """

    def __init__(self, records: Any, n_lines: int | None = None, include_compatible: bool = False):
        super().__init__()
        source = [] if records is None else records
        if not isinstance(source, (str, os.PathLike)):
            source = list(source)[: n_lines if n_lines is not None else None]
        self.records = AppliedRecords(source)
        self.n_lines = n_lines
        self.include_compatible = include_compatible
        self._scope: Any = None
        # First use: PassContext takes relay.backend.use_auto_scheduler from here on.
        install_from_env()

    def _lookup(self, func: Any, target: Any) -> Any:
        if not current_config().get(USE_AUTO_SCHEDULER, False):
            return None  # as TVM 0.19: records apply only with use_auto_scheduler
        return self.records.lookup(func, target)

    def __enter__(self) -> ApplyHistoryBest:
        super().__enter__()
        self._scope = applied(self._lookup)
        self._scope.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(*exc)
        super().__exit__(*exc)


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
    """Whether the current PassContext sets ``relay.backend.use_auto_scheduler``."""
    return bool(current_config().get(USE_AUTO_SCHEDULER, False))


class SearchTask:
    """An auto_scheduler task: one kernel the shim builds (made by :func:`extract_tasks`).

    Attributes
    ----------
    workload_key : str
        As Ansor's, a JSON list: the kernel's structural hash, then its buffers' shapes.
    desc : str
        The kernel's name.
    target : tvm.target.Target
    flop_ct : float
        Floating-point operations of one call.
    """

    def __init__(self, func: Any = None, args: Any = None, compute_dag: Any = None,
                 workload_key: Any = None, target: Any = None, **kwargs: Any) -> None:  # fmt: skip
        kernel = kwargs.pop("_kernel", None)
        if not isinstance(kernel, KernelTask):
            refuse_tuning("auto_scheduler.SearchTask")
        self.kernel = kernel
        shapes = [list(shape) for _, shape, _ in kernel.args]
        self.workload_key = json.dumps([_dag_hash(kernel), *shapes])
        self.desc = kernel.name
        self.target = kernel.target
        self.target_host = None
        self.flop_ct = kernel.flop
        #: The kernel (a PrimFunc: ``str`` prints its TVMScript), in place of Ansor's ComputeDAG.
        self.compute_dag = kernel.func

    def __repr__(self) -> str:
        return f"SearchTask(desc={self.desc!r}, workload_key={self.workload_key!r})"


@legacy_api("tvm.autotvm.tuning")
def extract_tasks(
    mod: Any, params: Mapping[str, Any] | None, target: Any, target_host: Any = None,
    hardware_params: Any = None, include_simple_tasks: bool = False,
    dump_workload_to_dag_log: Any = None, opt_level: int = 3, other_targets: Any = None,
) -> tuple[list[SearchTask], list[int]]:  # fmt: skip
    """``auto_scheduler.extract_tasks(mod, params, target)``: ``(tasks, task_weights)``.

    One task per distinct kernel ``relay.build`` makes (with a reduction unless
    ``include_simple_tasks``); its weight is how many times ``main`` calls it. Kernels of
    ``te.extern`` loop nests (non-maximum suppression, ``multibox_transform_loc``) are no
    tasks, as TVM 0.19's ``ComputeDAG`` refused extern and hybrid-script ops.
    ``dump_workload_to_dag_log``: a file to write ``{workload_key: str(compute_dag)}`` to, as JSON
    (written beside and renamed over it; an existing empty file, such as a
    ``tempfile.NamedTemporaryFile`` the caller holds open, is written in place, as TVM 0.19 wrote
    it, so that the caller's handle reads it).
    """
    tasks, weights = [], []
    for kernel in extract_kernels(mod, params, target):
        if not kernel.compute_only:
            continue  # an extern loop nest (NMS...): Ansor's ComputeDAG refused those ops
        if not include_simple_tasks and not kernel.has_reduction:
            continue
        tasks.append(SearchTask(_kernel=kernel))
        weights.append(kernel.weight)
    if dump_workload_to_dag_log is not None:
        dags = {task.workload_key: str(task.compute_dag) for task in tasks}
        _dump(dump_workload_to_dag_log, json.dumps(dags))
    return tasks, weights


def _dump(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path``: beside and renamed over, or in place into an empty file (no
    content to lose; a handle the caller holds on it then reads the text)."""
    if os.path.isfile(path) and not os.path.islink(path) and os.path.getsize(path) == 0:
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(text)
        return
    with new_files.replacing(path) as staging:
        staging.write_text(text)


def _dag_hash(kernel: KernelTask) -> Any:
    """The hash in a task's workload key: the kernel's structural hash, or, where a program
    registered ``auto_scheduler.compute_dag.hash_func`` (as TVM 0.19 let it), that function of
    the printed kernel (called once per task)."""
    import tvm

    hash_func = tvm.get_global_func("auto_scheduler.compute_dag.hash_func", allow_missing=True)
    return kernel.workload_key if hash_func is None else hash_func(str(kernel.func))


class LocalBuilder:
    """``auto_scheduler.LocalBuilder(timeout=15, n_parallel=..., build_func="default")``:
    candidates are built in this process."""

    def __init__(self, timeout: float = 15, n_parallel: Any = None,
                 build_func: Any = "default") -> None:  # fmt: skip
        self.timeout = timeout


class LocalRunner:
    """``auto_scheduler.LocalRunner(timeout=10, number=3, repeat=1, min_repeat_ms=100, ...)``."""

    def __init__(self, timeout: float = 10, number: int = 3, repeat: int = 1,
                 min_repeat_ms: int = 100, cooldown_interval: float = 0.0,
                 enable_cpu_cache_flush: bool = False, **kwargs: Any) -> None:  # fmt: skip
        self.config = MeasureConfig.of_runner(number, repeat, min_repeat_ms, timeout)

    def meta_schedule_runner(self) -> Any:
        """None: candidates are timed in this process."""
        return None


class RPCRunner(LocalRunner):
    """``auto_scheduler.RPCRunner(key, host, port, priority=1, n_parallel=1, timeout=10, ...)``:
    candidates timed on the tracker's servers for ``key`` (MetaSchedule's ``RPCRunner``)."""

    def __init__(self, key: str, host: str, port: int, priority: int = 1, n_parallel: int = 1,
                 timeout: float = 10, number: int = 3, repeat: int = 1,
                 min_repeat_ms: int = 100, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(timeout, number, repeat, min_repeat_ms)
        from .autotvm.tuning import RPCRunner as AutoTVMRPCRunner

        self._rpc = AutoTVMRPCRunner(key, host, port, priority, timeout, n_parallel, number,
                                     repeat, min_repeat_ms)  # fmt: skip

    def meta_schedule_runner(self) -> Any:
        """MetaSchedule's ``RPCRunner`` on the tracker and key."""
        return self._rpc.meta_schedule_runner()


class RecordToFile:
    """``auto_scheduler.RecordToFile(filename)``: each tuned kernel's record appended to it."""

    def __init__(self, filename: str | os.PathLike[str]) -> None:
        self.filename = os.fspath(filename)


class TuningOptions:
    """``auto_scheduler.TuningOptions(num_measure_trials=0, early_stopping=None, ...)``."""

    def __init__(self, num_measure_trials: int = 0, early_stopping: int | None = None,
                 num_measures_per_round: int = 64, verbose: int = 1, builder: Any = "local",
                 runner: Any = "local", measure_callbacks: Sequence[Any] | None = None,
                 ) -> None:  # fmt: skip
        if not isinstance(num_measure_trials, int) or num_measure_trials < 0:
            raise ValueError(f"TuningOptions(num_measure_trials={num_measure_trials!r})")
        runner = LocalRunner() if runner in (None, "local") else runner
        if not isinstance(runner, LocalRunner):
            raise TypeError(f"TuningOptions(runner=...) takes LocalRunner or RPCRunner: {runner!r}")
        self.num_measure_trials = num_measure_trials
        self.early_stopping = early_stopping
        self.verbose = verbose
        self.runner = runner
        self.measure_callbacks = list(measure_callbacks or [])


class TaskScheduler:
    """``auto_scheduler.TaskScheduler(tasks, task_weights=None, ...)``: tunes every task."""

    def __init__(self, tasks: Sequence[SearchTask], task_weights: Sequence[float] | None = None,
                 objective_func: Any = None, strategy: str = "gradient",
                 load_model_file: Any = None, load_log_file: Any = None, **kwargs: Any,
                 ) -> None:  # fmt: skip
        self.tasks = list(tasks)
        if any(not isinstance(task, SearchTask) for task in self.tasks):
            raise TypeError("TaskScheduler takes the tasks of auto_scheduler.extract_tasks")
        self.task_weights = list(task_weights) if task_weights is not None else \
            [1] * len(self.tasks)  # fmt: skip
        if len(self.task_weights) != len(self.tasks):
            raise ValueError("TaskScheduler: one weight per task is needed")
        self.best_costs = [float("inf")] * len(self.tasks)

    def tune(self, tune_option: TuningOptions, search_policy: Any = "default",
             search_policy_params: Any = None, adaptive_training: bool = False,
             per_task_early_stopping: Any = None) -> None:  # fmt: skip
        """Tune each task: the trials shared by weight times the seconds of the task's kernel
        under the shim's schedule (at least one each); Ctrl-C keeps the records of the tasks
        done."""
        if not self.tasks or tune_option.num_measure_trials == 0:
            return
        # Ansor spent its rounds where the latency is: the weights times each kernel's seconds
        # under the shim's own schedule (the call counts alone where none could be timed).
        seconds = [shim_seconds(task.kernel, tune_option.runner.config) for task in self.tasks]
        weights = [w * (s or 0.0) for w, s in zip(self.task_weights, seconds)]
        shares = trial_shares(tune_option.num_measure_trials,
                              weights if any(weights) else self.task_weights)  # fmt: skip
        files = [c.filename for c in tune_option.measure_callbacks if isinstance(c, RecordToFile)]
        for index, (task, trials) in enumerate(zip(self.tasks, shares)):
            if not task.kernel.measurable:
                continue  # a shape kernel (include_simple_tasks): nothing to time, no record
            if tune_option.early_stopping:
                trials = min(trials, tune_option.early_stopping)
            prefix = f"[Task {index + 1:2d}/{len(self.tasks):2d}] "
            progress = Progress(trials, prefix) if tune_option.verbose else None
            outcome = tune_kernel(task.kernel, trials, "auto_scheduler", tune_option.runner.config,
                                  progress, tune_option.runner.meta_schedule_runner())  # fmt: skip
            if progress is not None:
                progress.finish()
            measured = [s for s in (outcome.tuned_seconds, outcome.shim_seconds) if s is not None]
            self.best_costs[index] = min(measured) if measured else float("inf")
            for path in files:
                append_record(path, outcome.record())


def load_records(filename: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """``auto_scheduler.load_records(filename)``: the shim's records (Ansor's logs refused)."""
    return list(read_records(filename))


# -- refused at the call: a hand-made compute is not a kernel of the shim's builds ----------
auto_schedule = refused_callable("auto_scheduler.auto_schedule")
LocalRPCMeasureContext = refused_class("auto_scheduler.LocalRPCMeasureContext")
