"""MetaSchedule's builder and runner in this process, and the timing of one scheduled kernel.

TVM's ``LocalBuilder``/``LocalRunner`` start worker processes, each of which imports TVM (and its
tensor intrinsics): on a loaded 2-core machine every build timed out at the default 30 s. The
builder and runner here work in this process, so a trial costs one compile and one timing. Each
candidate, and the shim's own schedule it is compared with, is compiled as the shim's module
build compiles its kernels (:func:`shim_build`: the shim's TIR pipeline, not MetaSchedule's
``default_build``), and timed with MetaSchedule's ``time_evaluator`` harness: the two timings
that "never slower" compares are of the code ``relay.build`` will run.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import tirx

from compile_engine_compat.pipeline.build import compile_kernels

__all__ = [
    "MeasureConfig",
    "in_process_builder",
    "in_process_runner",
    "paired_seconds",
    "seconds_of",
    "shim_build",
]


@dataclass(frozen=True)
class MeasureConfig:
    """How a kernel is timed: AutoTVM's ``LocalRunner(number, repeat, min_repeat_ms, timeout)``.

    Attributes
    ----------
    number, repeat, min_repeat_ms : int
        As ``time_evaluator`` takes them; the cost is the mean of the repeats.
    timeout : float
        Seconds a build or a run may take (MetaSchedule's limits).
    """

    number: int = 3
    repeat: int = 1
    min_repeat_ms: int = 0
    timeout: float = 300.0

    @classmethod
    def of_runner(cls, number: Any, repeat: Any, min_repeat_ms: Any, timeout: Any) -> MeasureConfig:
        """The settings of a legacy ``LocalRunner(...)`` call (AutoTVM's or auto_scheduler's).

        Raises
        ------
        ValueError
            When ``number`` or ``repeat`` is not a positive int.
        """
        for name, value in (("number", number), ("repeat", repeat)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"LocalRunner({name}={value!r}): a positive int is needed")
        return cls(number, repeat, int(min_repeat_ms), float(max(timeout, 1)))

    def evaluator(self) -> Any:
        """MetaSchedule's ``EvaluatorConfig`` of these settings."""
        from tvm.s_tir.meta_schedule.runner import EvaluatorConfig

        return EvaluatorConfig(
            number=self.number, repeat=self.repeat, min_repeat_ms=self.min_repeat_ms
        )


_built: dict[str, Any] = {}
_built_lock = threading.Lock()
_serial = itertools.count()


def in_process_builder(export: bool = False) -> Any:
    """A MetaSchedule ``Builder`` compiling each candidate in this process.

    Parameters
    ----------
    export : bool
        Write each built candidate to a file (MetaSchedule's ``default_export``), as a runner
        on another machine needs; otherwise it is kept in memory for :func:`in_process_runner`.
    """
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
    from tvm.s_tir.meta_schedule.builder.local_builder import default_export

    @derived_object
    class InProcessBuilder(PyBuilder):
        def build(self, build_inputs: list[Any]) -> list[Any]:
            results = []
            for build_input in build_inputs:
                try:
                    module = shim_build(build_input.mod, build_input.target)
                except Exception as error:
                    results.append(BuilderResult(None, f"build failed: {error}"))
                    continue
                if export:
                    results.append(BuilderResult(default_export(module), None))
                    continue
                token = f"compile-engine-compat-in-process:{next(_serial)}"
                with _built_lock:
                    _built[token] = module
                results.append(BuilderResult(token, None))
            return results

    return InProcessBuilder()


def in_process_runner(config: MeasureConfig) -> Any:
    """A MetaSchedule ``Runner`` timing each built candidate in this process."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.runner import PyRunner, RunnerResult
    from tvm.s_tir.meta_schedule.runner.runner import PyRunnerFuture

    @derived_object
    class Done(PyRunnerFuture):
        def __init__(self, costs: list[float] | None, error: str | None) -> None:
            super().__init__()
            self.costs = costs
            self.error = error

        def done(self) -> bool:
            return True

        def result(self) -> Any:
            return RunnerResult(self.costs, self.error)

    @derived_object
    class InProcessRunner(PyRunner):
        def run(self, runner_inputs: list[Any]) -> list[Any]:
            futures = []
            for runner_input in runner_inputs:
                with _built_lock:
                    module = _built.pop(str(runner_input.artifact_path), None)
                if module is None:
                    futures.append(Done(None, "no build for this candidate"))
                    continue
                try:
                    args = [info.as_json() for info in runner_input.args_info]
                    futures.append(Done(_time(module, args, config), None))
                except Exception as error:
                    futures.append(Done(None, f"run failed: {error}"))
            return futures

    return InProcessRunner()


def _time(module: Any, args_info: list[Any], config: MeasureConfig) -> list[float]:
    from tvm.s_tir.meta_schedule.runner.local_runner import (
        default_alloc_argument,
        default_run_evaluator,
    )

    device = tvm.cpu(0)
    arguments = default_alloc_argument(device, tuple(args_info), 1)
    return [float(c) for c in default_run_evaluator(module, device, config.evaluator(), arguments)]


def seconds_of(scheduled: tirx.PrimFunc, target: tvm.target.Target, config: MeasureConfig) -> float:
    """The mean seconds of one call of a scheduled kernel, built and timed as the candidates.

    Weight packing marked as a layout rewrite is left out of the kernel (TVM's
    ``SplitLayoutRewritePreproc``, as the module build splits it), as MetaSchedule's builder
    leaves it out of the candidates: builds compute it once, at build time.

    Raises
    ------
    Exception
        TVM's error when the kernel does not build or run.
    """
    module, args = _built_kernel(scheduled, target)
    costs = _time(module, args, config)
    return sum(costs) / len(costs)


def paired_seconds(
    schedules: Sequence[tirx.PrimFunc | None],
    target: tvm.target.Target,
    config: MeasureConfig,
    rounds: int = 3,
) -> list[float | None]:
    """The seconds of one call of each schedule, timed in alternating rounds (the fastest round
    of each): a load that comes and goes on the machine falls on all of them alike.

    Each is built and timed as :func:`seconds_of` does; None for a schedule that is None or
    does not build or run.
    """
    built: list[tuple[Any, list[Any]] | None] = []
    for scheduled in schedules:
        try:
            built.append(None if scheduled is None else _built_kernel(scheduled, target))
        except Exception:
            built.append(None)
    best: list[float | None] = [None] * len(built)
    for _ in range(rounds):
        for index, entry in enumerate(built):
            if entry is None:
                continue
            try:
                costs = _time(entry[0], entry[1], config)
            except Exception:
                built[index], best[index] = None, None
                continue
            mean = sum(costs) / len(costs)
            previous = best[index]
            best[index] = mean if previous is None else min(previous, mean)
    return best


def _built_kernel(scheduled: tirx.PrimFunc, target: tvm.target.Target) -> tuple[Any, list[Any]]:
    """A scheduled kernel's compute part built by :func:`shim_build`, and its arguments' info."""
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    func = _compute_part(scheduled).with_attr("global_symbol", "main")
    module = shim_build(tvm.IRModule({"main": func}), target)
    return module, [info.as_json() for info in ArgInfo.from_prim_func(func)]


def shim_build(mod: tvm.IRModule, target: tvm.target.Target) -> Any:
    """Compile a scheduled kernel as the shim's builds compile kernels.

    The weight-layout rewrite blocks MetaSchedule's candidates carry are dropped first (as
    MetaSchedule's ``default_build`` drops them: builds compute the packing once), then the
    kernel goes through :func:`compile_engine_compat.pipeline.build.compile_kernels`, the
    ``tvm.compile`` with the shim's TIR pipeline that ``relay.build``'s kernels go through.
    """
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    stripped = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return compile_kernels(stripped, target).jit()  # the runtime module, as default_build's


def _compute_part(scheduled: tirx.PrimFunc) -> tirx.PrimFunc:
    """``scheduled`` without its weight-packing blocks (itself when it packs nothing)."""
    from tvm import relax
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo

    if not (scheduled.attrs and scheduled.attrs.get("layout_free_buffers")):
        return scheduled
    infos = [info.as_json() for info in ArgInfo.from_prim_func(scheduled)]
    types = [relax.TensorType([int(d) for d in shape], dtype) for _, dtype, shape in infos]
    builder = relax.BlockBuilder()
    inputs = [relax.Var(f"arg{index}", ty) for index, ty in enumerate(types[:-1])]
    with builder.function("caller", inputs):
        kernel = builder.add_func(scheduled.without_attr("global_symbol"), "kernel")
        builder.emit_func_output(builder.emit(relax.call_tir(kernel, inputs, types[-1])))
    split = relax.transform.SplitLayoutRewritePreproc()(builder.get())
    parts = {gvar.name_hint: func for gvar, func in split.functions.items()}
    return parts.get("kernel_prepacked", scheduled)
