"""The CPU rules other than the packed GEMM: which rule a block gets, and the rules themselves.

* small elementwise blocks: one flat loop cut into whole vectors (:func:`flat_vectorized`), or
  just fused (:func:`fuse_loops`);
* injective blocks: innermost loop vectorized, outer loops parallel (:func:`injective`);
* uint8 x int8 -> int32 product-sums on VNNI targets: ``vpdpbusd`` (:mod:`.cpu_int8`);
* float product-sums of two inputs, and 8-bit ones widened to int32: the packed GEMM
  (:mod:`.cpu_gemm`);
* reductions whose innermost output axis is an input's contiguous axis: register-tiled
  (:func:`tiled_reduction`), a symbolic outer batch (``relay.Any()``) included;
* other reductions: spatial loops parallel (:func:`parallel_reduction`).

:func:`choose_cpu_rules` lists them per block, best first; the driver (:mod:`.`) runs each on a
copy and keeps the first that applies whole.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from tvm import s_tir

from compile_engine_compat.pipeline.schedule.blocks import (
    RULE_ERRORS,
    BlockInfo,
    Isa,
    NamedRule,
    Rule,
    calls_a_library,
    contains,
    divisor,
    dtype_bytes,
    fuse_epilogue,
    inline_padding,
    innermost_is,
    parallelize,
    region_vars,
    single_threaded,
    static,
)
from compile_engine_compat.pipeline.schedule.cpu_conv import depthwise_conv, depthwise_plan
from compile_engine_compat.pipeline.schedule.cpu_gemm import gemm_plan, packed_gemm
from compile_engine_compat.pipeline.schedule.cpu_int8 import vnni_gemm, vnni_plan

__all__ = [
    "MIN_PARALLEL_WORK",
    "SINGLE_THREAD_ELEMENTS",
    "SINGLE_THREAD_PRODUCT_SUMS",
    "choose_cpu_rule",
    "choose_cpu_rules",
]

# Below this many loop iterations a kernel runs single-threaded and unvectorized-by-rule: the
# thread-pool launch (~5-20 us) would cost more than it saves, and tiny tests stay tiny.
MIN_PARALLEL_WORK = 1 << 14

# Between that and these, a block gets its rule but runs on the calling thread: a parallel launch
# wakes a sleeping pool worker (``threads``), a few microseconds on bare metal and 20-35 us on a
# 2-vCPU VM, more than one thread's share of a product-sum of fewer multiply-adds, or of an
# elementwise or injective stage of fewer elements. On that VM, at the shim's default pool
# settings: MobileNetV2 3.20 -> 2.90 ms, the 2-layer encoder 2.01 -> 1.58 ms (bench/RESULTS.md).
SINGLE_THREAD_PRODUCT_SUMS = 1 << 20
SINGLE_THREAD_ELEMENTS = 1 << 16
_VECTOR_WIDTHS = (16, 8, 4)

# Narrower vectors for small elementwise blocks that call a math library function (exp, log,
# sigmoid, tanh, erf, pow, ...): LLVM calls it once per lane, spilling the live vectors around
# each call, so the calls set the speed and wider vectors only add code. The benchmark's 10-op
# chain (three exps) on 64x64 at -O1: 4 lanes built in ~32 ms and ran in ~38 us, 16 lanes
# ~34 ms and ~43 us (the old unvectorized loop at -O3: ~38 ms, ~44 us).
_CALL_VECTOR_WIDTHS = (4,)

# Register tile of the tiled reduction rule: rows along the reuse axis, columns (two vectors of
# 8 lanes) along the contiguous output axis. 6 x 16 float32 is the classic AVX2 micro-kernel and
# was the best of a sweep on this machine (research notes, section 7).
_TILE_ROWS = (6, 4, 8, 2)
_TILE_COLS = (16, 8)
# A tile of one row (no axis reuses the loaded vectors: a pooling window) holds few accumulators,
# so it takes more columns: fewer, longer parallel iterations, while at least this many remain
# for the threads. ResNet-18's 3x3/2 max pool on 112x112x64: 12,544 iterations of 16 channels
# took 131-133 us, 3,136 of 64 channels 63-66 us (2-vCPU AMD EPYC VM).
_SINGLE_ROW_COLS = (64, 32, 16, 8)
_MIN_PARALLEL_TILES = 64
_VECTOR_LANES = 8
_L1_BYTES = 32 * 1024  # the smallest L1 data cache of current x86 cores
_REDUCTION_CHUNKS = (256, 128, 64)


def choose_cpu_rule(sch: s_tir.Schedule, name: str, isa: Isa) -> NamedRule | None:
    """The rule for block ``name``, or None when no rule changes it."""
    rules = choose_cpu_rules(sch, name, isa)
    return rules[0] if rules else None


def choose_cpu_rules(sch: s_tir.Schedule, name: str, isa: Isa) -> list[NamedRule]:
    """The rules for block ``name``, best first: the driver keeps the first that applies whole.

    A reduction whose fast rule (depthwise, packed GEMM, tiled) does not fit after all falls
    back to :func:`_parallel_reduction` deliberately, so that no shape runs an unscheduled
    loop nest on one thread.
    """
    try:
        info = BlockInfo(sch, name)
    except RULE_ERRORS:
        return []
    if not info.trivial or not info.loops:
        return []
    named = _rule_for(info, isa)
    if named is None:
        return []
    rules = [named]
    # Also where only the parallel reduction fits otherwise (an image row of 11 or 13 pixels).
    vnni = vnni_plan(info, isa) if info.is_reduction else None
    if vnni is not None:  # u8 x i8 -> i32 on vpdpbusd (pmaddubsw); else the widening GEMM
        rules.insert(0, (vnni.rule_name, functools.partial(vnni_gemm, plan=vnni)))
    if info.is_reduction and named[0] != "parallel_reduction":
        rules.append(("parallel_reduction", _parallel_reduction))
    if not _single_threaded_work(info):
        return rules
    return [(rule_name, functools.partial(_on_one_thread, rule=rule)) for rule_name, rule in rules]


def _single_threaded_work(info: BlockInfo) -> bool:
    work = info.work()
    if work is None:
        return False
    return work < (SINGLE_THREAD_PRODUCT_SUMS if info.is_reduction else SINGLE_THREAD_ELEMENTS)


def _on_one_thread(sch: s_tir.Schedule, name: str, rule: Rule) -> None:
    with single_threaded():
        rule(sch, name)


def _rule_for(info: BlockInfo, isa: Isa) -> NamedRule | None:
    work = info.work()
    if work is not None and work < MIN_PARALLEL_WORK:
        if not info.is_elementwise():
            return None
        widths = _CALL_VECTOR_WIDTHS if calls_a_library(info.block) else _VECTOR_WIDTHS
        if divisor(work, widths) is not None:
            return "flat_vectorized", functools.partial(_flat_vectorized, widths=widths)
        return ("flat", _fuse_loops) if len(info.loops) > 1 else None
    if not info.is_reduction:
        # Only elementwise blocks count as vectorized: a broadcast or transpose vectorized here
        # reads with gathers or shuffles that LLVM's -O3 may still improve.
        vectorized = info.is_elementwise() and divisor(info.extents[-1], _VECTOR_WIDTHS) is not None
        return ("injective_vectorized" if vectorized else "injective"), _injective
    depthwise = depthwise_plan(info, isa)
    if depthwise is not None:
        return "depthwise_conv", functools.partial(depthwise_conv, plan=depthwise)
    gemm = gemm_plan(info, isa)
    if gemm is not None:
        return "packed_gemm", functools.partial(packed_gemm, plan=gemm)
    if _tile_plan(info) is not None:
        return "tiled_reduction", _tiled_reduction
    return "parallel_reduction", _parallel_reduction


def _injective(sch: s_tir.Schedule, name: str) -> None:
    """Vectorize the innermost loop (when its extent allows), run the outer loops in parallel."""
    block = sch.get_sblock(name)
    loops = sch.get_loops(block)
    inner_extent = static(sch.get(loops[-1]).extent)
    width = divisor(inner_extent, _VECTOR_WIDTHS)
    inner = loops[-1]
    outer = list(loops[:-1])
    if width is not None and inner_extent is not None:
        rest, lanes = sch.split(inner, [None, width])
        sch.vectorize(lanes)
        outer.append(rest)
    elif not outer:
        outer.append(inner)
    parallelize(sch, outer)


def _fuse_loops(sch: s_tir.Schedule, name: str) -> None:
    """Fuse the block's loops into one (flat indices, as contiguous as the buffers)."""
    sch.fuse(*sch.get_loops(sch.get_sblock(name)))


