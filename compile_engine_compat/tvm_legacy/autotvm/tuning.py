"""AutoTVM's tuning program, served by the shim's tuning core (:mod:`..tune`) on MetaSchedule.

The tutorial's steps each keep their call::

    tasks = autotvm.task.extract_from_program(mod["main"], target=target, params=params)
    for i, task in enumerate(tasks):
        tuner = XGBTuner(task, loss_type="rank")
        tuner.tune(n_trial=min(n_trial, len(task.config_space)),
                   measure_option=autotvm.measure_option(
                       builder=autotvm.LocalBuilder(),
                       runner=autotvm.LocalRunner(number=10, repeat=1, min_repeat_ms=0)),
                   callbacks=[autotvm.callback.progress_bar(n_trial, prefix=f"[Task {i + 1}] "),
                              autotvm.callback.log_to_file(log_file)])
    with autotvm.apply_history_best(log_file):
        lib = relay.build(mod, target=target, params=params)

A task is one kernel the shim builds for the module (not an AutoTVM template: knobs such as
``cfg.define_split`` have no meaning on MetaSchedule); a tuner tunes it with ``tune_tir`` (the
strategy per tuner: :mod:`..tune.search`) and also times the shim's own schedule; the record file
is the shim's (:mod:`..tune.records`), and ``apply_history_best`` gives each kernel the faster of
the two.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ..tune.anchors import AnchorWorkload, anchor_workloads
from ..tune.kernels import KernelTask, ProgramKernels
from ..tune.measure import MeasureConfig
from ..tune.progress import Progress
from ..tune.records import append_record
from ..tune.search import KernelOutcome, trial_shares, tune_kernel

__all__ = [
    "ConfigSpace",
    "LocalBuilder",
    "LocalRunner",
    "LogToFile",
    "ProgressBar",
    "RPCRunner",
    "TunableTask",
    "Tuner",
    "extract_from_multiple_program",
    "extract_from_program",
    "measure_option",
]


class ConfigSpace:
    """``task.config_space``: the tiling choices of a task's loops, as a length.

    ``len(space)`` is the product, over the loop extents of the computation, of their divisor
    counts (the perfect tilings MetaSchedule samples), capped at 10**9; tutorials cap
    ``n_trial`` by it.
    """

    def __init__(self, extents: Sequence[int]) -> None:
        self.extents = tuple(extents)
        size = 1
        for extent in self.extents:
            size = min(size * _divisor_count(extent), 10**9)
        self._size = size

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"ConfigSpace(len={self._size}, loop extents={list(self.extents)})"


def _divisor_count(n: int) -> int:
    return sum(2 if i * i != n else 1 for i in range(1, math.isqrt(n) + 1) if n % i == 0) if n > 0 \
        else 1  # fmt: skip


class TunableTask:
    """An AutoTVM task: one template workload of the module, as TVM 0.19 extracted it.

    Tuning it tunes the kernels of the shim's build that compute its op (:attr:`kernels`).

    Attributes
    ----------
    name : str
        TVM 0.19's template name (``conv2d_NCHWc.x86``, ``dense_pack.x86``).
    args : tuple
        The template's arguments: ``("TENSOR", shape, dtype)`` per tensor, then attributes.
    target : tvm.target.Target
    workload : tuple
        ``(name, *args)``, as TVM 0.19's ``task.workload``.
    config_space : ConfigSpace
    flop : float
        Floating-point operations of one call.
    calls : int
        How many calls of the module compute this workload.
    """

    def __init__(self, anchor: AnchorWorkload, program: ProgramKernels) -> None:
        self.anchor = anchor
        self.program = program
        self.name = anchor.name
        self.args = anchor.args
        self.target = program.target
        self.target_host = None
        self.workload = (anchor.name, *anchor.args)
        self.config_space = ConfigSpace(anchor.extents)
        self.flop = anchor.flop
        self.calls = anchor.calls

    @property
    def kernels(self) -> list[KernelTask]:
        """The kernels of the shim's build computing this task's op (built on first use).

        Raises
        ------
        ValueError
            For a target other than ``llvm``: the shim tunes CPU kernels only.
        """
        return [k for k in self.program.kernels() if self.anchor.matches(_shapes(k))]

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"


def _shapes(kernel: KernelTask) -> list[tuple[int, ...]]:
    return [shape for _, shape, _ in kernel.args]


def extract_from_program(
    mod: Any, params: Mapping[str, Any] | None, target: Any, target_host: Any = None,
    ops: Sequence[Any] | None = None,
) -> list[TunableTask]:  # fmt: skip
    """``autotvm.task.extract_from_program(mod, params, target, target_host=None, ops=None)``.

    One task per distinct AutoTVM template workload of the module's tunable ops (TVM 0.19's
    templates: :mod:`..tune.anchors`); ``ops`` (Relay ops, such as ``relay.op.get("nn.conv2d")``)
    keeps the tasks of those ops.
    """
    return extract_from_multiple_program([mod], [params], target, target_host, ops)


def extract_from_multiple_program(
    mods: Sequence[Any], params: Sequence[Any], target: Any, target_host: Any = None,
    ops: Sequence[Any] | None = None,
) -> list[TunableTask]:  # fmt: skip
    """``autotvm.task.extract_from_multiple_program``: the tasks of each, equal workloads once."""
    wanted = None if ops is None else {_op_name(op) for op in ops}
    tasks: list[TunableTask] = []
    seen: set[tuple[Any, ...]] = set()
    for mod, param in zip(mods, params):
        program = ProgramKernels(mod, param, target)
        for anchor in anchor_workloads(program.module, program.target):
            if (wanted is not None and anchor.op not in wanted) or \
                    (anchor.name, *anchor.args) in seen:  # fmt: skip
                continue
            seen.add((anchor.name, *anchor.args))
            tasks.append(TunableTask(anchor, program))
    return tasks


def _op_name(op: Any) -> str:
    return str(getattr(op, "name", op))


class LocalBuilder:
    """``autotvm.LocalBuilder(timeout=10, n_parallel=None, build_func="default")``.

    Candidates are built in this process (MetaSchedule's ``default_build``); ``timeout`` is kept
    as the build limit of remote runs.
    """

    def __init__(self, timeout: float = 10, n_parallel: int | None = None,
                 build_func: Any = "default", **kwargs: Any) -> None:  # fmt: skip
        self.timeout = timeout
        self.n_parallel = n_parallel


class LocalRunner:
    """``autotvm.LocalRunner(timeout=10, number=4, repeat=3, min_repeat_ms=0, ...)``.

    Times each candidate in this process with ``time_evaluator(number, repeat, min_repeat_ms)``.
    """

    def __init__(self, timeout: float = 10, number: int = 4, repeat: int = 3,
                 min_repeat_ms: int = 0, cooldown_interval: float = 0.1,
                 enable_cpu_cache_flush: bool = False, **kwargs: Any) -> None:  # fmt: skip
        self.config = MeasureConfig.of_runner(number, repeat, min_repeat_ms, timeout)

    def meta_schedule_runner(self) -> Any:
        """The MetaSchedule runner candidates are timed by (None: in this process)."""
        return None


class RPCRunner(LocalRunner):
    """``autotvm.RPCRunner(key, host, port, priority=1, timeout=10, number=4, repeat=3, ...)``.

    Candidates are timed on a server the RPC tracker at ``host:port`` hands out for ``key``
    (``python -m tvm.exec.rpc_tracker``, ``python -m tvm.exec.rpc_server --tracker``), by
    MetaSchedule's ``RPCRunner``.
    """

    def __init__(self, key: str, host: str, port: int, priority: int = 1, timeout: float = 10,
                 n_parallel: int | None = None, number: int = 4, repeat: int = 3,
                 min_repeat_ms: int = 0, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(timeout, number, repeat, min_repeat_ms)
        self.key, self.host, self.port, self.priority = key, host, int(port), priority
        self.n_parallel = n_parallel

    def meta_schedule_runner(self) -> Any:
        """MetaSchedule's ``RPCRunner`` on this tracker and key."""
        from tvm.s_tir.meta_schedule.runner import RPCConfig
        from tvm.s_tir.meta_schedule.runner import RPCRunner as MetaScheduleRPCRunner

        config = RPCConfig(tracker_host=self.host, tracker_port=self.port,
                           tracker_key=self.key, session_priority=self.priority,
                           session_timeout_sec=int(max(self.config.timeout, 1)))  # fmt: skip
        return MetaScheduleRPCRunner(config, self.config.evaluator(), max_workers=self.n_parallel)


def measure_option(builder: Any = None, runner: Any = None, **kwargs: Any) -> dict[str, Any]:
    """``autotvm.measure_option(builder, runner)``: builder and runner, as a dict (as AutoTVM)."""
    builder = LocalBuilder() if builder is None or builder == "local" else builder
    runner = LocalRunner() if runner is None or runner == "local" else runner
    if not isinstance(runner, LocalRunner):
        raise TypeError(
            f"measure_option(runner=...) takes autotvm.LocalRunner or RPCRunner, got {runner!r}"
        )
    return {"builder": builder, "runner": runner}


class LogToFile:
    """``autotvm.callback.log_to_file(path)``: each tuned kernel's record appended to ``path``."""

    def __init__(self, file_out: str | os.PathLike[str], protocol: str = "json") -> None:
        if not isinstance(file_out, (str, os.PathLike)):
            raise TypeError(
                "log_to_file takes a file path; the shim writes its records to a file, not to a "
                f"stream ({type(file_out).__name__})"
            )
        self.path = os.fspath(file_out)

    def __call__(self, outcome: KernelOutcome) -> None:
        append_record(self.path, outcome.record())


class ProgressBar:
    """``autotvm.callback.progress_bar(total, prefix="", si_prefix="G")``."""

    def __init__(self, total: int, prefix: str = "", si_prefix: str = "G") -> None:
        self.total = total
        self.prefix = prefix


class Tuner:
    """An AutoTVM tuner over one task: ``tune(n_trial, measure_option, early_stopping, callbacks)``.

    Subclasses name MetaSchedule's search (:data:`..tune.search.STRATEGIES`).
    """

    strategy = "XGBTuner"

    def __init__(self, task: Any, *args: Any, **kwargs: Any) -> None:
        if not isinstance(task, TunableTask):
            raise TypeError(
                f"{type(self).__name__} takes a task of autotvm.task.extract_from_program, got "
                f"{type(task).__name__}: templates made by autotvm.task.create cannot be tuned "
                "(their knobs have no meaning on MetaSchedule)"
            )
        self.task = task
        self.best_flops = 0.0
        self.best_seconds: float | None = None
        self.outcome: KernelOutcome | None = None
        self.outcomes: list[KernelOutcome] = []

    def tune(self, n_trial: int, measure_option: Mapping[str, Any] | None = None,
             early_stopping: int | None = None, callbacks: Sequence[Any] = (),
             si_prefix: str = "G") -> None:  # fmt: skip
        """Tune the task with ``n_trial`` MetaSchedule trials; then run the callbacks.

        The trials are shared among the kernels of the shim's build that compute the task's op
        (a convolution fused with different epilogues is two kernels; at least one trial each),
        and each kernel's record is logged. ``early_stopping`` caps the trials (MetaSchedule
        stops a kernel on its own when its search space is exhausted). Ctrl-C stops tuning:
        records of earlier tasks stay written.

        Raises
        ------
        ValueError
            For a task of a target other than ``llvm`` (the shim tunes CPU kernels only).
        """
        if not isinstance(n_trial, int) or n_trial < 1:
            raise ValueError(f"tune(n_trial={n_trial!r}): a positive int is needed")
        options = dict(measure_option or {"runner": LocalRunner()})
        runner = options.get("runner") or LocalRunner()
        if not isinstance(runner, LocalRunner):
            raise TypeError("tune(measure_option=...) takes autotvm.measure_option(...)")
        trials = min(n_trial, early_stopping) if early_stopping else n_trial
        kernels = self.task.kernels
        if not kernels:
            warnings.warn(
                f"{self.task.name}: no kernel of the shim's build computes this workload (its op "
                "was folded into constants or rewritten); nothing tuned, nothing logged",
                RuntimeWarning,
                stacklevel=2,
            )
            return
        shares = trial_shares(trials, [1] * len(kernels))
        bar = next((c for c in callbacks if isinstance(c, ProgressBar)), None)
        progress = None if bar is None else Progress(sum(shares), bar.prefix)
        remote = runner.meta_schedule_runner()
        self.outcomes = [
            tune_kernel(kernel, share, self.strategy, runner.config, progress, remote)
            for kernel, share in zip(kernels, shares)
        ]
        if progress is not None:
            progress.finish()
        self.outcome = self.outcomes[0]
        # The task's speed: its op's kernels, each at the faster of its two schedules.
        fastest = [o.best_seconds for o in self.outcomes]
        self.best_seconds = None if None in fastest else sum(s for s in fastest if s is not None)
        if self.best_seconds:
            self.best_flops = self.task.flop * len(kernels) / self.best_seconds
        for callback in callbacks:
            if isinstance(callback, LogToFile):
                for outcome in self.outcomes:
                    callback(outcome)
            elif not isinstance(callback, ProgressBar) and callable(callback):
                callback(self, [], [])
