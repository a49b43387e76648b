"""The rule driver: which default rules a function gets for its target, each kept only when whole.

:func:`schedule_blocks` runs the CPU rules block by block (:func:`.cpu_rules.choose_cpu_rules`
lists them best first, :func:`try_rule` runs each on a copy and keeps the first copy whose rule
applied completely and every block still runs over its whole domain), the dlight rules on GPU kinds
(:mod:`.gpu`), and leaves other targets alone. :func:`user_schedules` and
:func:`apply_user_schedules` run the schedules of user strategies after the defaults. The package
docstring (:mod:`compile_engine_compat.pipeline.schedule`) describes the rules.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm import s_tir, te, tirx

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.pipeline.lower import inline_injective
from compile_engine_compat.pipeline.schedule.blocks import (
    RULE_ERRORS,
    Rule,
    domain_size,
    loop_iterations,
    target_isa,
)
from compile_engine_compat.pipeline.schedule.cpu_rules import choose_cpu_rules
from compile_engine_compat.pipeline.schedule.gpu import schedule_gpu
from compile_engine_compat.pipeline.trace import UserSchedule
from compile_engine_compat.runtime import threads

__all__ = [
    "GPU_KINDS",
    "RULES_VERSION",
    "VECTORIZED_ELEMENTWISE",
    "RuleOutcome",
    "apply_user_schedules",
    "schedule_blocks",
    "schedule_cpu",
    "schedule_for_target",
    "schedule_prim_func",
    "top_level_block_names",
    "try_rule",
    "uncovered_blocks",
    "user_schedules",
]

#: Part of the persistent cache key; bump when any rule's output may change.
RULES_VERSION = "22"

GPU_KINDS = frozenset({"cuda", "rocm", "metal", "vulkan", "opencl", "webgpu"})

#: The rule names (:attr:`RuleOutcome.rules`) of elementwise blocks whose innermost loop the rule
#: vectorized: code that LLVM's loop vectorizer has nothing left to do for.
VECTORIZED_ELEMENTWISE = frozenset({"flat_vectorized", "injective_vectorized"})

logger = logging.getLogger("compile_engine")

# Parallel loops need a thread pool as wide as the machine; set it before TVM's pool starts.
threads.configure()


@dataclass(frozen=True)
class RuleOutcome:
    """A scheduled function, and which default rule each of its top-level blocks kept.

    Attributes
    ----------
    schedule : tvm.s_tir.Schedule
        The scheduled schedule.
    blocks : tuple of str
        The top-level blocks the CPU rules looked at, in order (empty for other targets).
    rules : mapping of str to str
        Block name -> name of the rule kept for it (``"flat_vectorized"``, ``"flat"``,
        ``"injective_vectorized"``, ``"injective"``, ``"packed_gemm"``, ``"depthwise_conv"``,
        ``"vnni_gemm"``, ``"pmaddubs_gemm"``, ``"tiled_reduction"``, ``"parallel_reduction"``).
        A block no rule changed (skipped, too small, or the rule did not fit) is absent.
    """

    schedule: s_tir.Schedule
    blocks: tuple[str, ...] = ()
    rules: Mapping[str, str] = field(default_factory=dict)

    def all_vectorized_elementwise(self) -> bool:
        """Whether every block is elementwise and kept a rule that vectorized it.

        Such a kernel is already in vector form: LLVM's ``-O3`` has nothing to add that
        ``-O1`` lacks, and ``-O1`` builds it faster (see :mod:`.opt_level`).
        """
        return bool(self.blocks) and all(
            self.rules.get(name) in VECTORIZED_ELEMENTWISE for name in self.blocks
        )


def schedule_for_target(
    sch: s_tir.Schedule,
    target: tvm.target.Target,
    skip: Collection[str] = (),
) -> s_tir.Schedule:
    """Apply the default schedule rules for ``target`` to the function ``sch`` works on.

    Parameters
    ----------
    sch : tvm.s_tir.Schedule
        Working on one PrimFunc (``sch.work_on`` was called), injective stages already inlined.
    target : tvm.target.Target
        Picks the rules: CPU rules for ``llvm``, dlight GPU rules for the GPU kinds.
    skip : collection of str
        Blocks a user schedule (strategy registry) will schedule: the defaults leave them alone.
        On a GPU target, any user-scheduled block turns the default rules off for the function,
        since thread binding is all or nothing.

    Returns
    -------
    tvm.s_tir.Schedule
        The scheduled schedule: ``sch`` itself or a new one over the scheduled module.
    """
    return schedule_blocks(sch, target, skip).schedule


def schedule_blocks(
    sch: s_tir.Schedule,
    target: tvm.target.Target,
    skip: Collection[str] = (),
) -> RuleOutcome:
    """:func:`schedule_for_target`, also saying which rule each block kept.

    Parameters
    ----------
    sch : tvm.s_tir.Schedule
        As for :func:`schedule_for_target`.
    target : tvm.target.Target
        As for :func:`schedule_for_target`.
    skip : collection of str
        As for :func:`schedule_for_target`.

    Returns
    -------
    RuleOutcome
        The scheduled schedule, the top-level blocks and the rule each kept (CPU rules only).
    """
    kind = target.kind.name
    if kind == "llvm":
        return schedule_cpu(sch, frozenset(skip), target)
    if kind in GPU_KINDS and not skip:
        return RuleOutcome(schedule_gpu(sch, target))
    return RuleOutcome(sch)


def schedule_prim_func(
    prim_func: tirx.PrimFunc,
    name: str,
    target: tvm.target.Target,
    user: Mapping[UserSchedule, list[str]] | None = None,
) -> RuleOutcome:
    """Schedule one PrimFunc as ``jit`` does: inline injective stages, default rules, user rules.

    The one entry point of both ``lower``/``jit`` (:func:`compile_engine_compat.pipeline.
    lower_function`) and whole-model builds (:mod:`compile_engine_compat.pipeline.model.
    vm_executable`), so that a rule or a fix reaches both.

    Parameters
    ----------
    prim_func : tvm.tirx.PrimFunc
        The unscheduled function (``te.create_prim_func`` or Relax's ``FuseTIR`` made it). Its
        ``layout_free_buffers`` attribute, when set, names the parameters that are constants at
        every call (weights): their packing is marked as a layout rewrite that the module build
        moves out of the kernel and computes once.
    name : str
        Its name in the schedule's module.
    target : tvm.target.Target
        Picks the rules.
    user : mapping, optional
        ``user schedule -> block names`` (:func:`user_schedules`): the defaults skip those
        blocks and the user schedules run last.

    Returns
    -------
    RuleOutcome
    """
    user = dict(user or {})
    sch = inline_injective(prim_func, name)
    skip = {block for blocks in user.values() for block in blocks}
    outcome = schedule_blocks(sch, target, skip)
    apply_user_schedules(outcome.schedule, user)
    return outcome


def user_schedules(
    schedules: Sequence[tuple[UserSchedule, list[Any]]], outputs: Sequence[te.Tensor]
) -> dict[UserSchedule, list[str]]:
    """The user schedules a traced function carries, each with its ops' names in ``outputs``' graph.

    Parameters
    ----------
    schedules : sequence of (callable, list of te.Operation)
        :attr:`.trace.TracedFunction.schedules`.
    outputs : sequence of te.Tensor
        The function's outputs: ops no longer reachable from them are left out.

    Returns
    -------
    dict
        ``schedule function -> [op name, ...]``; empty when no user implementation brought one.
    """
    if not schedules:
        return {}
    owner = {handle_of(op): fn for fn, ops in schedules for op in ops}
    found: dict[UserSchedule, list[str]] = {}
    seen: set[int] = set()
    stack = [t.op for t in outputs]
    while stack:
        op = stack.pop()
        handle = handle_of(op)
        if handle in seen:
            continue
        seen.add(handle)
        if handle in owner:
            found.setdefault(owner[handle], []).append(op.name)
        stack.extend(t.op for t in getattr(op, "input_tensors", []))
    return found


def apply_user_schedules(sch: s_tir.Schedule, found: Mapping[UserSchedule, list[str]]) -> None:
    """Run each user schedule with the names of its blocks still in ``sch``.

    Runs after the default rules, which skip those blocks: a user schedule wins. Injective
    stages may have been inlined away, so each schedule gets only the blocks that remain.
    """
    for schedule_fn, names in found.items():
        schedule_fn(sch, [name for name in names if _has_block(sch, name)])


def _has_block(sch: s_tir.Schedule, name: str) -> bool:
    try:
        sch.get_sblock(name)
    except Exception:  # ScheduleError / ValueError: the block was inlined or renamed
        return False
    return True


def schedule_cpu(
    sch: s_tir.Schedule, skip: frozenset[str], target: tvm.target.Target
) -> RuleOutcome:
    isa = target_isa(target)
    names = top_level_block_names(sch)
    kept: dict[str, str] = {}
    for name in names:
        if name in skip:
            continue
        for rule_name, rule in choose_cpu_rules(sch, name, isa):
            trial = try_rule(sch, name, rule)
            if trial is not sch:  # try_rule returns sch itself when it discarded the rule
                kept[name] = rule_name
                sch = trial
                break
            logger.debug("schedule rule %s did not fit block %s", rule_name, name)
    return RuleOutcome(sch, tuple(names), kept)


def top_level_block_names(sch: s_tir.Schedule) -> list[str]:
    try:
        root = sch.get_sblock("root")
    except RULE_ERRORS:
        return []  # a single extern stage: nothing to schedule
    return [sch.get(b).name_hint for b in sch.get_child_blocks(root)]


def try_rule(sch: s_tir.Schedule, name: str, rule: Rule | None) -> s_tir.Schedule:
    """Run ``rule`` on a copy of ``sch``; keep the copy only when the whole rule applied."""
    if rule is None:
        return sch
    trial = _copy(sch)
    try:
        rule(trial, name)
    except RULE_ERRORS:
        return sch  # the rule does not fit this block: the block stays as it was (still correct)
    if uncovered_blocks(trial):
        return sch  # a block no longer runs over its whole domain: never keep that
    return trial


def _copy(sch: s_tir.Schedule) -> s_tir.Schedule:
    """A copy of ``sch``; a new schedule of its module where TVM 0.27 cannot copy it (after
    ``tensorize``, ``Schedule.copy`` fails with ``unordered_map::at``: the VNNI rule's kernels
    followed by a block of their own, such as the slice of padded output channels)."""
    try:
        return sch.copy()
    except tvm.error.InternalError:
        fresh = s_tir.Schedule(sch.mod)
        fresh.work_on(sch.func_working_on.name_hint)
        return fresh


def uncovered_blocks(sch: s_tir.Schedule) -> list[str]:
    """The blocks whose loops no longer run them over their whole domain.

    A correct schedule runs every block once per point of its domain. ``reverse_compute_at`` and
    ``compute_at`` cover only the region the anchor's loops need, so a consumer with more
    points than that (the zero border of a pad) would leave elements no loop writes.
    :func:`try_rule` discards any rule after which a block is partly covered.
    """
    analyzer = tvm.sym.Analyzer()
    try:
        blocks = sch.get_child_blocks(sch.get_sblock("root"))
    except RULE_ERRORS:
        return []
    partial = []
    for block in blocks:
        node = sch.get(block)
        if not analyzer.can_prove_equal(loop_iterations(sch, block), domain_size(node)):
            partial.append(node.name_hint)
    return partial
