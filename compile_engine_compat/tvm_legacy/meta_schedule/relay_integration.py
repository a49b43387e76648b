"""``tvm.meta_schedule.relay_integration`` (TVM 0.12-0.19), served by the shim's tuning core.

The program keeps its calls::

    database = ms.relay_integration.tune_relay(mod=mod, params=params, target=target,
                                               work_dir=work_dir, max_trials_global=64)
    lib = ms.relay_integration.compile_relay(database, mod, target, params)

A task is one kernel ``relay.build`` makes for the module (as TVM 0.19's MetaSchedule extracted
one per fused function); ``tune_relay`` tunes the kernels with a reduction with ``tune_tir``,
the trials shared by how often each is called, times the shim's own schedule beside each, and
writes the shim's record file in ``work_dir``; ``compile_relay`` builds with those records in
force, each kernel at the faster of its two schedules.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api

from ..tune.applied import AppliedRecords, applying
from ..tune.extra import require_tune_extra
from ..tune.kernels import KernelTask, extract_kernels
from ..tune.measure import MeasureConfig
from ..tune.progress import Progress
from ..tune.records import TuningRecordsError, append_record
from ..tune.search import trial_shares, tune_kernel

__all__ = ["ExtractedTask", "TunedRecords", "compile_relay", "extract_tasks", "tune_relay"]

#: The record file ``tune_relay`` writes in its ``work_dir``.
RECORDS_FILE = "compile_engine_compat_tuning.json"

#: PassContext keys TVM 0.19's ``compile_relay`` set itself; here the records scope does that.
_APPLYING_KEYS = ("relay.backend.use_meta_schedule", "relay.backend.tir_converter",
                  "relay.backend.use_meta_schedule_dispatch")  # fmt: skip


class ExtractedTask:
    """``ms.ExtractedTask``: one kernel of the module's build.

    Attributes
    ----------
    task_name : str
        The kernel's name (``fused_conv2d_add_relu``).
    mod : tvm.IRModule
        The unscheduled kernel as ``main``.
    target : tvm.target.Target
    dispatched : list of tvm.IRModule
        ``[mod]``.
    weight : int
        How many times the module calls it.
    """

    def __init__(self, kernel: KernelTask) -> None:
        self.kernel = kernel
        self.task_name = kernel.name
        self.mod = tvm.IRModule({"main": kernel.func.with_attr("global_symbol", "main")})
        self.target = kernel.target
        self.dispatched = [self.mod]
        self.weight = kernel.weight

    def __repr__(self) -> str:
        return f"ExtractedTask(task_name={self.task_name!r}, weight={self.weight})"


class TunedRecords:
    """What :func:`tune_relay` returns in place of a MetaSchedule ``Database``: the shim's record
    file it wrote (``path``), which :func:`compile_relay` applies."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)

    def __len__(self) -> int:
        return len(AppliedRecords(self.path)) if os.path.exists(self.path) else 0

    def __repr__(self) -> str:
        return f"TunedRecords({self.path!r}, {len(self)} kernels)"


@legacy_api("tvm.meta_schedule.relay_integration")
def extract_tasks(mod: Any, target: Any, params: Mapping[str, Any] | None = None, *,
                  opt_level: int = 3, pass_config: Any = None,
                  module_equality: str = "structural", disabled_pass: Any = None,
                  instruments: Any = None) -> list[ExtractedTask]:  # fmt: skip
    """``ms.relay_integration.extract_tasks(mod, target, params)``: one task per distinct kernel
    ``relay.build`` makes (dynamic shapes left out).

    Raises
    ------
    ValueError
        For a target other than ``llvm`` (the shim tunes CPU kernels only).
    """
    return [ExtractedTask(kernel) for kernel in extract_kernels(mod, params, target)]


