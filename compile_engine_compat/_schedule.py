"""Default schedules by target: what the legacy TOPI ``schedule_*`` functions did, on ``tvm.s_tir``.

Modern TVM has no TOPI schedules, and an unscheduled PrimFunc runs one scalar thread: a 512x512
matmul is ~100x slower than NumPy. :func:`schedule_for_target` gives ``lower``/``jit`` kernels:

* ``llvm`` (CPU):
  - reductions whose innermost output axis is also the contiguous axis of an input (matmul,
    batch_matmul, conv2d NCHW, ...): register-tiled (``_TILE_ROWS`` x ``_TILE_COLS``), the tile
    accumulated in a local buffer, vectorized, its epilogue (bias, relu, ...) computed per tile,
    the outer tiles parallel;
  - other reductions: the spatial loops parallel, the reduction loop left as it was;
  - injective stages: the innermost loop vectorized, the outer loops parallel;
  - small elementwise stages (every access is the output's own element, below the parallel
    threshold): the loops fused into one flat loop. Left as a nest, LLVM vectorizes and unrolls
    every row for odd extents: a 16x40 kernel took ~230 ms to build against ~40 ms fused, and
    ran no faster.
* GPU kinds (``cuda``, ``rocm``, ``metal``, ``vulkan``, ``opencl``, ``webgpu``): the
  ``s_tir.dlight`` GPU rules (Matmul, GEMV, Reduction, GeneralReduction, then Fallback thread
  binding for everything else), so the function builds into valid device code.
* any other target: unchanged.

Results never change on CPU: no rule reorders a reduction (each output element still accumulates
its terms in the same order); rules only tile, reorder spatial loops, vectorize spatial loops and
run spatial loops in parallel. Every rule runs on a copy of the schedule, which is kept only when
the whole rule applies: a rule that does not fit a block leaves that block as it was.

Bump :data:`RULES_VERSION` whenever a rule's output may change: it is part of the persistent
compile cache key.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

import tvm
from tvm import s_tir, te, tirx

from . import _threads

__all__ = ["GPU_KINDS", "RULES_VERSION", "schedule_for_target", "user_scheduled_blocks"]

#: Part of the persistent cache key; bump when any rule's output may change.
RULES_VERSION = "3"

GPU_KINDS = frozenset({"cuda", "rocm", "metal", "vulkan", "opencl", "webgpu"})

# Below this many loop iterations a kernel runs single-threaded and unvectorized-by-rule: the
# thread-pool launch (~5-20 us) would cost more than it saves, and tiny tests stay tiny.
_MIN_PARALLEL_WORK = 1 << 14
_VECTOR_WIDTHS = (16, 8, 4)
# Register tile of the tiled reduction rule: rows along the reuse axis, columns (two vectors of
# 8 lanes) along the contiguous output axis. 6 x 16 float32 is the classic AVX2 micro-kernel and
# was the best of a sweep on this machine (research notes, section 7).
_TILE_ROWS = (6, 4, 8, 2)
_TILE_COLS = (16, 8)
_VECTOR_LANES = 8
_L1_BYTES = 32 * 1024  # the smallest L1 data cache of current x86 cores
_REDUCTION_CHUNKS = (256, 128, 64)

# Parallel loops need a thread pool as wide as the machine; set it before TVM's pool starts.
_threads.configure()

_Rule = Callable[[s_tir.Schedule, str], None]
# ScheduleError and TVM's FFI errors are RuntimeError/ValueError/TypeError/IndexError subclasses.
_RULE_ERRORS = (RuntimeError, ValueError, TypeError, IndexError)


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
    kind = target.kind.name
    if kind == "llvm":
        return _schedule_cpu(sch, frozenset(skip))
    if kind in GPU_KINDS and not skip:
        return _schedule_gpu(sch, target)
    return sch


def user_scheduled_blocks(outputs: Sequence[te.Tensor]) -> set[str]:
    """Names of the ops in ``outputs``' graph whose implementation brings its own schedule.

    Reads (never pops) the strategy registry's pending schedules, which the strategy hook applies
    after the default rules: a user schedule wins over the default.
    """
    from . import _strategy  # late: the strategy module imports the tracer

    return {name for names in _strategy.scheduled_ops(outputs).values() for name in names}


# -- CPU ------------------------------------------------------------------------------------------


def _schedule_cpu(sch: s_tir.Schedule, skip: frozenset[str]) -> s_tir.Schedule:
    names = _top_level_block_names(sch)
    for name in names:
        if name in skip:
            continue
        sch = _try(sch, name, _cpu_rule(sch, name))
    return sch


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
    return trial


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


def _static(expr: Any) -> int | None:
    return int(expr.value) if isinstance(expr, tirx.IntImm) else None


def _cpu_rule(sch: s_tir.Schedule, name: str) -> _Rule | None:
    try:
        info = _BlockInfo(sch, name)
    except _RULE_ERRORS:
        return None
    if not info.trivial or not info.loops:
        return None
    work = info.work()
    if work is not None and work < _MIN_PARALLEL_WORK:
        return _fuse_loops if len(info.loops) > 1 and info.is_elementwise() else None
    if not info.is_reduction:
        return _injective
    if _tile_plan(info) is not None:
        return _tiled_reduction
    return _parallel_reduction


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
    try:
        sch.reverse_compute_at(epilogue, at)
    except s_tir.ScheduleError:
        return  # it reads outside the tile (e.g. a transpose): keep it as its own stage
    inner = sch.get_loops(epilogue)[-1]
    if _static(sch.get(inner).extent) in _TILE_COLS:
        sch.vectorize(inner)


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
