"""Default schedules by target: what the legacy TOPI ``schedule_*`` functions did, on ``tvm.s_tir``.

Modern TVM has no TOPI schedules, and an unscheduled PrimFunc runs one scalar thread: a 512x512
matmul is ~100x slower than NumPy. :func:`schedule_for_target` gives ``lower``/``jit`` kernels:

* ``llvm`` (CPU), vector width and register count read from the target's CPU features:
  - float product-sums of two inputs with static shapes (matmul, dense with transposed
    weights, batch_matmul, conv2d NCHW of any stride, ...): the operand that carries a column
    axis the other lacks (B, the weights) is packed into column panels by its own parallel
    block; the first reduction loop is cut into chunks whose panel slice fits L1; a register
    micro-kernel (rows x 2-3 vectors, sized to the register file) accumulates in a local
    buffer per block of tiles, the epilogue (bias, relu, ...) runs per block, blocks parallel.
    conv2d then vectorizes over output channels (its output's contiguous axis is too short);
  - other reductions whose innermost output axis is also the contiguous axis of an input:
    register-tiled (``_TILE_ROWS`` x ``_TILE_COLS``), the tile accumulated in a local buffer,
    vectorized, its epilogue computed per tile, the outer tiles parallel;
  - other reductions: the spatial loops parallel, the reduction loop left as it was;
  - injective stages: the innermost loop vectorized, the outer loops parallel;
  - small elementwise stages (every access is the output's own element, below the parallel
    threshold): the loops fused into one flat loop, split into vectors of 16, 8 or 4 lanes (4
    when the block calls a math library function such as ``exp``) when one of those divides its
    extent, the lanes vectorized. Left as a nest, LLVM vectorizes and unrolls every row for odd
    extents: a 16x40 kernel took ~230 ms to build against ~40 ms fused, and ran no faster.
    Vectorized here, the kernel needs no LLVM loop vectorizer, so it can be built at LLVM
    ``opt-level`` 1 (:mod:`.opt_level`).
* GPU kinds (``cuda``, ``rocm``, ``metal``, ``vulkan``, ``opencl``, ``webgpu``): the
  ``s_tir.dlight`` GPU rules (Matmul, GEMV, Reduction, GeneralReduction, then Fallback thread
  binding for everything else), so the function builds into valid device code.
* any other target: unchanged.

Results never change on CPU: no rule reorders a reduction (each output element still accumulates
its terms in the same order: reduction loops are only split, chunk outside, both serial); rules
only tile, reorder spatial loops, copy operands into packed layouts, vectorize spatial loops and
run spatial loops in parallel. LLVM may contract multiply-adds into FMAs where the target has
them. Every rule runs on a copy of the schedule, which is kept only when
the whole rule applies: a rule that does not fit a block leaves that block as it was.

Bump :data:`RULES_VERSION` whenever a rule's output may change, or what is built from it (the
LLVM ``opt-level`` :mod:`.opt_level` chooses from the rules kept): it is part of the persistent
compile cache key. :func:`schedule_blocks` says which rule each block kept.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, te, tirx
from tvm.tirx import IndexMap

from compile_engine_compat import threads
from compile_engine_compat.boundary import handle_of
from compile_engine_compat.pipeline.trace import UserSchedule

__all__ = [
    "GPU_KINDS",
    "RULES_VERSION",
    "VECTORIZED_ELEMENTWISE",
    "RuleOutcome",
    "apply_user_schedules",
    "schedule_blocks",
    "schedule_for_target",
    "uncovered_blocks",
    "user_schedules",
]

#: Part of the persistent cache key; bump when any rule's output may change.
RULES_VERSION = "7"

GPU_KINDS = frozenset({"cuda", "rocm", "metal", "vulkan", "opencl", "webgpu"})

#: The rule names (:attr:`RuleOutcome.rules`) of elementwise blocks whose innermost loop the rule
#: vectorized: code that LLVM's loop vectorizer has nothing left to do for.
VECTORIZED_ELEMENTWISE = frozenset({"flat_vectorized", "injective_vectorized"})

# Below this many loop iterations a kernel runs single-threaded and unvectorized-by-rule: the
# thread-pool launch (~5-20 us) would cost more than it saves, and tiny tests stay tiny.
_MIN_PARALLEL_WORK = 1 << 14
_VECTOR_WIDTHS = (16, 8, 4)
# Narrower vectors for small elementwise blocks that call a math library function (exp, log,
# sigmoid, tanh, erf, pow, ...): LLVM calls it once per lane, spilling the live vectors around
# each call, so the calls set the speed and wider vectors only add code. The benchmark's 10-op
# chain (three exps) on 64x64 at -O1: 4 lanes built in ~32 ms and ran in ~38 us, 16 lanes
# ~34 ms and ~43 us (the old unvectorized loop at -O3: ~38 ms, ~44 us).
_CALL_VECTOR_WIDTHS = (4,)
# Calls LLVM turns into vector instructions on x86 (no library call): blocks with only these
# (and arithmetic) get the full vector width.
_VECTOR_NATIVE_CALLS = frozenset(
    {
        "tirx.fabs",
        "tirx.sqrt",
        "tirx.floor",
        "prim.ceil",
        "tirx.trunc",
        "tirx.round",
        "tirx.nearbyint",
        "tirx.fma",
        "tirx.copysign",
        "tirx.isnan",
        "tirx.isinf",
        "tirx.isfinite",
        "tirx.reinterpret",
        "prim.if_then_else",
        "prim.likely",
    }
)
# Register tile of the tiled reduction rule: rows along the reuse axis, columns (two vectors of
# 8 lanes) along the contiguous output axis. 6 x 16 float32 is the classic AVX2 micro-kernel and
# was the best of a sweep on this machine (research notes, section 7).
_TILE_ROWS = (6, 4, 8, 2)
_TILE_COLS = (16, 8)
_VECTOR_LANES = 8
_L1_BYTES = 32 * 1024  # the smallest L1 data cache of current x86 cores
_REDUCTION_CHUNKS = (256, 128, 64)

# Parallel loops need a thread pool as wide as the machine; set it before TVM's pool starts.
threads.configure()

_Rule = Callable[[s_tir.Schedule, str], None]
# A rule and its name, the name recorded in RuleOutcome.rules when the rule is kept.
_NamedRule = tuple[str, _Rule]
# ScheduleError and TVM's FFI errors are RuntimeError/ValueError/TypeError/IndexError subclasses.
_RULE_ERRORS = (RuntimeError, ValueError, TypeError, IndexError)


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
        ``"injective_vectorized"``, ``"injective"``, ``"packed_gemm"``, ``"tiled_reduction"``,
        ``"parallel_reduction"``). A block no rule changed (skipped, too small, or the rule did
        not fit) is absent.
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
        return _schedule_cpu(sch, frozenset(skip), target)
    if kind in GPU_KINDS and not skip:
        return RuleOutcome(_schedule_gpu(sch, target))
    return RuleOutcome(sch)


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


def apply_user_schedules(sch: s_tir.Schedule, found: dict[UserSchedule, list[str]]) -> None:
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


# -- CPU ------------------------------------------------------------------------------------------


def _schedule_cpu(
    sch: s_tir.Schedule, skip: frozenset[str], target: tvm.target.Target
) -> RuleOutcome:
    isa = _target_isa(target)
    names = _top_level_block_names(sch)
    kept: dict[str, str] = {}
    for name in names:
        if name in skip:
            continue
        named = _cpu_rule(sch, name, isa)
        if named is None:
            continue
        trial = _try(sch, name, named[1])
        if trial is not sch:  # _try returns sch itself when it discarded the rule
            kept[name] = named[0]
            sch = trial
    return RuleOutcome(sch, tuple(names), kept)


def _top_level_block_names(sch: s_tir.Schedule) -> list[str]:
    try:
        root = sch.get_sblock("root")
    except _RULE_ERRORS:
        return []  # a single extern stage: nothing to schedule
    return [sch.get(b).name_hint for b in sch.get_child_blocks(root)]


def _try(sch: s_tir.Schedule, name: str, rule: _Rule | None) -> s_tir.Schedule:
    """Run ``rule`` on a copy of ``sch``; keep the copy only when the whole rule applied."""
    if rule is None:
        return sch
    trial = sch.copy()
    try:
        rule(trial, name)
    except _RULE_ERRORS:
        return sch  # the rule does not fit this block: the block stays as it was (still correct)
    if uncovered_blocks(trial):
        return sch  # a block no longer runs over its whole domain: never keep that
    return trial


def uncovered_blocks(sch: s_tir.Schedule) -> list[str]:
    """The blocks whose loops no longer run them over their whole domain.

    A correct schedule runs every block once per point of its domain. ``reverse_compute_at`` and
    ``compute_at`` cover only the region the anchor's loops need, so a consumer with more
    points than that (the zero border of a pad) would leave elements no loop writes.
    :func:`_try` discards any rule after which a block is partly covered.
    """
    analyzer = tvm.sym.Analyzer()
    try:
        blocks = sch.get_child_blocks(sch.get_sblock("root"))
    except _RULE_ERRORS:
        return []
    partial = []
    for block in blocks:
        node = sch.get(block)
        if not analyzer.can_prove_equal(_loop_iterations(sch, block), _domain_size(node)):
            partial.append(node.name_hint)
    return partial


class _BlockInfo:
    """What the rules need to know about one block: iteration kinds, extents, accesses."""

    def __init__(self, sch: s_tir.Schedule, name: str) -> None:
        block_rv = sch.get_sblock(name)
        self.block = sch.get(block_rv)
        self.loops = sch.get_loops(block_rv)
        loop_nodes = [sch.get(loop) for loop in self.loops]
        iter_vars = list(self.block.iter_vars)
        self.trivial = len(loop_nodes) == len(iter_vars)
        self.spatial = [iv.iter_type == tirx.IterVar.DataPar for iv in iter_vars]
        self.vars = [iv.var for iv in iter_vars]
        self.extents = [_static(loop.extent) for loop in loop_nodes]

    @property
    def is_reduction(self) -> bool:
        return not all(self.spatial)

    def is_elementwise(self) -> bool:
        """Every access is one element at the block's own indices, in buffers of its shape.

        Fusing the loops of such a block gives flat contiguous indices; with a broadcast or a
        transpose it would add a division per access instead (measured ~2x slower).
        """
        if self.is_reduction:
            return False
        for region in [*self.block.reads, *self.block.writes]:
            ranges = list(region.region)
            if not ranges:
                continue  # a 0-d buffer: one scalar, read once per element like a constant
            shape = [_static(dim) for dim in region.source.shape]
            if shape != self.extents or len(ranges) != len(self.vars):
                return False
            for rng, var in zip(ranges, self.vars):
                if _static(rng.extent) != 1 or not rng.min.same_as(var):
                    return False
        return True

    def work(self) -> int | None:
        total = 1
        for extent in self.extents:
            if extent is None:
                return None
            total *= extent
        return total


def _calls_a_library(block: Any) -> bool:
    """Whether ``block``'s body calls a function LLVM computes per lane (a libm call)."""
    found: list[str] = []

    def on_call(call: Any) -> None:
        name = getattr(call.op, "name", None)
        if name not in _VECTOR_NATIVE_CALLS:
            found.append(str(name))

    tvm_ffi.structural_walk(block.body, [(tvm.ir.Call, on_call)])
    return bool(found)


