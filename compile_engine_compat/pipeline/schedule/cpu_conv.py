"""The depthwise convolution rule: channels-last depthwise conv2d as register tiles of pixels.

A depthwise convolution (``groups`` equal to the channels: MobileNet's 3x3 layers) is no GEMM:
each output channel reads its own input channel, so the packed GEMM rule cannot share a packed
operand across output columns. In channels-last layout (NHWC: whole-module builds convert
convolutions to it) the channel axis is contiguous in the input, the weights and the output::

    out[n, h, w, c] = sum(ry, rx) pad[n, h * s + ry, w * s + rx, c] * weight[c, ry, rx, 0]

The rule:

* packs the weights channels-last (``[ry, rx, 1, c]``; a layout rewrite a module build moves out
  of the kernel and does once, see :func:`.cpu_gemm.mark_weight_packing`);
* inlines the zero padding into the reads (a condition on the pixel, the same for every channel
  of a vector), so no padded copy of the input is written and read back;
* computes a register tile of ``rows`` neighbouring pixels of a row by one or two vectors of
  channels, each weight vector loaded once per tile and reused by every pixel of it;
* runs the epilogue (bias, ReLU6, residual add) per tile and the rows of the image in parallel.

Each output still sums its terms in the original (ry, rx) order: no reduction is reordered.

Quantized depthwise convolutions (uint8/int8 data, int8 weights, ``out_dtype="int32"``) take the
same rule: each product widened to int32 as the block says, 16 int32 lanes on AVX-512, and the
requantize epilogue run per tile. Integer sums are exact in any order; the VNNI rule
(:mod:`.cpu_int8`) does not fit them (no reduction over channels to put on ``vpdpbusd``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tvm import s_tir
from tvm.tirx import IndexMap

from compile_engine_compat.pipeline.schedule.blocks import (
    RULE_ERRORS,
    BlockInfo,
    Isa,
    fuse_epilogue,
    parallelize,
    plain_index_vars,
    region_vars,
    static,
)
from compile_engine_compat.pipeline.schedule.cpu_gemm import mark_weight_packing

__all__ = ["DepthwisePlan", "depthwise_conv", "depthwise_plan"]

_FLOAT_DTYPES = frozenset({"float32", "float64"})
# Integer product-sums into int32 (quantized depthwise convolutions: uint8/int8 data, int8
# weights): each product widened to int32 as the block says, summed in int32 vectors.
_INT_READS = frozenset({"int8", "uint8", "int16", "int32"})
# Pixels per register tile, the first dividing the output width: 8 x 2 vectors of accumulators
# and the weight and input vectors fit 32 registers; 7 serves widths of 7, 14, 28, 56.
_ROWS = (8, 7, 6, 4, 2)


@dataclass(frozen=True)
class DepthwisePlan:
    """Where the depthwise rule cuts a block: loop indices into its loops, and the tile."""

    data: int  # index of the input read in the block's reads
    weight: int  # index of the weight read
    row: int  # the spatial loop of the tile's pixels (the output width)
    channel: int  # the spatial loop of the channels (innermost)
    rows: int
    lanes: int
    vectors: int


def depthwise_plan(info: BlockInfo, isa: Isa) -> DepthwisePlan | None:
    """Plan the depthwise rule, or None when the block is not a channels-last depthwise conv.

    The block must be a float product-sum of two reads over static loops (or an 8/16/32-bit
    integer one into int32, exact in any order), spatial loops first,
    whose output's innermost index is a spatial variable (the channels) that both reads use,
    the input with it as its innermost index (plus a reduction variable of extent 1) and the
    weights with every index a plain loop variable.
    """
    n_spatial = info.spatial.index(False) if False in info.spatial else len(info.spatial)
    if n_spatial < 2 or any(info.spatial[n_spatial:]) or None in info.extents:
        return None
    reads, writes = list(info.block.reads), list(info.block.writes)
    if len(reads) != 2 or len(writes) != 1:
        return None
    dtype = str(writes[0].source.dtype)
    read_dtypes = {str(r.source.dtype) for r in reads}
    if not (
        (dtype in _FLOAT_DTYPES and read_dtypes == {dtype})
        or (dtype == "int32" and read_dtypes <= _INT_READS)
    ):
        return None
    out_index = plain_index_vars(writes[0])
    if out_index is None or not out_index:
        return None
    channel_var = out_index[-1]
    channel = _loop_of(info, channel_var)
    if channel is None or channel >= n_spatial:
        return None
    weight = next((i for i, r in enumerate(reads) if plain_index_vars(r) is not None), None)
    if weight is None:
        return None
    data = 1 - weight
    weight_vars = plain_index_vars(reads[weight]) or []
    if not any(v.same_as(channel_var) for v in weight_vars) or not _innermost_uses(
        reads[data], channel_var
    ):
        return None
    # The pixels of a tile: the spatial loop just outside the channels (the output width), used
    # by the input but not by the weights.
    row = channel - 1
    row_var = info.vars[row]
    if any(v.same_as(row_var) for v in weight_vars) or not any(
        v.same_as(row_var) for v in region_vars(reads[data])
    ):
        return None
    lanes = isa.lanes(dtype)
    channels, width = info.extents[channel], info.extents[row]
    assert channels is not None and width is not None  # static: checked above
    vectors = next((v for v in (2, 1) if channels % (v * lanes) == 0), None)
    rows = next((r for r in _ROWS if width % r == 0), None)
    if vectors is None or rows is None:
        return None
    return DepthwisePlan(data, weight, row, channel, rows, lanes, vectors)


def _loop_of(info: BlockInfo, var: Any) -> int | None:
    return next((i for i, v in enumerate(info.vars) if v.same_as(var)), None)


def _innermost_uses(region: Any, var: Any) -> bool:
    """``region``'s innermost index is ``var`` or ``var`` plus other variables (of extent 1)."""
    ranges = list(region.region)
    if not ranges or static(ranges[-1].extent) != 1:
        return False
    index = ranges[-1].min
    return bool(index.same_as(var)) or (
        hasattr(index, "a")
        and hasattr(index, "b")
        and (index.a.same_as(var) or index.b.same_as(var))
    )


