"""The pipeline: a Relax function becomes a kernel in five stages, each one module.

::

    trace      Relax function -> one TE graph, each op through its strategy or legalization
    fuse       injective stages inlined into their consumers, on the TE graph
    lower      -> one PrimFunc (te.create_prim_func), the rest of the inlining on s_tir
    schedule   default rules for the target (CPU tiles and packing, GPU dlight), user schedules
    build      tvm.compile -> a destination-passing Kernel (runtime/), at the LLVM opt-level chosen

:func:`lower_function` runs the first four in that order; :func:`build_kernel` (:mod:`.build`) is
the fifth. The facade composes them (:mod:`compile_engine_compat.facade.kernels`): look up the
persistent cache by key, on a miss lower and build, then store. The cache never calls back into
the pipeline. The target is passed explicitly to every stage that depends on it. Beside the
stages: :mod:`.op_sources` (where an op's TE comes from: a user strategy, a fallback or its
legalization; ``compile-engine-compat op NAME`` says which), :mod:`.implementations` (the
implementations users register), :mod:`.shape_func` (``lower_shape_func``), :mod:`.opt_level`
(LLVM ``-O1`` for kernels the rules vectorized completely) and :mod:`.build_pool` (building many
functions at once).
"""

from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm import relax, s_tir, te, tirx

from compile_engine_compat.pipeline import fuse, lower, opt_level, schedule, trace
from compile_engine_compat.pipeline.build import build_kernel

__all__ = ["Lowered", "build_kernel", "lower_function"]


@dataclass(frozen=True)
class Lowered:
    """What the first four stages make of one function (the engine's ``CachedFunc`` holds it)."""

    name: str
    traced: trace.TracedFunction
    #: The PrimFunc's parameters: the traced inputs, then one placeholder per constant.
    arguments: list[te.Tensor]
    outputs: list[te.Tensor]
    schedule: s_tir.Schedule
    #: No user schedule shaped it, so TVM may build the unscheduled PrimFunc if this one fails.
    plain_fallback: bool
    #: The LLVM opt-level to build it at (:func:`.opt_level.choose_opt_level`); None: the
    #: target's own.
    opt_level: int | None = None

    def prim_func(self) -> tirx.PrimFunc:
        """The PrimFunc before any inlining or scheduling."""
        return lower.to_prim_func(self.arguments, self.outputs, self.name)


def lower_function(
    source_func: relax.Function,
    target: tvm.target.Target,
    name: str,
    op_lowering: trace.OpLowering | None = None,
) -> Lowered:
    """Trace, fuse, lower and schedule ``source_func`` for ``target`` into the PrimFunc ``name``.

    The first four of the five stages; the fifth, :func:`build_kernel`, runs on the result's
    ``schedule.mod`` when a kernel is needed (``jit``), after the facade looked up the
    persistent cache.

    Parameters
    ----------
    source_func : tvm.relax.Function
        The function, ``global_symbol`` or not.
    target : tvm.target.Target
        Current while tracing (a ``lower_call`` override reads it) and the schedule's target.
    name : str
        The PrimFunc's name (the kernel symbol).
    op_lowering : callable, optional
        Replaces each op's default TE (the strategy registry's hook); the schedules of the user
        implementations it picks travel with the traced function and run after the defaults.

    Returns
    -------
    Lowered
        With the LLVM ``opt-level`` to build it at: 1 when every block is elementwise and a
        default rule vectorized it, else None (the target's own level).
    """
    with target:  # legacy lowered with the target current
        traced = trace.trace(source_func, op_lowering)
    arguments = traced.inputs + [placeholder for placeholder, _ in traced.constants]
    outputs = lower.distinct_outputs(arguments, traced.outputs)
    # Injective stages are inlined on the TE graph first (linear time); the s_tir inliner then
    # only sees what that pass leaves (graphs with extern kernels).
    fused = fuse.fuse_injective(outputs)
    # Default rules for the target; blocks a user schedule takes are skipped, and the user
    # schedules the traced function carries run last.
    user = schedule.user_schedules(traced.schedules, outputs)
    user_blocks = {block for blocks in user.values() for block in blocks}
    outcome = schedule.schedule_prim_func(lower.to_prim_func(arguments, fused, name), name,
                                          target, user)  # fmt: skip
    return Lowered(
        name,
        traced,
        arguments,
        outputs,
        outcome.schedule,
        plain_fallback=not user_blocks,
        opt_level=opt_level.choose_opt_level(target, outcome, user_blocks),
    )