def _static(expr: Any) -> int | None:
    return int(expr.value) if isinstance(expr, tirx.IntImm) else None


def _cpu_rule(sch: s_tir.Schedule, name: str, isa: _Isa) -> _NamedRule | None:
    try:
        info = _BlockInfo(sch, name)
    except _RULE_ERRORS:
        return None
    if not info.trivial or not info.loops:
        return None
    work = info.work()
    if work is not None and work < _MIN_PARALLEL_WORK:
        if not info.is_elementwise():
            return None
        widths = _CALL_VECTOR_WIDTHS if _calls_a_library(info.block) else _VECTOR_WIDTHS
        if _divisor(work, widths) is not None:
            return "flat_vectorized", functools.partial(_flat_vectorized, widths=widths)
        return ("flat", _fuse_loops) if len(info.loops) > 1 else None
    if not info.is_reduction:
        # Only elementwise blocks count as vectorized: a broadcast or transpose vectorized here
        # reads with gathers or shuffles that LLVM's -O3 may still improve.
        vectorized = (
            info.is_elementwise() and _divisor(info.extents[-1], _VECTOR_WIDTHS) is not None
        )
        return ("injective_vectorized" if vectorized else "injective"), _injective
    gemm = _gemm_plan(info, isa)
    if gemm is not None:
        return "packed_gemm", functools.partial(_packed_gemm, plan=gemm)
    if _tile_plan(info) is not None:
        return "tiled_reduction", _tiled_reduction
    return "parallel_reduction", _parallel_reduction


