"""The shim's default schedules for the modern path: ``tvm.compile`` as fast as ``engine.jit``.

Every legacy call warns with ``tvm.compile(...)`` as its replacement, but on CPU
``tvm.compile``'s default pipeline leaves the fused kernels unscheduled: one scalar thread, a
conv2d about 160x slower than the shim's ``jit`` of the same function (bench/RESULTS.md). This
module is the non-deprecated way to keep the speed after migrating. It applies the very rules
``jit`` uses (injective stages inlined into their consumers, then
``pipeline.schedule.schedule_for_target``: packed GEMM and register-tiled, vectorized, parallel
reductions on ``llvm``; the ``s_tir.dlight`` rules on GPUs) to every PrimFunc that
``FuseOps``/``FuseTIR`` produce, through the same function as ``jit``
(:func:`compile_engine_compat.pipeline.schedule.schedule_prim_func`). It is the pipeline of
``relay.build`` (:mod:`compile_engine_compat.pipeline.model.vm_executable`): constants folded in
NumPy, weights packed once at build time instead of in every call::

    from compile_engine_compat import schedules

    target = schedules.host_target()  # "llvm" for this machine's CPU, as jit builds
    ex = tvm.compile(mod, target, relax_pipeline=schedules.relax_pipeline(target))
    vm = relax.VirtualMachine(ex, tvm.cpu())

or, in a pipeline of your own, ``schedules.DefaultSchedules(target)`` after ``FuseTIR``.

No rule reorders a reduction, so results equal those of the unscheduled kernels. Nothing here
warns: it is not a legacy API.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.conflicts import require_tvm

require_tvm(__name__)  # before tvm is imported: an ImportError naming the [tvm] extra

import tvm
from tvm import relax

from compile_engine_compat import targets as _host_cpu
from compile_engine_compat.pipeline.model import vm_executable as _vm_executable

__all__ = ["DefaultSchedules", "host_target", "relax_pipeline"]


def _target(target: Any) -> tvm.target.Target:
    from compile_engine_compat.targets import (
        as_target,  # the shim's target parsing: str, dict or TVM <=0.19 strings
    )

    # Exactly the target tvm.compile builds for: the rules must plan for its vector unit.
    resolved = as_target(target, host=False)
    if resolved is None:
        raise ValueError("a target is needed: pass one, or call inside `with target:`")
    return resolved


def host_target(target: Any = "llvm") -> tvm.target.Target:
    """The target ``jit`` builds for: a plain ``llvm`` target with this machine's CPU filled in.

    ``tvm.compile(mod, "llvm")`` generates generic x86-64 (SSE2) code; pass this target to
    ``tvm.compile`` and to :func:`relax_pipeline` to run as fast as the shim's ``jit``, which
    builds for the host CPU (``mcpu`` from ``llvm_get_system_cpu()``, and ``mattr`` switching
    off what the host lacks). A target naming ``mcpu``, ``mattr``, ``mabi`` or another triple is
    returned unchanged, as is any target when ``COMPILE_ENGINE_COMPAT_GENERIC_CPU=1``.

    Parameters
    ----------
    target : tvm.target.Target, str or dict
        Default ``"llvm"``.

    Returns
    -------
    tvm.target.Target
    """
    resolved = _target(target)
    return _host_cpu.host_target(resolved)


def DefaultSchedules(target: Any = None) -> tvm.transform.Pass:
    """A module pass that schedules every unscheduled PrimFunc with the shim's default rules.

    Parameters
    ----------
    target : tvm.target.Target, str or dict, optional
        Picks the rules (CPU for ``llvm``, dlight for GPU kinds); default: the enclosing
        ``with target:`` scope.

    Returns
    -------
    tvm.transform.Pass
        Run it after ``relax.transform.FuseTIR`` (the PrimFuncs are then whole kernels).
    """
    return _vm_executable.ScheduleKernels(_target(target))


def relax_pipeline(target: Any = None) -> tvm.transform.Pass:
    """``tvm.compile``'s default Relax pipeline for ``target``, with the shim's schedules.

    For ``llvm`` it is the CPU pipeline of the shim's module builds
    (:func:`compile_engine_compat.pipeline.model.vm_executable.relax_passes`: library dispatch,
    constant folding, legalization and fusion, :func:`DefaultSchedules` with the weights'
    packing moved out of the kernels and done once, then dataflow lowering and finalization).
    GPU kinds keep their own default pipeline, whose ``s_tir.dlight`` rules are the ones the
    shim uses. Pass it as ``tvm.compile(mod, target, relax_pipeline=relax_pipeline(target))``.

    Parameters
    ----------
    target : tvm.target.Target, str or dict, optional
        Default: the enclosing ``with target:`` scope.

    Returns
    -------
    tvm.transform.Pass
    """
    resolved = _target(target)
    if resolved.kind.name != "llvm":
        return relax.get_default_pipeline(resolved)
    passes = _vm_executable.relax_passes(resolved)

    @tvm.transform.module_pass(opt_level=0, name="compile_engine_compat.relax_pipeline")
    def pipeline(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        with resolved:
            return tvm.transform.Sequential(passes)(mod)

    return pipeline