def _flat_vectorized(sch: s_tir.Schedule, name: str, widths: Sequence[int]) -> None:
    """Fuse the block's loops into one flat loop and vectorize it by whole vectors, serially.

    Small kernels stay single-threaded (see :data:`MIN_PARALLEL_WORK`). The flat extent is
    static and a multiple of the width, the first of ``widths`` that divides it (checked by
    :func:`choose_cpu_rule`): no tail loop.
    """
    loops = sch.get_loops(sch.get_sblock(name))
    flat = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    width = divisor(static(sch.get(flat).extent), widths)
    if width is None:
        raise ValueError("no vector width divides the flat extent")
    _, lanes = sch.split(flat, [None, width])
    sch.vectorize(lanes)


def _parallel_reduction(sch: s_tir.Schedule, name: str) -> None:
    """Run the spatial loops in parallel; the reduction order is left as it was."""
    info = BlockInfo(sch, name)
    spatial = [loop for loop, s in zip(info.loops, info.spatial) if s]
    if len(spatial) != info.spatial.index(False) or not spatial:
        raise ValueError("spatial loops are not outermost")
    parallelize(sch, spatial)


class _TilePlan:
    """Loop indices and factors of a register-tiled reduction."""

    def __init__(
        self, col: int, cols: int, row: int | None, rows: int, chunk: int | None, panel_bytes: int
    ) -> None:
        self.col, self.cols, self.row, self.rows, self.chunk = col, cols, row, rows, chunk
        self.panel_bytes = panel_bytes