def _injective(sch: s_tir.Schedule, name: str) -> None:
    """Vectorize the innermost loop (when its extent allows), run the outer loops in parallel."""
    block = sch.get_sblock(name)
    loops = sch.get_loops(block)
    inner_extent = _static(sch.get(loops[-1]).extent)
    width = _divisor(inner_extent, _VECTOR_WIDTHS)
    inner = loops[-1]
    outer = list(loops[:-1])
    if width is not None and inner_extent is not None:
        rest, lanes = sch.split(inner, [None, width])
        sch.vectorize(lanes)
        outer.append(rest)
    elif not outer:
        outer.append(inner)
    sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])


def _fuse_loops(sch: s_tir.Schedule, name: str) -> None:
    """Fuse the block's loops into one (flat indices, as contiguous as the buffers)."""
    sch.fuse(*sch.get_loops(sch.get_sblock(name)))


def _flat_vectorized(sch: s_tir.Schedule, name: str, widths: Sequence[int]) -> None:
    """Fuse the block's loops into one flat loop and vectorize it by whole vectors, serially.

    Small kernels stay single-threaded (see :data:`_MIN_PARALLEL_WORK`). The flat extent is
    static and a multiple of the width, the first of ``widths`` that divides it (checked by
    :func:`_cpu_rule`): no tail loop.
    """
    loops = sch.get_loops(sch.get_sblock(name))
    flat = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    width = _divisor(_static(sch.get(flat).extent), widths)
    if width is None:
        raise ValueError("no vector width divides the flat extent")
    _, lanes = sch.split(flat, [None, width])
    sch.vectorize(lanes)