def depthwise_conv(sch: s_tir.Schedule, name: str, plan: DepthwisePlan) -> None:
    """Schedule the depthwise conv ``name`` by ``plan`` (see the module doc)."""
    block = sch.get_sblock(name)
    info = BlockInfo(sch, name)
    n_spatial = info.spatial.index(False)
    data = info.block.reads[plan.data].source
    _pack_weights(sch, block, plan)
    for producer in sch.get_producers(block):
        if any(w.source.same_as(data) for w in sch.get(producer).writes):
            try:  # the zero border becomes a condition on the read: no padded copy
                sch.compute_inline(producer)
            except RULE_ERRORS:
                pass
    loops = list(sch.get_loops(block))
    row_out, row_in = sch.split(loops[plan.row], [None, plan.rows])
    chan_out, chan_vec, chan_lane = sch.split(loops[plan.channel], [None, plan.vectors, plan.lanes])
    outer = [loops[i] for i in range(n_spatial) if i not in (plan.row, plan.channel)]
    reduction = loops[n_spatial:]
    sch.reorder(*outer, row_out, chan_out, *reduction, row_in, chan_vec, chan_lane)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, chan_out)
    sch.vectorize(sch.get_loops(write_back)[-1])
    fuse_epilogue(sch, write_back, chan_out)
    parallel = [*outer, row_out]
    parallelize(sch, parallel)
    sch.vectorize(chan_lane)
    sch.unroll(chan_vec)
    sch.unroll(row_in)
    sch.decompose_reduction(block, reduction[0])


def _pack_weights(sch: s_tir.Schedule, block: Any, plan: DepthwisePlan) -> None:
    """Copy the weights channels-last, in their own block (a layout rewrite of a constant)."""
    info = BlockInfo(sch, sch.get(block).name_hint)
    index = plain_index_vars(info.block.reads[plan.weight])
    if index is None:
        raise ValueError("weights indexed by an expression")
    channel_var = info.vars[plan.channel]
    axis = next(i for i, v in enumerate(index) if v.same_as(channel_var))
    if axis == len(index) - 1:
        return  # channels-last already
    order = [i for i in range(len(index)) if i != axis] + [axis]
    pack = sch.cache_read(block, plan.weight, "global")
    sch.transform_layout(
        block,
        ("read", plan.weight),
        IndexMap.from_func(lambda *v: [v[i] for i in order], len(index)),
    )
    for producer in sch.get_producers(pack):
        try:  # a layout transform feeding the weights: the packing copy does it instead
            sch.compute_inline(producer)
        except RULE_ERRORS:
            pass
    mark_weight_packing(sch, pack)
