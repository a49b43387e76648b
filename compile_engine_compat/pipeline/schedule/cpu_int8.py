"""The VNNI rule: uint8 x int8 -> int32 product-sums (quantized conv2d, dense) on ``vpdpbusd``.

AVX-512 VNNI's ``vpdpbusd`` multiplies 4 unsigned bytes by 4 signed bytes and adds the 4 products
to each int32 lane: 64 multiply-adds an instruction, exact (no 16-bit intermediate that saturates,
unlike ``pmaddubsw``). The rule fits a block that sums ``int32(data) * int32(weight)`` where:

* the data is ``uint8`` and the weights ``int8`` (int8 data is shifted to uint8 by the module
  legalization, :mod:`compile_engine_compat.pipeline.int8_compute`; int8 data left as it is
  takes the packed GEMM rule's widening multiplies instead);
* the innermost reduction loop (``k``: a matmul's depth, an NHWC conv's input channels) is the
  data's innermost index, a multiple of 4;
* the columns (a spatial loop indexing the weights only: output channels) are the output's
  innermost axis, a multiple of 16 (or 8, on the 256-bit form);
* every other spatial loop indexes the data only (rows: a conv's pixels) or is an outer loop.

The weights are packed ``[..., col // lanes, other reduction axes..., k // 4, col % lanes, k % 4]``
(one ``vpdpbusd`` operand is 64 contiguous bytes), a layout rewrite that a whole-module build
moves out of the kernel and folds at build time (:mod:`..model.fold`), as the fp32 rules' panels.
The loops become::

    parallel: other spatial, row tile, column tile
      other reduction loops (a conv's kernel rows, columns), k // 4
        rows (unrolled), vectors (unrolled): one vpdpbusd (16 or 8 lanes x 4 products)

the tile's accumulators in registers, its epilogue (bias, requantize) run per tile.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import s_tir
from tvm.script import tirx as T

from compile_engine_compat.pipeline.schedule.blocks import (
    BlockInfo,
    Isa,
    contains,
    fuse_epilogue,
    parallelize,
    plain_index_vars,
    region_vars,
)
from compile_engine_compat.pipeline.schedule.cpu_gemm import mark_weight_packing

__all__ = ["VnniPlan", "dot_intrinsic", "vnni_gemm", "vnni_plan"]

#: Bytes each lane of ``vpdpbusd`` sums.
DOT_DEPTH = 4

# Register tiles (rows, vectors): rows x vectors accumulators, one register per weight vector and
# one broadcast of 4 data bytes within 32 registers. The first whose rows divide the image row
# and whose columns divide the output channels is taken; an image row none divides (11, 13, 9
# pixels) gets :func:`_odd_row_tile`.
_TILES = (
    (6, 4),
    (8, 3),
    (7, 3),
    (12, 2),
    (14, 2),
    (4, 4),
    (6, 2),
    (7, 2),
    (8, 2),
    (4, 2),
    (14, 1),
    (8, 1),
    (7, 1),
    (4, 1),
    (2, 2),
    (2, 1),
)
# One row (dense at batch 1): bound by reading the weights; more columns per tile.
_VECTOR_TILES = ((1, 8), (1, 5), (1, 4), (1, 3), (1, 2), (1, 1))


@dataclass(frozen=True)
class VnniPlan:
    """Where the VNNI rule cuts a block: loop indices into its loops, the tile and lanes."""

    data: int  # index of the uint8 read
    weight: int  # index of the int8 read
    col: int  # spatial loop of the columns (output channels)
    row_axes: tuple[int, ...]  # spatial loops of the data only; the tile's rows: the last
    k: int  # innermost reduction loop, the data's innermost index
    rows: int
    vectors: int
    lanes: int  # 16 (512-bit vpdpbusd) or 8 (256-bit); 4 (128-bit pmaddubsw) too
    vnni: bool = True  # vpdpbusd; False: the exact pmaddubsw split (module doc)

    @property
    def rule_name(self) -> str:
        return "vnni_gemm" if self.vnni else "pmaddubs_gemm"


def vnni_plan(info: BlockInfo, isa: Isa) -> VnniPlan | None:
    """Plan the VNNI rule, or None when the block or the target does not fit it (module doc).

    Targets without VNNI but with ``pmaddubsw`` (AVX-512BW, AVX2, SSSE3) get the same plan on
    the exact split of :func:`dot_intrinsic` (``vnni`` False).
    """
    bits = isa.dot_bits or isa.madd_bits
    if not bits:
        return None
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial == 0 or any(info.spatial[n_spatial:]) or None in info.extents:
        return None
    reads, writes = list(info.block.reads), list(info.block.writes)
    if len(reads) != 2 or len(writes) != 1 or str(writes[0].source.dtype) != "int32":
        return None
    dtypes = [str(r.source.dtype) for r in reads]
    if sorted(dtypes) != ["int8", "uint8"]:
        return None
    data, weight = dtypes.index("uint8"), dtypes.index("int8")
    w_index = plain_index_vars(reads[weight])
    out_index = plain_index_vars(writes[0])
    if w_index is None or not out_index:
        return None
    data_vars = region_vars(reads[data])
    col = _loop_of(info, out_index[-1])
    k = len(info.vars) - 1
    innermost = reads[data].region[-1].min
    if (
        col is None
        or contains(data_vars, info.vars[col])
        or not contains(w_index, info.vars[col])
        or not innermost.same_as(info.vars[k])
        or not contains(w_index, info.vars[k])
    ):
        return None
    row_axes = tuple(
        i
        for i in range(n_spatial)
        if contains(data_vars, info.vars[i]) and not contains(w_index, info.vars[i])
    )
    extents = [e or 1 for e in info.extents]
    if extents[k] % DOT_DEPTH:
        return None
    widths = (16, 8) if isa.dot_bits else (16, 8, 4)
    lanes = next((n for n in widths if n * 32 <= bits and extents[col] % n == 0), None)
    if lanes is None:
        return None
    inner = extents[row_axes[-1]] if row_axes else 1
    tiles = _VECTOR_TILES if inner == 1 else _TILES
    tile = next(
        (
            (rows, vectors)
            for rows, vectors in tiles
            if inner % rows == 0 and extents[col] % (vectors * lanes) == 0
        ),
        None,
    )
    if tile is None and inner > 1:
        tile = _odd_row_tile(inner, extents[col] // lanes, isa.registers)
    if tile is None:
        return None
    return VnniPlan(data, weight, col, row_axes, k, tile[0], tile[1], lanes, bool(isa.dot_bits))


def _odd_row_tile(width: int, vectors: int, registers: int) -> tuple[int, int] | None:
    """The tile of an image row that no tile of ``_TILES`` divides: its rows a divisor of
    ``width`` (the whole row when it is prime: 11, 13, 17 pixels), the most accumulators that
    fit the ``registers`` beside the weight vectors and the data broadcast; None when the
    column vectors (``vectors`` of them) fit no tile."""
    fits = [
        (rows * wide, rows, wide)
        for rows in range(1, width + 1)
        if width % rows == 0
        for wide in (4, 3, 2, 1)
        if vectors % wide == 0 and rows * wide + wide + 1 <= registers
    ]
    return max(fits)[1:] if fits else None


def _loop_of(info: BlockInfo, var: Any) -> int | None:
    return next((i for i, v in enumerate(info.vars) if v.same_as(var)), None)


def vnni_gemm(sch: s_tir.Schedule, name: str, plan: VnniPlan) -> None:
    """Schedule the block ``name`` by ``plan`` on ``vpdpbusd`` (see the module doc)."""
    block = sch.get_sblock(name)
    info = BlockInfo(sch, name)
    n_spatial = info.spatial.index(False)
    _pack_weights(sch, block, plan, info)
    loops = list(sch.get_loops(block))
    # The tile's rows are the innermost row axis (an image row, a matmul's rows), the other row
    # axes stay outer loops: a tile row's binding through a fused row loop, ``(fused * rows +
    # row) // width``, is one ``tensorize`` cannot divide into the intrinsic's part and the rest.
    row_axes = plan.row_axes
    others = [loops[i] for i in range(n_spatial) if i not in (*row_axes[-1:], plan.col)]
    row_parts = sch.split(loops[row_axes[-1]], [None, plan.rows]) if row_axes else []
    col_out, col_vec, col_lane = sch.split(loops[plan.col], [None, plan.vectors, plan.lanes])
    k_out, k_in = sch.split(loops[plan.k], [None, DOT_DEPTH])
    reduction = [loops[i] for i in range(n_spatial, len(loops)) if i != plan.k]
    outer = [*others, *row_parts[:1], col_out]
    tile = [*row_parts[1:], col_vec]
    sch.reorder(*outer, *reduction, k_out, *tile, col_lane, k_in)  # spatial loops only moved
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, outer[-1])
    fuse_epilogue(sch, write_back, outer[-1])
    parallelize(sch, outer)  # before decompose_reduction: ``parallel`` refuses the update block
    init = sch.decompose_reduction(block, (reduction or [k_out])[0])
    sch.vectorize(sch.get_loops(init)[-1])
    sch.tensorize(col_lane, dot_intrinsic(plan.lanes, plan.vnni))
    for loop in tile:
        sch.unroll(loop)


def _pack_weights(sch: s_tir.Schedule, block: Any, plan: VnniPlan, info: BlockInfo) -> None:
    """Copy the weights into ``vpdpbusd`` operands (module doc), in their own parallel block."""
    index = plain_index_vars(info.block.reads[plan.weight])
    assert index is not None  # checked by the plan

    def axis_of(loop: int) -> int:
        return next(i for i, var in enumerate(index) if var.same_as(info.vars[loop]))

    col_axis, k_axis = axis_of(plan.col), axis_of(plan.k)
    reduction_vars = [v for v, s in zip(info.vars, info.spatial) if not s]
    reduction_axes = sorted(
        (i for i, var in enumerate(index) if contains(reduction_vars, var) and i != k_axis),
        key=lambda i: next(j for j, v in enumerate(info.vars) if v.same_as(index[i])),
    )
    other_axes = [
        i for i in range(len(index)) if i not in (col_axis, k_axis) and i not in reduction_axes
    ]
    lanes = plan.lanes

    def operands(*axes: Any) -> list[Any]:
        return [
            *(axes[i] for i in other_axes),
            axes[col_axis] // lanes,
            *(axes[i] for i in reduction_axes),
            axes[k_axis] // DOT_DEPTH,
            axes[col_axis] % lanes,
            axes[k_axis] % DOT_DEPTH,
        ]

    pack = sch.cache_read(block, plan.weight, "global")
    sch.transform_layout(block, ("read", plan.weight), operands)  # int64 indices, as the buffer
    for producer in sch.get_producers(pack):
        try:  # a transpose feeding the weights (dense): the packing copy does it instead
            sch.compute_inline(producer)
        except (RuntimeError, ValueError):
            pass
    mark_weight_packing(sch, pack)
    loops = sch.get_loops(pack)
    parallelize(sch, loops[:1])


@functools.cache
def dot_intrinsic(lanes: int, vnni: bool = True) -> str:
    """The name of the registered tensor intrinsic: ``lanes`` int32 lanes, each adding 4 u8 x i8
    products, on ``vpdpbusd`` or (``vnni`` False) on ``pmaddubsw`` exactly (registered here on
    first use).

    TVM's ``VNNI_DOT_16x4_INTRIN`` (``tvm.s_tir.tensor_intrin.x86``) is the same instruction with
    its accumulators in a global buffer; these accumulate in a ``local`` one (the register tile)
    and also come in the 256-bit form (8 lanes: 1,000 classes are no multiple of 16).
    ``pmaddubsw`` sums two u8 x i8 products into an int16 that saturates (2 x 255 x -128 does
    not fit): TVM 0.19's ``AVX512_DOT_16x4_INTRIN`` so lost exactness. Here the data bytes are
    split into nibbles, ``x = 16 * hi + lo``: each nibble's pair sums stay within int16 (at most
    2 x 15 x 128), and ``pmaddwd`` adds them up into int32 as ``16 * hi_sums + lo_sums``.
    """
    kind = "vnni" if vnni else "pmaddubs"
    name = f"compile_engine_compat.{kind}_dot_{lanes}x4"
    desc = _dot_description(lanes)
    impl = _vnni_dot(lanes) if vnni else _split_madd_dot(lanes)
    s_tir.TensorIntrin.register(name, desc, impl, override=True)
    return name


def _dot_description(lanes: int) -> Any:
    @T.prim_func(s_tir=True)
    def desc(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, scope="local")
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            for i, k in T.grid(lanes, 4):
                with T.sblock("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")

    return desc


def _vnni_dot(lanes: int) -> Any:
    """The ``vpdpbusd`` implementation of a ``lanes`` x 4 dot product."""
    vector = f"int32x{lanes}"
    intrinsic = f"llvm.x86.avx512.vpdpbusd.{lanes * 32}"
    # LLVM 21 retyped the byte operands from vectors of i32 to vectors of i8 (TVM 0.27's own
    # VNNI_DOT_16x4_INTRIN still passes i32 and fails LLVM 22's verifier).
    operand = f"int8x{lanes * 4}" if tvm.target.codegen.llvm_version_major() >= 21 else vector

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, scope="local")
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            four = T.reinterpret(A.vload([0], "uint8x4"), dtype="int32")
            C[T.ramp(T.int32(0), 1, lanes)] = T.call_llvm_pure_intrin(
                T.llvm_lookup_intrinsic_id(intrinsic),
                C.vload([0], dtype=vector),
                T.reinterpret(T.broadcast(four, lanes), dtype=operand),
                T.reinterpret(B.vload([0, 0], dtype=f"int8x{lanes * 4}"), dtype=operand),
                dtype=vector,
            )

    return impl


#: lanes -> (pmaddubsw, pmaddwd) LLVM intrinsics of that width.
_MADD = {
    16: ("llvm.x86.avx512.pmaddubs.w.512", "llvm.x86.avx512.pmaddw.d.512"),
    8: ("llvm.x86.avx2.pmadd.ub.sw", "llvm.x86.avx2.pmadd.wd"),
    4: ("llvm.x86.ssse3.pmadd.ub.sw.128", "llvm.x86.sse2.pmadd.wd"),
}


def _split_madd_dot(lanes: int) -> Any:
    """The exact ``pmaddubsw`` implementation (nibbles, see :func:`dot_intrinsic`)."""
    madd_bytes, madd_words = _MADD[lanes]
    vector, nbytes, words = f"int32x{lanes}", f"int8x{lanes * 4}", f"int16x{lanes * 2}"

    @T.prim_func(s_tir=True)
    def impl(a: T.handle, b: T.handle, c: T.handle) -> None:
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1, scope="local")
        with T.sblock("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            four = T.broadcast(T.reinterpret(A.vload([0], "uint8x4"), dtype="int32"), lanes)
            nibbles = T.broadcast(0x0F0F0F0F, lanes)
            low = T.reinterpret(T.bitwise_and(four, nibbles), dtype=nbytes)
            shifted = T.shift_right(four, T.broadcast(4, lanes))
            high = T.reinterpret(T.bitwise_and(shifted, nibbles), dtype=nbytes)
            weights = B.vload([0, 0], dtype=nbytes)
            C[T.ramp(T.int32(0), 1, lanes)] = (
                C.vload([0], dtype=vector)
                + T.call_llvm_pure_intrin(
                    T.llvm_lookup_intrinsic_id(madd_words),
                    T.call_llvm_pure_intrin(
                        T.llvm_lookup_intrinsic_id(madd_bytes), low, weights, dtype=words
                    ),
                    T.broadcast(T.int16(1), lanes * 2),
                    dtype=vector,
                )
                + T.call_llvm_pure_intrin(
                    T.llvm_lookup_intrinsic_id(madd_words),
                    T.call_llvm_pure_intrin(
                        T.llvm_lookup_intrinsic_id(madd_bytes), high, weights, dtype=words
                    ),
                    T.broadcast(T.int16(16), lanes * 2),
                    dtype=vector,
                )
            )

    return impl