def _parallel_reduction(sch: s_tir.Schedule, name: str) -> None:
    """Run the spatial loops in parallel; the reduction order is left as it was."""
    info = _BlockInfo(sch, name)
    spatial = [loop for loop, s in zip(info.loops, info.spatial) if s]
    if len(spatial) != info.spatial.index(False) or not spatial:
        raise ValueError("spatial loops are not outermost")
    sch.parallel(sch.fuse(*spatial) if len(spatial) > 1 else spatial[0])


class _TilePlan:
    """Loop indices and factors of a register-tiled reduction."""

    def __init__(
        self, col: int, cols: int, row: int | None, rows: int, chunk: int | None, panel_bytes: int
    ) -> None:
        self.col, self.cols, self.row, self.rows, self.chunk = col, cols, row, rows, chunk
        self.panel_bytes = panel_bytes


def _tile_plan(info: _BlockInfo) -> _TilePlan | None:
    """Plan the tiled rule, or None when the block's access pattern does not fit it.

    The column axis is the last spatial axis; it must be the output's innermost index and the
    innermost index of some input (so a column tile is a vector load). The row axis is the
    innermost other spatial axis that does not index that input (so one loaded vector serves
    every row of the tile).
    """
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial == 0 or not all(not s for s in info.spatial[n_spatial:]):
        return None
    if any(extent is None for extent in info.extents):
        return None
    col = n_spatial - 1
    col_var = info.vars[col]
    writes = info.block.writes
    if len(writes) != 1 or not _innermost_is(writes[0], col_var, exact=True):
        return None
    vector_read = next((r for r in info.block.reads if _innermost_is(r, col_var)), None)
    if vector_read is None:
        return None
    cols = _divisor(info.extents[col], _TILE_COLS)
    if cols is None:
        return None
    read_vars = _region_vars(vector_read)
    row = next(
        (i for i in reversed(range(col)) if not _contains(read_vars, info.vars[i])),
        None,
    )
    rows = 1
    if row is not None:
        rows = _divisor(info.extents[row], _TILE_ROWS) or 1
    first_reduction = info.extents[n_spatial]
    chunk = None
    if first_reduction is not None and first_reduction > _REDUCTION_CHUNKS[0]:
        chunk = _divisor(first_reduction, _REDUCTION_CHUNKS)
    reduction_extent = 1
    for extent in info.extents[n_spatial:]:
        reduction_extent *= extent or 1
    panel_bytes = reduction_extent * cols * _dtype_bytes(vector_read.source.dtype)
    return _TilePlan(col, cols, row if rows > 1 else None, rows, chunk, panel_bytes)


def _dtype_bytes(dtype: Any) -> int:
    return max(1, tvm.runtime.DataType(str(dtype)).bits // 8)


def _tiled_reduction(sch: s_tir.Schedule, name: str) -> None:
    info = _BlockInfo(sch, name)
    plan = _tile_plan(info)
    if plan is None:
        raise ValueError("block does not fit the tiled rule")
    block = sch.get_sblock(name)
    loops = list(info.loops)
    n_spatial = info.spatial.index(False)
    col_outer, col_inner = sch.split(loops[plan.col], [None, plan.cols])
    col_lanes_outer, col_lanes = sch.split(col_inner, [None, min(_VECTOR_LANES, plan.cols)])
    outer_spatial = [loops[i] for i in range(n_spatial) if i not in (plan.col, plan.row)]
    tile_loops: list[Any] = []
    # Column tile outside the row tiles when the vector-read input's column panel (the whole
    # reduction x one column tile) fits in L1: consecutive row tiles then reuse it from L1.
    # Measured on 512x512 matmul: ~10% faster; at 1024 the panel no longer fits and this order
    # was ~7% slower, so there the row tiles stay outside.
    column_first = plan.panel_bytes <= _L1_BYTES
    if column_first:
        outer_spatial.append(col_outer)
    if plan.row is not None:
        row_outer, row_inner = sch.split(loops[plan.row], [None, plan.rows])
        outer_spatial.append(row_outer)
        tile_loops.append(row_inner)
    if not column_first:
        outer_spatial.append(col_outer)
    reduction = loops[n_spatial:]
    if plan.chunk is not None:
        chunk_outer, chunk_inner = sch.split(reduction[0], [None, plan.chunk])
        reduction = [chunk_outer, chunk_inner, *reduction[1:]]
    sch.reorder(*outer_spatial, *reduction, *tile_loops, col_lanes_outer, col_lanes)
    # Accumulate the tile in registers; write it back (and run the epilogue) per tile.
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, outer_spatial[-1])
    sch.vectorize(sch.get_loops(write_back)[-1])
    _fuse_epilogue(sch, write_back, outer_spatial[-1])
    sch.parallel(sch.fuse(*outer_spatial) if len(outer_spatial) > 1 else outer_spatial[0])
    sch.vectorize(col_lanes)
    sch.unroll(col_lanes_outer)
    for loop in tile_loops:
        sch.unroll(loop)
    sch.decompose_reduction(block, reduction[0])  # after parallel: the other order is rejected


