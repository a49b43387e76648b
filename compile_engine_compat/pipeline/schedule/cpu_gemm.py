"""The packed GEMM rule: matmul, dense, batch_matmul and conv2d as register-tiled GEMMs.

:func:`gemm_plan` decides whether a block is a float product-sum of two inputs the rule fits and
where to cut it; :func:`packed_gemm` packs one operand into column panels, cache-blocks the
reduction, register-tiles the rest and runs blocks of tiles in parallel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tvm import s_tir, tirx
from tvm.tirx import IndexMap

from compile_engine_compat.pipeline.schedule.blocks import (
    RULE_ERRORS,
    BlockInfo,
    Isa,
    contains,
    dtype_bytes,
    fuse_epilogue,
    parallelize,
    plain_index_vars,
    region_vars,
)
from compile_engine_compat.runtime.threads import kernel_threads

__all__ = [
    "LAYOUT_FREE_ATTR",
    "LAYOUT_REWRITE_PREPROC",
    "GemmPlan",
    "gemm_plan",
    "mark_weight_packing",
    "packed_gemm",
]

#: The PrimFunc attribute listing its constant (weight) parameters' indices (TVM's name).
LAYOUT_FREE_ATTR = "layout_free_buffers"
#: The block annotation TVM's ``SplitLayoutRewritePreproc`` moves out of a kernel.
LAYOUT_REWRITE_PREPROC = "meta_schedule.layout_rewrite_preproc"

# Register micro-kernels (rows, vectors): rows x vectors accumulators, plus one register per
# column vector of the packed operand and one broadcast, must fit the register file. Larger
# tiles load fewer operands per multiply-add; the first that divides the extents is taken.
_MICRO_KERNELS = {
    32: (
        (14, 2),
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
        # One vector of columns (16 output channels of a 1x1 conv): rows only.
        (14, 1),
        (8, 1),
        (7, 1),
        (4, 1),
        (2, 1),
    ),
    16: ((6, 2), (4, 3), (4, 2), (3, 3), (2, 3), (7, 1), (2, 2), (4, 1), (2, 1)),
}

# With a symbolic extent (a ``relay.Any()`` batch) the kernel indexes in 64-bit (TVM narrows only
# static indices to 32-bit), and LLVM then keeps more addresses live: the 28-accumulator tile
# (14 rows x 2 vectors) spilled 95 of the inner loop's 281 instructions to the stack. ResNet-18's
# 3x3 convolutions with a symbolic batch ran 1.5-5x slower than the same static kernel (2-vCPU
# AMD EPYC, AVX-512, load ~15); at most this many accumulators (8 x 2) they ran as fast.
_SYMBOLIC_ACCUMULATORS = {32: 20, 16: 12}

# A single row (a matrix-vector product: a classifier's dense layer at batch 1) is bound by
# reading the weights: any number of column vectors per tile, the weights packed at build time
# into panels read front to back (the unpacked [K, N] layout read a column tile per row, one
# page apart: ResNet-18's 512x1000 fc at 16 GB/s).
_VECTOR_KERNELS = ((1, 8), (1, 5), (1, 4), (1, 3), (1, 2), (1, 1))

_PACK_DTYPES = frozenset({"float32", "float64"})
#: Integer product-sums the rule takes too: 8-bit operands widened to 32-bit accumulators (the
#: multiplies are LLVM's widening ones, ``vpmovsxbd``/``vpmulld`` or ``pmaddwd``; exact: no sum
#: is reordered, and integer sums are exact in any order anyway).
_WIDENING = frozenset({("int8", "int32"), ("uint8", "int32")})

# The packed operand's micro-panel (reduction chunk x one column tile) is kept within this many
# bytes so that it stays in L1 while every row tile of the block streams past it.
_PANEL_BYTES = 16 * 1024

# A block of row tiles x column tiles: its accumulators live in one local buffer (a per-thread
# workspace, 64 KB at most), its rows of the other operand stay in L2 across the column tiles.
# 128 rows: matmul 1024² and 2048² ~5% faster than 64; 256 rows and 64 or 256 columns no better.
_BLOCK_ROWS = 128
#: The accumulators of a parallel block whose reduction is chunked stay within this (in L1).
_ACCUMULATOR_BYTES = 32 * 1024

_BLOCK_COLS = 128
#: The packed operand's slab for one block (the whole reduction x the block's columns) is read
#: once per row block: within this many bytes it stays in L2 between them (half of a Zen 5
#: core's 1 MB). ResNet-18's 14x14 3x3 conv (reduction 2,304) so takes 32 columns, not 128,
#: and 98-row blocks share each panel: with :func:`_spread_input_pixels`, its two calls with a
#: residual add took 995 us inside the model instead of 1,433 (2-vCPU AMD EPYC VM).
_WEIGHT_SLAB_BYTES = 512 * 1024

#: Blocks per thread turn below which the block size is cut to share the blocks out evenly.
_MIN_BALANCE = 0.9

_LINE_BYTES = 64
# Pixels this many bytes apart (or a multiple) share a sixteenth of the L1's sets or fewer.
_CONFLICT_STRIDE_BYTES = 256


@dataclass(frozen=True)
class GemmPlan:
    """Where the packed rule cuts a block: loop indices (into the block's loops) and factors."""

    packed: int  # index of the packed operand in the block's reads
    col: int  # vectorized spatial loop: an axis of the packed operand only
    row: int  # spatial loop of the register tile's rows: an axis of the other operand only
    # Every spatial loop of the other operand only, in loop order: fused into one row loop (a
    # conv's image rows and columns: all its pixels share each weight panel).
    row_axes: tuple[int, ...]
    lanes: int
    vectors: int  # vectors per tile row
    rows: int  # tile rows
    block_cols: int  # column tiles x tile columns of one parallel block
    block_rows: int
    chunk: int | None  # the first reduction loop's chunk (cache blocking), None: not split

    @property
    def cols(self) -> int:
        return self.vectors * self.lanes


def gemm_plan(info: BlockInfo, isa: Isa) -> GemmPlan | None:
    """Plan the packed rule, or None when the block is not a float product-sum it fits.

    It needs static extents, spatial loops outside the reduction loops, exactly two inputs, and a
    spatial axis (the columns) that indexes one input (the packed operand, every index a plain
    loop variable) but not the other: one vector of packed columns then multiplies one broadcast
    scalar of the other input. The tile rows are a spatial axis of the other input only. A
    symbolic extent is taken only on an axis of the other input only (a ``relay.Any()`` batch):
    it stays an outer parallel loop, and the rows are the static axes.
    """
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial == 0 or any(info.spatial[n_spatial:]) or None in info.extents[n_spatial:]:
        return None
    reads, writes = list(info.block.reads), list(info.block.writes)
    if len(reads) != 2 or len(writes) != 1:
        return None
    dtype = str(writes[0].source.dtype)
    if not all(_packable(str(r.source.dtype), dtype) for r in reads):
        return None
    out_vars = region_vars(writes[0])
    best: tuple[tuple[bool, int], GemmPlan] | None = None
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


def _packable(read: str, out: str) -> bool:
    """Whether a read of dtype ``read`` summed into ``out`` fits the rule (same float, or 8-bit
    integers widened to int32)."""
    return (read == out and out in _PACK_DTYPES) or (read, out) in _WIDENING


def _plan_packing(info: BlockInfo, isa: Isa, packed: int, n_spatial: int) -> GemmPlan | None:
    """The plan that packs ``info.block.reads[packed]``, or None when that read does not fit."""
    reads = list(info.block.reads)
    b_region, a_region = reads[packed], reads[1 - packed]
    b_index = plain_index_vars(b_region)
    if b_index is None:
        return None
    a_vars = region_vars(a_region)

    def loop_of(var: tirx.Var) -> int:
        return next(i for i, v in enumerate(info.vars) if v.same_as(var))

    b_loops = [loop_of(var) for var in b_index]
    spatial_b = [i for i in b_loops if i < n_spatial and not contains(a_vars, info.vars[i])]
    a_only = [i for i in range(n_spatial) if contains(a_vars, info.vars[i]) and i not in b_loops]
    symbolic = [i for i in range(n_spatial) if info.extents[i] is None]
    if any(i not in a_only for i in symbolic):
        return None  # a symbolic column or shared axis: no static tiles
    spatial_a = [i for i in a_only if i not in symbolic]
    if not spatial_b or not spatial_a:
        return None
    dtype = b_region.source.dtype
    col = spatial_b[-1]
    col_extent = info.extents[col]
    assert col_extent is not None  # static: checked by the caller
    # The tile's rows: every axis of the other operand only, fused (the pixels of a conv's
    # output, whatever its height and width; the batch and length axes of an encoder's
    # [128, 1, 256] activations).
    row = spatial_a[-1]
    row_extent = 1
    for i in spatial_a:
        row_extent *= info.extents[i] or 1
    # Full vectors first; half-width ones for columns no full vector divides (24 output
    # channels: three 8-lane vectors where 16 lanes fit none).
    full = isa.lanes(info.block.writes[0].source.dtype)  # the accumulators' lanes
    # Tiles within one row of the innermost axis first (a tile straddling two rows of a conv's
    # image reads pixels from two rows: 128-channel 28x28 convs ran 30% slower so).
    inner_extent = info.extents[row] or 1
    micro_kernels = _VECTOR_KERNELS if row_extent == 1 else _MICRO_KERNELS[isa.registers]
    if symbolic:
        most = _SYMBOLIC_ACCUMULATORS[isa.registers]
        micro_kernels = tuple((r, v) for r, v in micro_kernels if r * v <= most)
    kernel = next(
        (
            (rows, vectors, lanes)
            for within in (inner_extent, row_extent)
            for lanes in (full, full // 2)
            if lanes >= 4 or lanes == full
            for rows, vectors in micro_kernels
            if col_extent % (vectors * lanes) == 0 and within % rows == 0
        ),
        None,
    )
    if kernel is None:
        return None
    rows, vectors, lanes = kernel
    cols = vectors * lanes
    reduction = [e or 1 for e in info.extents[n_spatial:]]
    inner_reduction = 1
    for extent in reduction[1:]:
        inner_reduction *= extent
    item = dtype_bytes(dtype)
    chunk = None
    if reduction[0] * inner_reduction * cols * item > _PANEL_BYTES:
        fits = [
            c
            for c in range(8, reduction[0])
            if reduction[0] % c == 0 and c * inner_reduction * cols * item <= _PANEL_BYTES
        ]
        chunk = max(fits) if fits else None
    block_cols, block_rows = _balanced_blocks(
        (col_extent, cols, _block_cols_limit(reduction, item)),
        (row_extent, rows, _runs([info.extents[i] or 1 for i in spatial_a])),
        item,
        chunk,
        _other_blocks(info, n_spatial, (*spatial_a, col)),
    )
    return GemmPlan(
        packed=packed,
        col=col,
        row=row,
        row_axes=tuple(spatial_a),
        lanes=lanes,
        vectors=vectors,
        rows=rows,
        block_cols=block_cols,
        block_rows=block_rows,
        chunk=chunk,
    )


def _runs(extents: list[int]) -> tuple[int, ...]:
    """The lengths of the runs of the fused row loop: the products of each suffix of its axes'
    ``extents`` but the whole (a conv's N x H x W pixels: one image row W, one image H x W)."""
    return tuple(math.prod(extents[i:]) for i in range(1, len(extents)))


def _other_blocks(info: BlockInfo, n_spatial: int, cut: tuple[int, ...]) -> int:
    """The parallel iterations of the spatial loops that are neither rows nor columns."""
    return math.prod(info.extents[i] or 1 for i in range(n_spatial) if i not in cut)


def _balanced_blocks(
    col: tuple[int, int, int],
    row: tuple[int, int, tuple[int, ...]],
    item: int,
    chunk: int | None,
    other: int,
) -> tuple[int, int]:
    """The block's columns and rows: the largest block (then the widest) whose blocks share out
    evenly over the kernel threads, at least :data:`_MIN_BALANCE` of the threads' turns busy
    (the largest of all when none does).

    ``col`` is (extent, tile, limit), ``row`` (extent, tile, runs: see :func:`_block_sizes`).
    Few blocks share out badly: MobileNetV2's 960 -> 320 1x1 conv at 7x7 made 5 blocks of 64
    columns, 3 turns on one thread for 2 on the other; 10 blocks of 32 columns keep both busy
    (the model ran 2% faster).
    The split depends on :func:`~compile_engine_compat.runtime.threads.kernel_threads`: a kernel
    from the persistent cache built with another thread count gives the same results, shared out
    less evenly.
    """
    threads = kernel_threads()
    col_extent, col_tile, col_limit = col
    row_extent, row_tile, runs = row
    sizes = [
        (cols, rows)
        for cols in _block_sizes(col_extent, col_tile, col_limit)
        for rows in _block_sizes(row_extent, row_tile, _block_rows_limit(cols, item, chunk), runs)
    ]

    def score(size: tuple[int, int]) -> tuple[float, int, int]:
        cols, rows = size
        blocks = other * (col_extent // cols) * (row_extent // rows)
        balance = blocks / (threads * math.ceil(blocks / threads))
        return min(balance, _MIN_BALANCE), cols * rows, cols

    return max(sizes, key=score)  # the first of equals, as listed (one tile is always a block)


def _block_cols_limit(reduction: list[int], item: int) -> int:
    """Most columns of a parallel block: its slab of the packed operand stays in L2."""
    return min(_BLOCK_COLS, _WEIGHT_SLAB_BYTES // (math.prod(reduction) * item))


def _block_rows_limit(block_cols: int, item: int, chunk: int | None) -> int:
    """Most rows of a parallel block: when the reduction is chunked, the block's accumulators
    are reloaded once per chunk and must stay in L1 (a conv's 112 x 128 block spilled to L2:
    128-channel 28x28 convs ran at 89 GFLOP/s, 164 with 64 rows)."""
    if chunk is None:
        return _BLOCK_ROWS
    return max(1, min(_BLOCK_ROWS, _ACCUMULATOR_BYTES // (block_cols * item)))


def _block_sizes(extent: int, tile: int, limit: int, runs: tuple[int, ...] = ()) -> list[int]:
    """The multiples of ``tile`` dividing ``extent`` and at most ``limit`` (``tile`` at least)
    that hold whole runs of each length in ``runs`` or lie within one (a block of a conv's fused
    N x H x W pixels covers whole image rows or part of one, and whole images or part of one:
    its output region is then a box, which the epilogue computed per block needs). A block
    that held whole rows but straddled two images (112 of 14 x 14 pixels at batch 4) left part
    of its output unwritten, so the rule was dropped and the conv ran unscheduled, 60x slower.
    """
    count = extent // tile
    sizes = [
        n * tile
        for n in range(2, count + 1)
        if count % n == 0
        and n * tile <= limit
        and all(n * tile % run == 0 or run % (n * tile) == 0 for run in runs)
    ]
    return [tile, *sizes]


def packed_gemm(sch: s_tir.Schedule, name: str, plan: GemmPlan) -> None:
    """Pack one operand into column panels, cache-block, register-tile, run blocks in parallel.

    The packed operand is copied into ``[..., col // cols, reduction axes..., col % cols]``: the
    micro-kernel then reads one contiguous panel per column tile instead of rows ``stride``
    apart. The loops become::

        parallel: other spatial, row block (of the other operand's axes it spans: see
                  :func:`_block_row_axes`), column block
          chunk of the first reduction loop (serial)
            column tile, row tile
              rest of the reduction (serial, in its order)
                rows (unrolled), vectors (unrolled), lanes (vectorized)
              (unchunked: the tile's write-back and epilogue, here)
            (chunked: the block's write-back and epilogue, here, after the last chunk)

    Each output element still sums its terms in the original order: the reduction loops are only
    split (chunk outside, both serial), never reordered among themselves.
    """
    block = sch.get_sblock(name)
    info = BlockInfo(sch, name)
    n_spatial = info.spatial.index(False)
    if plan.chunk is not None:
        _spread_input_pixels(sch, block, plan, info)
    _pack_operand(sch, block, plan, info)
    loops = list(sch.get_loops(block))
    block_axes = _block_row_axes(plan, info.extents)
    others = [loops[i] for i in range(n_spatial) if i not in (*block_axes, plan.col)]
    row_loops = [loops[i] for i in block_axes]
    if len(row_loops) > 1:  # spatial loops only: reordering them changes no sum
        sch.reorder(*others, *row_loops, loops[plan.col])
    # The block: part of the outermost of these axes, all of the others (whole image rows or
    # images); only the loops within it are fused, so that no index of the block's region
    # divides a sum that holds the block's offset.
    inner_pixels = math.prod(info.extents[i] or 1 for i in block_axes[1:])
    if plan.block_rows % inner_pixels:
        raise ValueError("a block of rows holds part of an image row and more than one")
    row_block, in_block = sch.split(row_loops[0], [None, plan.block_rows // inner_pixels])
    row_loop = sch.fuse(in_block, *row_loops[1:]) if len(row_loops) > 1 else in_block
    row_tile, row_in = sch.split(row_loop, [None, plan.rows])
    col_block, col_tile, col_vec, col_lane = sch.split(
        loops[plan.col], [None, plan.block_cols // plan.cols, plan.vectors, plan.lanes]
    )
    outer = [*others, row_block, col_block]
    reduction = loops[n_spatial:]
    chunked: list[Any] = []
    if plan.chunk is not None:
        chunk_outer, chunk_inner = sch.split(reduction[0], [None, plan.chunk])
        chunked, reduction = [chunk_outer], [chunk_inner, *reduction[1:]]
    sch.reorder(*outer, *chunked, col_tile, row_tile, *reduction, row_in, col_vec, col_lane)
    # Accumulate in a local buffer, columns innermost so a tile row is whole vectors. A chunked
    # reduction returns to each tile once per chunk: the block's accumulators persist in it (the
    # register tile's slice stays in registers across one chunk). An unchunked one finishes a
    # tile in one pass: the tile is written back, epilogue and all, as soon as it is done, and
    # its accumulators start as zeros in registers (MobileNetV2's 16 -> 96 and 24 -> 144 1x1
    # convs: 8-9% faster than zeroing, storing and reloading a 43 KB block per parallel step).
    write_back = sch.cache_write(block, 0, "local")
    _columns_last(sch, block, info, plan)
    per_tile = plan.chunk is None
    try:
        sch.reverse_compute_at(write_back, row_tile if per_tile else outer[-1])
    except s_tir.ScheduleError:  # a tile whose output region is no box: write back per block
        per_tile = False
        sch.reverse_compute_at(write_back, outer[-1])
    fuse_epilogue(sch, write_back, row_tile if per_tile else outer[-1])
    parallelize(sch, outer)
    sch.vectorize(col_lane)
    sch.unroll(col_vec)
    sch.unroll(row_in)
    sch.decompose_reduction(block, reduction[0] if per_tile else (chunked or [col_tile])[0])


def _block_row_axes(plan: GemmPlan, extents: list[int | None]) -> tuple[int, ...]:
    """The row axes a parallel block of rows spans: the shortest suffix of ``plan.row_axes``
    whose pixels are a multiple of the block's rows (the axes outside it stay loops of their
    own, run in parallel with the other spatial loops).

    The rule once fused every row axis and cut blocks from the fused loop: a block's rows were
    then indexed by a ``//`` and a ``%`` of a sum holding the block's offset, which TVM's buffer
    compaction cannot bound by the block, so the block's accumulators (``cache_write``, one
    buffer per parallel iteration) kept most of the whole output: 6.6 MB instead of 24 KB for
    the BERT-base feed-forward GEMM at batch 8 (2.5x slower), 3.2 MB for ResNet-18's stem.
    """
    axes = plan.row_axes
    for start in reversed(range(len(axes))):
        if math.prod(extents[i] or 1 for i in axes[start:]) % plan.block_rows == 0:
            return axes[start:]
    return axes


def _spread_input_pixels(sch: s_tir.Schedule, block: Any, plan: GemmPlan, info: BlockInfo) -> None:
    """Pad the pixel stride of the other operand by one cache line when a block of this function
    writes it (a conv's zero-padded input), its innermost axis is the chunked reduction (NHWC
    channels) and its pixels are a multiple of 256 bytes apart.

    Each step of a register tile reads its rows' pixels one pixel apart, the channel count apart
    in NHWC: 256 channels are 1 KB apart, so a block's pixels fall in 4 of the L1's 64 sets and
    evict each other. One more line per pixel spreads them over every set: ResNet-18's 14x14
    conv in 98-row blocks ran in 615 us, not 1,218 (weights from DRAM, 2-vCPU AMD EPYC VM).
    """
    region = info.block.reads[1 - plan.packed]
    source = region.source
    item = dtype_bytes(str(source.dtype))
    writers = [
        (producer, index)
        for producer in sch.get_producers(block)
        for index, write in enumerate(sch.get(producer).writes)
        if write.source.same_as(source)
    ]
    innermost = region.region[-1].min
    chunked = info.vars[info.spatial.index(False)]
    pixel_elements = source.shape[-1]
    if (
        len(writers) != 1
        or len(region.region) < 2
        or not (isinstance(innermost, tirx.Var) and innermost.same_as(chunked))
        or not isinstance(pixel_elements, tirx.IntImm)
        or int(pixel_elements) * item % _CONFLICT_STRIDE_BYTES
    ):
        return
    writer, index = writers[0]
    line = _LINE_BYTES // item
    sch.storage_align(writer, index, len(region.region) - 2, int(pixel_elements), line)


def _pack_operand(sch: s_tir.Schedule, block: Any, plan: GemmPlan, info: BlockInfo) -> None:
    """Copy the packed operand into column panels in a separate, parallel block."""
    region = info.block.reads[plan.packed]
    index = plain_index_vars(region)
    assert index is not None
    col_var = info.vars[plan.col]
    col_axis = next(i for i, var in enumerate(index) if var.same_as(col_var))
    reduction_vars = [v for v, s in zip(info.vars, info.spatial) if not s]
    # The reduction axes in the order of the block's loops: the micro-kernel then reads the
    # panel front to back (NHWC conv weights are indexed (ry, rx, rc) but summed (rc, ry, rx)).
    reduction_axes = sorted(
        (i for i, var in enumerate(index) if contains(reduction_vars, var)),
        key=lambda i: next(j for j, v in enumerate(info.vars) if v.same_as(index[i])),
    )
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
        except RULE_ERRORS:
            pass
    mark_weight_packing(sch, pack)
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
    parallelize(sch, order)


def mark_weight_packing(sch: s_tir.Schedule, pack: Any) -> None:
    """Mark ``pack`` as a layout rewrite when it copies a weight (a layout-free parameter).

    A whole-module build sets the PrimFunc's ``layout_free_buffers`` (TVM's
    ``AttachAttrLayoutFreeBuffers``: the parameters every call passes a constant) and moves the
    marked copies out of the kernel (``SplitLayoutRewritePreproc``), to run once at build time.
    ``jit``'s kernels have no such attribute: their packing stays in the kernel.
    """
    func = sch.mod[sch.func_working_on]
    free = func.attrs.get(LAYOUT_FREE_ATTR) if func.attrs else None
    node = sch.get(pack)
    if not free or len(node.reads) != 1:
        return
    source = node.reads[0].source
    if any(func.params[int(i)].same_as(source) for i in free):
        sch.annotate(pack, LAYOUT_REWRITE_PREPROC, 1)


def _parallel_copy(sch: s_tir.Schedule, block: Any) -> None:
    loops = sch.get_loops(block)
    parallelize(sch, loops[:-1] if len(loops) > 1 else loops)


def _columns_last(sch: s_tir.Schedule, block: Any, info: BlockInfo, plan: GemmPlan) -> None:
    """Lay the local accumulator out with the column axis innermost (conv2d's NCHW: oc)."""
    index = plain_index_vars(info.block.writes[0])
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