@legacy_api("tvm.meta_schedule.relay_integration")
def tune_relay(mod: Any, params: Mapping[str, Any] | None, target: Any,
               work_dir: str | os.PathLike[str], max_trials_global: int, *,
               max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
               builder: Any = "local", runner: Any = "local", database: Any = "json",
               cost_model: Any = "xgb", measure_callbacks: Any = "default",
               task_scheduler: Any = "gradient", space: Any = "post-order-apply",
               strategy: Any = "evolutionary", seed: int | None = None,
               module_equality: str = "structural", num_tuning_cores: Any = "physical",
               disabled_pass: Any = None, instruments: Any = None) -> TunedRecords:  # fmt: skip
    """``ms.relay_integration.tune_relay(mod, params, target, work_dir, max_trials_global)``.

    The kernels with a reduction are tuned (evolutionary search on the xgb cost model),
    ``max_trials_global`` shared by call count, at least one each and at most
    ``max_trials_per_task``; candidates are built and timed in this process. Returns the record
    file written in ``work_dir`` (:class:`TunedRecords`), for :func:`compile_relay`. The other
    keyword arguments (MetaSchedule's builder, runner, database, search space...) are accepted
    and not used: the shim's core chooses them.

    Raises
    ------
    ImportError
        Without the ``[tune]`` extra.
    ValueError
        For ``max_trials_global`` below 1 or a target other than ``llvm``.
    """
    require_tune_extra("meta_schedule.relay_integration.tune_relay")
    if not isinstance(max_trials_global, int) or max_trials_global < 1:
        raise ValueError(f"tune_relay(max_trials_global={max_trials_global!r}): a positive int")
    kernels = [k for k in extract_kernels(mod, params, target) if k.has_reduction]
    records = Path(os.fspath(work_dir)) / RECORDS_FILE
    records.parent.mkdir(parents=True, exist_ok=True)
    shares = trial_shares(max_trials_global, [k.weight for k in kernels]) if kernels else []
    for index, (kernel, trials) in enumerate(zip(kernels, shares)):
        if max_trials_per_task is not None:
            trials = max(1, min(trials, max_trials_per_task))
        progress = Progress(trials, f"[Task {index + 1:2d}/{len(kernels):2d}] ")
        outcome = tune_kernel(kernel, trials, "meta_schedule", MeasureConfig(), progress)
        progress.finish()
        append_record(records, outcome.record())
    return TunedRecords(records)


@legacy_api("tvm.meta_schedule.relay_integration")
def compile_relay(database: Any, mod: Any, target: Any, params: Mapping[str, Any] | None, *,
                  backend: str = "graph", opt_level: int = 3, pass_config: Any = None,
                  executor: Any = None, disabled_pass: Any = None, runtime: Any = None,
                  instruments: Any = None) -> Any:  # fmt: skip
    """``ms.relay_integration.compile_relay(database, mod, target, params)``: ``relay.build``
    (``backend="graph"``) or ``relay.vm.compile`` (``"vm"``) with the records of ``database``
    in force, each kernel at the faster of its tuned schedule and the shim's.

    Raises
    ------
    TuningRecordsError
        For a database that is not what :func:`tune_relay` returned (or its record file): a
        MetaSchedule database of TVM's own holds schedules of other kernels.
    ValueError
        For a backend other than ``"graph"`` and ``"vm"``.
    """
    if backend not in ("graph", "vm"):
        raise ValueError(f"compile_relay(backend={backend!r}): 'graph' or 'vm'")
    records = _records_of(database)
    config = {k: v for k, v in dict(pass_config or {}).items() if k not in _APPLYING_KEYS}
    from compile_engine_compat.relay import build_module, vm

    with (
        applying(records),
        tvm.transform.PassContext(opt_level=opt_level, config=config, disabled_pass=disabled_pass),
    ):
        if backend == "vm":
            return vm.compile(mod, target=target, params=params, **INTERNAL)
        return build_module.build(mod, target=target, params=params, **INTERNAL)


def _records_of(database: Any) -> AppliedRecords:
    if isinstance(database, TunedRecords):
        return AppliedRecords(database.path)
    if isinstance(database, (str, os.PathLike)):
        return AppliedRecords(database)
    raise TuningRecordsError(
        f"compile_relay(database={type(database).__name__}): pass what tune_relay returned (or "
        "its record file); a MetaSchedule database of TVM's own holds schedules of TVM's Relay "
        "lowering, not of the kernels the shim builds: re-tune with tune_relay"
    )