def _fuse_epilogue(sch: s_tir.Schedule, write_back: Any, at: Any) -> None:
    """Compute a single spatial consumer of the tile (bias, relu, ...) per tile, vectorized."""
    consumers = sch.get_consumers(write_back)
    if len(consumers) != 1:
        return
    epilogue = consumers[0]
    node = sch.get(epilogue)
    if not all(iv.iter_type == tirx.IterVar.DataPar for iv in node.iter_vars):
        return
    # Only a consumer with one iteration per produced element: reverse_compute_at runs the
    # consumer over the tile's region only, so a larger one (the zero border of the next conv's
    # pad) would keep rows no loop writes, read uninitialized on the next call (issue found with
    # a torch.export ResNet block: 3.4% of outputs wrong on the first call).
    if not _same_count(_domain_size(node), _domain_size(sch.get(write_back))):
        return
    try:
        sch.reverse_compute_at(epilogue, at)
    except s_tir.ScheduleError:
        return  # it reads outside the tile (e.g. a transpose): keep it as its own stage
    inner = sch.get_loops(epilogue)[-1]
    if _static(sch.get(inner).extent) in _TILE_COLS:
        sch.vectorize(inner)


def _domain_size(block: Any) -> Any:
    """How many iterations a block's domain holds (a PrimExpr: shapes may be symbolic)."""
    size: Any = tirx.const(1, "int64")
    for iv in block.iter_vars:
        size = size * tirx.Cast("int64", iv.dom.extent)
    return size


def _loop_iterations(sch: s_tir.Schedule, block: Any) -> Any:
    """How many times the loops around ``block`` run it (a PrimExpr)."""
    size: Any = tirx.const(1, "int64")
    for loop in sch.get_loops(block):
        size = size * tirx.Cast("int64", sch.get(loop).extent)
    return size


def _same_count(first: Any, second: Any) -> bool:
    """Provably equal iteration counts (symbolic ones included)."""
    return bool(tvm.sym.Analyzer().can_prove_equal(first, second))


def _innermost_is(region: Any, var: tirx.Var, exact: bool = False) -> bool:
    """True when ``region``'s innermost index is ``var`` (``exact``) or ``var`` plus other vars."""
    ranges = list(region.region)
    if not ranges or _static(ranges[-1].extent) != 1:
        return False
    index = ranges[-1].min
    if exact:
        return bool(index.same_as(var))
    if isinstance(index, tirx.Var):
        return bool(index.same_as(var))
    # var + reduction var (a convolution window): unit stride in var.
    return isinstance(index, tirx.Add) and any(side.same_as(var) for side in (index.a, index.b))


def _region_vars(region: Any) -> list[tirx.Var]:
    found: list[tirx.Var] = []
    for rng in region.region:
        found.extend(tvm.tirx.analysis.undefined_vars(rng.min, []))
    return found


def _contains(variables: Sequence[tirx.Var], var: tirx.Var) -> bool:
    return any(v.same_as(var) for v in variables)


def _divisor(extent: int | None, choices: Sequence[int]) -> int | None:
    if extent is None:
        return None
    return next((c for c in choices if extent % c == 0 and extent >= c), None)


# -- packed GEMM rule (matmul, dense, batch_matmul, conv2d) ---------------------------------------


