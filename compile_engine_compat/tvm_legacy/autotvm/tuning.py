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
from collections.abc import Mapping, Sequence
from typing import Any

from ..tune.kernels import KernelTask, block_reduces, extract_kernels
from ..tune.measure import MeasureConfig
from ..tune.progress import Progress
from ..tune.records import append_record
from ..tune.search import KernelOutcome, tune_kernel

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

#: Relay op name -> the word the shim's kernel names use for it (``fused_conv2d1_add1``).
_OP_WORDS = {
    "nn.conv1d": "conv1d",
    "nn.conv2d": "conv2d",
    "nn.conv3d": "conv3d",
    "nn.conv2d_transpose": "conv2d_transpose",
    "nn.conv3d_transpose": "conv3d_transpose",
    "nn.dense": "matmul",
    "nn.batch_matmul": "matmul",
    "nn.matmul": "matmul",
}


class ConfigSpace:
    """``task.config_space``: the tiling choices of a kernel's loops, as a length.

    ``len(space)`` is the product, over the kernel's loop extents, of their divisor counts (the
    perfect tilings MetaSchedule samples), capped at 10**9; tutorials cap ``n_trial`` by it.
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


def _loop_extents(kernel: KernelTask) -> list[int]:
    """The loop extents of the kernel's blocks with a reduction (of all blocks if none has)."""
    blocks = kernel.blocks()
    reducing = [extents for block, extents in blocks if block_reduces(block)]
    return [e for extents in (reducing or [x for _, x in blocks]) for e in extents]


class TunableTask:
    """An AutoTVM task: one kernel the shim builds for the module.

    Attributes
    ----------
    name : str
        The kernel's name (``fused_conv2d1_add1``).
    args : tuple
        ``("TENSOR", shape, dtype)`` per parameter, as AutoTVM's ``task.args``.
    target : tvm.target.Target
    workload : tuple
        ``(name, workload key)``: the key is the kernel's structural hash.
    config_space : ConfigSpace
    flop : float
        Floating-point operations of one call.
    """

    def __init__(self, kernel: KernelTask) -> None:
        self.kernel = kernel
        self.name = kernel.name
        self.args = kernel.args
        self.target = kernel.target
        self.target_host = None
        self.workload = (kernel.name, kernel.workload_key)
        self.config_space = ConfigSpace(_loop_extents(kernel))
        self.flop = kernel.flop

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"


def extract_from_program(
    mod: Any, params: Mapping[str, Any] | None, target: Any, target_host: Any = None,
    ops: Sequence[Any] | None = None,
) -> list[TunableTask]:  # fmt: skip
    """``autotvm.task.extract_from_program(mod, params, target, target_host=None, ops=None)``.

    One task per distinct kernel with a reduction (convolutions, dense, matmul...) that
    ``relay.build(mod, target, params=params)`` makes; ``ops`` (Relay ops, such as
    ``relay.op.get("nn.conv2d")``) keeps the kernels that compute one of them.
    """
    words = None if ops is None else {_OP_WORDS.get(_op_name(op), _op_name(op)) for op in ops}
    tasks = []
    for kernel in extract_kernels(mod, params, target):
        if not kernel.has_reduction:
            continue
        if words is not None and not words & set(_kernel_words(kernel.name)):
            continue
        tasks.append(TunableTask(kernel))
    return tasks


def extract_from_multiple_program(
    mods: Sequence[Any], params: Sequence[Any], target: Any, target_host: Any = None,
    ops: Sequence[Any] | None = None,
) -> list[TunableTask]:  # fmt: skip
    """``autotvm.task.extract_from_multiple_program``: the tasks of each, equal kernels once."""
    tasks: list[TunableTask] = []
    seen: set[str] = set()
    for mod, param in zip(mods, params):
        for task in extract_from_program(mod, param, target, target_host, ops):
            if task.kernel.workload_key not in seen:
                seen.add(task.kernel.workload_key)
                tasks.append(task)
    return tasks


def _op_name(op: Any) -> str:
    return str(getattr(op, "name", op))


def _kernel_words(name: str) -> list[str]:
    parts = [part.rstrip("0123456789") for part in name.split("_")]
    words = list(parts)
    words += ["_".join(parts[i : i + 2]) for i in range(len(parts) - 1)]
    if "conv2d_transpose" in words:
        words.remove("conv2d")
    if "conv3d_transpose" in words:
        words.remove("conv3d")
    return words


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
        for name, value in (("number", number), ("repeat", repeat)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"LocalRunner({name}={value!r}): a positive int is needed")
        self.config = MeasureConfig(number, repeat, int(min_repeat_ms), float(max(timeout, 1)))

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

    def tune(self, n_trial: int, measure_option: Mapping[str, Any] | None = None,
             early_stopping: int | None = None, callbacks: Sequence[Any] = (),
             si_prefix: str = "G") -> None:  # fmt: skip
        """Tune the task with ``n_trial`` MetaSchedule trials; then run the callbacks.

        ``early_stopping`` caps the trials (MetaSchedule stops a task on its own when its
        search space is exhausted). Ctrl-C stops tuning: records of earlier tasks stay written.
        """
        if not isinstance(n_trial, int) or n_trial < 1:
            raise ValueError(f"tune(n_trial={n_trial!r}): a positive int is needed")
        options = dict(measure_option or {"runner": LocalRunner()})
        runner = options.get("runner") or LocalRunner()
        if not isinstance(runner, LocalRunner):
            raise TypeError("tune(measure_option=...) takes autotvm.measure_option(...)")
        trials = min(n_trial, early_stopping) if early_stopping else n_trial
        bar = next((c for c in callbacks if isinstance(c, ProgressBar)), None)
        progress = None if bar is None else Progress(trials, bar.prefix)
        outcome = tune_kernel(self.task.kernel, trials, self.strategy, runner.config, progress,
                              runner.meta_schedule_runner())  # fmt: skip
        self.outcome = outcome
        measured = [s for s in (outcome.tuned_seconds, outcome.shim_seconds) if s is not None]
        self.best_seconds = min(measured) if measured else None
        if self.best_seconds:
            self.best_flops = self.task.flop / self.best_seconds
        for callback in callbacks:
            if isinstance(callback, LogToFile):
                callback(outcome)
            elif not isinstance(callback, ProgressBar) and callable(callback):
                callback(self, [], [])