def _tile_plan(info: BlockInfo) -> _TilePlan | None:
    """Plan the tiled rule, or None when the block's access pattern does not fit it.

    The column axis is the last spatial axis; it must be the output's innermost index and the
    innermost index of some input (so a column tile is a vector load). The row axis is the
    innermost other spatial axis that does not index that input (so one loaded vector serves
    every row of the tile).
    """
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial == 0 or not all(not s for s in info.spatial[n_spatial:]):
        return None
    col = n_spatial - 1
    # A symbolic extent is taken on an outer spatial axis only (a ``relay.Any()`` batch): it
    # stays an outer parallel loop; the columns, the tile rows and the reduction are static.
    if None in info.extents[col:]:
        return None
    col_var = info.vars[col]
    writes = info.block.writes
    if len(writes) != 1 or not innermost_is(writes[0], col_var, exact=True):
        return None
    vector_read = next((r for r in info.block.reads if innermost_is(r, col_var)), None)
    if vector_read is None:
        return None
    cols = divisor(info.extents[col], _TILE_COLS)
    if cols is None:
        return None
    read_vars = region_vars(vector_read)
    row = next(
        (i for i in reversed(range(col)) if not contains(read_vars, info.vars[i])),
        None,
    )
    rows = 1
    if row is not None and info.extents[row] is not None:
        rows = divisor(info.extents[row], _TILE_ROWS) or 1
    if rows == 1:
        col_extent = info.extents[col] or 1
        others = math.prod(extent or 1 for extent in info.extents[:col])
        cols = next(
            (
                wide
                for wide in _SINGLE_ROW_COLS
                if wide > cols
                and col_extent % wide == 0
                and others * (col_extent // wide) >= _MIN_PARALLEL_TILES
            ),
            cols,
        )
    first_reduction = info.extents[n_spatial]
    chunk = None
    if first_reduction is not None and first_reduction > _REDUCTION_CHUNKS[0]:
        chunk = divisor(first_reduction, _REDUCTION_CHUNKS)
    reduction_extent = 1
    for extent in info.extents[n_spatial:]:
        reduction_extent *= extent or 1
    panel_bytes = reduction_extent * cols * dtype_bytes(vector_read.source.dtype)
    return _TilePlan(col, cols, row if rows > 1 else None, rows, chunk, panel_bytes)


def _tiled_reduction(sch: s_tir.Schedule, name: str) -> None:
    info = BlockInfo(sch, name)
    plan = _tile_plan(info)
    if plan is None:
        raise ValueError("block does not fit the tiled rule")
    block = sch.get_sblock(name)
    inline_padding(sch, block)
    loops = list(sch.get_loops(block))
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
    fuse_epilogue(sch, write_back, outer_spatial[-1])
    parallelize(sch, outer_spatial)
    sch.vectorize(col_lanes)
    sch.unroll(col_lanes_outer)
    for loop in tile_loops:
        sch.unroll(loop)
    sch.decompose_reduction(block, reduction[0])  # after parallel: the other order is rejected