@dataclass(frozen=True)
class _Isa:
    """The target's vector unit as the rules see it.

    Attributes
    ----------
    vector_bits : int
        Width of the vectors LLVM will emit for the target (what it prefers, not the widest it
        has: with AVX-512 LLVM splits 512-bit vectors unless ``-prefer-256-bit`` is cleared).
    registers : int
        Vector registers: how many accumulators a register tile can hold.
    """

    vector_bits: int
    registers: int

    def lanes(self, dtype: Any) -> int:
        return max(1, self.vector_bits // (_dtype_bytes(dtype) * 8))


_SSE = _Isa(128, 16)


# Per Target object: the feature queries cost ~0.1 ms, on every cold lowering. Targets are few
# and long-lived (host_target hands out one object per target), so the memo stays small.
@functools.lru_cache(maxsize=64)
def _target_isa(target: tvm.target.Target) -> _Isa:
    """The vector unit of an ``llvm`` target, from its CPU features (generic x86-64: SSE2).

    ``llvm_get_vector_width`` is not used: on TVM 0.27 it answers 512 for every x86 target,
    generic ``llvm`` included.
    """
    has = tvm.target.codegen.llvm_cpu_has_features
    try:
        if has(["avx512f"], target):
            mattr = {str(attr) for attr in target.attrs.get("mattr", [])}
            # LLVM splits 512-bit vectors on CPUs that prefer 256 bits (rocketlake, icelake,
            # skylake-avx512...) unless the user cleared the preference; 32 registers either way.
            return _Isa(512 if "-prefer-256-bit" in mattr else 256, 32)
        if has(["avx"], target):
            return _Isa(256, 16)
    except _RULE_ERRORS:
        pass  # not an x86 LLVM triple: assume 128-bit vectors, the common floor
    return _SSE


# Register micro-kernels (rows, vectors): rows x vectors accumulators, plus one register per
# column vector of the packed operand and one broadcast, must fit the register file. Larger
# tiles load fewer operands per multiply-add; the first that divides the extents is taken.
_MICRO_KERNELS = {
    32: (
        (8, 3),
        (12, 2),
        (6, 4),
        (7, 3),
        (8, 2),
        (4, 4),
        (7, 2),
        (6, 3),
        (6, 2),
        (4, 3),
        (4, 2),
        (2, 4),
        (2, 2),
    ),
    16: ((6, 2), (4, 3), (4, 2), (3, 3), (2, 3), (7, 1), (2, 2), (4, 1), (2, 1)),
}
_PACK_DTYPES = frozenset({"float32", "float64"})
# The packed operand's micro-panel (reduction chunk x one column tile) is kept within this many
# bytes so that it stays in L1 while every row tile of the block streams past it.
_PANEL_BYTES = 16 * 1024
# A block of row tiles x column tiles: its accumulators live in one local buffer (a per-thread
# workspace, 64 KB at most), its rows of the other operand stay in L2 across the column tiles.
# 128 rows: matmul 1024² and 2048² ~5% faster than 64; 256 rows and 64 or 256 columns no better.
_BLOCK_ROWS = 128
_BLOCK_COLS = 128


@dataclass(frozen=True)
class _GemmPlan:
    """Where the packed rule cuts a block: loop indices (into the block's loops) and factors."""

    packed: int  # index of the packed operand in the block's reads
    col: int  # vectorized spatial loop: an axis of the packed operand only
    row: int  # spatial loop of the register tile's rows: an axis of the other operand only
    lanes: int
    vectors: int  # vectors per tile row
    rows: int  # tile rows
    block_cols: int  # column tiles x tile columns of one parallel block
    block_rows: int
    chunk: int | None  # the first reduction loop's chunk (cache blocking), None: not split

    @property
    def cols(self) -> int:
        return self.vectors * self.lanes


def _gemm_plan(info: _BlockInfo, isa: _Isa) -> _GemmPlan | None:
    """Plan the packed rule, or None when the block is not a float product-sum it fits.

    It needs static extents, spatial loops outside the reduction loops, exactly two inputs, and a
    spatial axis (the columns) that indexes one input (the packed operand, every index a plain
    loop variable) but not the other: one vector of packed columns then multiplies one broadcast
    scalar of the other input. The tile rows are a spatial axis of the other input only.
    """
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial == 0 or any(info.spatial[n_spatial:]) or None in info.extents:
        return None
    reads, writes = list(info.block.reads), list(info.block.writes)
    if len(reads) != 2 or len(writes) != 1:
        return None
    dtype = str(writes[0].source.dtype)
    if dtype not in _PACK_DTYPES or any(str(r.source.dtype) != dtype for r in reads):
        return None
    out_vars = _region_vars(writes[0])
    best: tuple[tuple[bool, int], _GemmPlan] | None = None
    for packed in (0, 1):
        plan = _plan_packing(info, isa, packed, n_spatial)
        if plan is None:
            continue
        # Prefer columns that are the output's innermost axis (a contiguous write-back), then
        # the larger register tile.
        innermost = bool(out_vars) and info.vars[plan.col].same_as(out_vars[-1])
        score = (innermost, plan.rows * plan.vectors)
        if best is None or score > best[0]:
            best = (score, plan)
    return None if best is None else best[1]


def _plan_packing(info: _BlockInfo, isa: _Isa, packed: int, n_spatial: int) -> _GemmPlan | None:
    """The plan that packs ``info.block.reads[packed]``, or None when that read does not fit."""
    reads = list(info.block.reads)
    b_region, a_region = reads[packed], reads[1 - packed]
    b_index = _plain_index_vars(b_region)
    if b_index is None:
        return None
    a_vars = _region_vars(a_region)

    def loop_of(var: tirx.Var) -> int:
        return next(i for i, v in enumerate(info.vars) if v.same_as(var))

    b_loops = [loop_of(var) for var in b_index]
    spatial_b = [i for i in b_loops if i < n_spatial and not _contains(a_vars, info.vars[i])]
    spatial_a = [
        i for i in range(n_spatial) if _contains(a_vars, info.vars[i]) and i not in b_loops
    ]
    if not spatial_b or not spatial_a:
        return None
    dtype = b_region.source.dtype
    lanes = isa.lanes(dtype)
    col, row = spatial_b[-1], spatial_a[-1]
    col_extent, row_extent = info.extents[col], info.extents[row]
    assert col_extent is not None and row_extent is not None  # static: checked by the caller
    kernel = next(
        (
            (rows, vectors)
            for rows, vectors in _MICRO_KERNELS[isa.registers]
            if col_extent % (vectors * lanes) == 0 and row_extent % rows == 0
        ),
        None,
    )
    if kernel is None:
        return None
    rows, vectors = kernel
    cols = vectors * lanes
    reduction = [e or 1 for e in info.extents[n_spatial:]]
    inner_reduction = 1
    for extent in reduction[1:]:
        inner_reduction *= extent
    item = _dtype_bytes(dtype)
    chunk = None
    if reduction[0] * inner_reduction * cols * item > _PANEL_BYTES:
        fits = [
            c
            for c in range(8, reduction[0])
            if reduction[0] % c == 0 and c * inner_reduction * cols * item <= _PANEL_BYTES
        ]
        chunk = max(fits) if fits else None
    return _GemmPlan(
        packed=packed,
        col=col,
        row=row,
        lanes=lanes,
        vectors=vectors,
        rows=rows,
        block_cols=_block(col_extent, cols, _BLOCK_COLS),
        block_rows=_block(row_extent, rows, _BLOCK_ROWS),
        chunk=chunk,
    )


def _block(extent: int, tile: int, limit: int) -> int:
    """The largest multiple of ``tile`` dividing ``extent`` and at most ``limit`` (or ``tile``)."""
    count = extent // tile
    best = 1
    for n in range(1, count + 1):
        if count % n == 0 and n * tile <= limit:
            best = n
    return best * tile


def _plain_index_vars(region: Any) -> list[tirx.Var] | None:
    """The loop variables indexing ``region`` one per axis, or None for any other index."""
    found: list[tirx.Var] = []
    for rng in region.region:
        if _static(rng.extent) != 1 or not isinstance(rng.min, tirx.Var):
            return None
        if _contains(found, rng.min):
            return None
        found.append(rng.min)
    return found


def _packed_gemm(sch: s_tir.Schedule, name: str, plan: _GemmPlan) -> None:
    """Pack one operand into column panels, cache-block, register-tile, run blocks in parallel.

    The packed operand is copied into ``[..., col // cols, reduction axes..., col % cols]``: the
    micro-kernel then reads one contiguous panel per column tile instead of rows ``stride``
    apart. The loops become::

        parallel: other spatial, row block, column block
          chunk of the first reduction loop (serial)
            column tile, row tile
              rest of the reduction (serial, in its order)
                rows (unrolled), vectors (unrolled), lanes (vectorized)

    Each output element still sums its terms in the original order: the reduction loops are only
    split (chunk outside, both serial), never reordered among themselves.
    """
    block = sch.get_sblock(name)
    info = _BlockInfo(sch, name)
    n_spatial = info.spatial.index(False)
    _pack_operand(sch, block, plan, info)
    loops = list(sch.get_loops(block))
    row_block, row_tile, row_in = sch.split(
        loops[plan.row], [None, plan.block_rows // plan.rows, plan.rows]
    )
    col_block, col_tile, col_vec, col_lane = sch.split(
        loops[plan.col], [None, plan.block_cols // plan.cols, plan.vectors, plan.lanes]
    )
    outer = [loops[i] for i in range(n_spatial) if i not in (plan.row, plan.col)]
    outer += [row_block, col_block]
    reduction = loops[n_spatial:]
    chunked: list[Any] = []
    if plan.chunk is not None:
        chunk_outer, chunk_inner = sch.split(reduction[0], [None, plan.chunk])
        chunked, reduction = [chunk_outer], [chunk_inner, *reduction[1:]]
    sch.reorder(*outer, *chunked, col_tile, row_tile, *reduction, row_in, col_vec, col_lane)
    # Accumulate the block in a local buffer (the register tile's slice of it stays in registers
    # across the reduction), columns innermost so a tile row is whole vectors.
    write_back = sch.cache_write(block, 0, "local")
    _columns_last(sch, block, info, plan)
    sch.reverse_compute_at(write_back, outer[-1])
    _fuse_epilogue(sch, write_back, outer[-1])
    sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])
    sch.vectorize(col_lane)
    sch.unroll(col_vec)
    sch.unroll(row_in)
    sch.decompose_reduction(block, (chunked or [col_tile])[0])


def _pack_operand(sch: s_tir.Schedule, block: Any, plan: _GemmPlan, info: _BlockInfo) -> None:
    """Copy the packed operand into column panels in a separate, parallel block."""
    region = info.block.reads[plan.packed]
    index = _plain_index_vars(region)
    assert index is not None
    col_var = info.vars[plan.col]
    col_axis = next(i for i, var in enumerate(index) if var.same_as(col_var))
    reduction_vars = [v for v, s in zip(info.vars, info.spatial) if not s]
    reduction_axes = [i for i, var in enumerate(index) if _contains(reduction_vars, var)]
    other_axes = [i for i in range(len(index)) if i != col_axis and i not in reduction_axes]
    cols = plan.cols

    def panels(*axes: Any) -> list[Any]:
        return [
            *(axes[i] for i in other_axes),
            axes[col_axis] // cols,
            *(axes[i] for i in reduction_axes),
            axes[col_axis] % cols,
        ]

    pack = sch.cache_read(block, plan.packed, "global")
    sch.transform_layout(block, ("read", plan.packed), IndexMap.from_func(panels, len(index)))
    for producer in sch.get_producers(pack):
        try:  # a transpose feeding the operand (dense): the packing copy does it instead
            sch.compute_inline(producer)
        except _RULE_ERRORS:
            pass
    if col_axis == len(index) - 1:
        _parallel_copy(sch, pack)  # the source's rows are runs of panel rows already (matmul)
        return
    # Columns outer in the source (conv2d's OIHW weights): copy in the panels' order, so the
    # writes are contiguous and each panel column is one read stream. In the source's order each
    # element went to its own cache line, 128 bytes from the last (conv2d 3x3 1x256x14x14: the
    # copy of its 2.3 MB of weights took a quarter of the kernel's time).
    loops = list(sch.get_loops(pack))
    col_outer, col_inner = sch.split(loops[col_axis], [None, cols])
    order = [loops[i] for i in other_axes] + [col_outer] + [loops[i] for i in reduction_axes]
    sch.reorder(*order, col_inner)
    sch.parallel(sch.fuse(*order) if len(order) > 1 else order[0])


def _parallel_copy(sch: s_tir.Schedule, block: Any) -> None:
    loops = sch.get_loops(block)
    sch.parallel(sch.fuse(*loops[:-1]) if len(loops) > 2 else loops[0])


def _columns_last(sch: s_tir.Schedule, block: Any, info: _BlockInfo, plan: _GemmPlan) -> None:
    """Lay the local accumulator out with the column axis innermost (conv2d's NCHW: oc)."""
    index = _plain_index_vars(info.block.writes[0])
    if index is None:
        raise ValueError("output indexed by an expression")
    col_var = info.vars[plan.col]
    col_axis = next(i for i, var in enumerate(index) if var.same_as(col_var))
    if col_axis == len(index) - 1:
        return
    order = [i for i in range(len(index)) if i != col_axis] + [col_axis]
    sch.transform_layout(
        block, ("write", 0), IndexMap.from_func(lambda *axes: [axes[i] for i in order], len(index))
    )


# -- GPU ------------------------------------------------------------------------------------------


def _schedule_gpu(sch: s_tir.Schedule, target: tvm.target.Target) -> s_tir.Schedule:
    from tvm.s_tir import dlight

    name = sch.func_working_on
    rules = dlight.ApplyDefaultSchedule(
        dlight.gpu.Matmul(),
        dlight.gpu.GEMV(),
        dlight.gpu.Reduction(),
        dlight.gpu.GeneralReduction(),
        dlight.gpu.Fallback(),
    )
    with target:
        mod = rules(sch.mod)
    scheduled = s_tir.Schedule(mod)
    if name is not None:
        scheduled.work_on(name.name_hint if hasattr(name, "name_hint") else str(name))
    return scheduled
