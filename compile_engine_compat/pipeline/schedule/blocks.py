"""What the CPU rules read from a block: iteration kinds, extents, accesses, the vector unit.

Shared by the rules of :mod:`.cpu_rules` and :mod:`.cpu_gemm` and by the driver's coverage check
(:func:`domain_size`, :func:`loop_iterations`). Nothing here changes a schedule except
:func:`fuse_epilogue`, the one step both register-tiling rules end with.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
import tvm_ffi
from tvm import s_tir, tirx

__all__ = [
    "RULE_ERRORS",
    "BlockInfo",
    "Isa",
    "NamedRule",
    "Rule",
    "calls_a_library",
    "contains",
    "divisor",
    "domain_size",
    "dtype_bytes",
    "fuse_epilogue",
    "inline_padding",
    "innermost_is",
    "is_padding",
    "loop_iterations",
    "parallelize",
    "plain_index_vars",
    "region_vars",
    "same_count",
    "single_threaded",
    "static",
    "target_isa",
]

Rule = Callable[[s_tir.Schedule, str], None]

# A rule and its name, the name recorded in RuleOutcome.rules when the rule is kept.
NamedRule = tuple[str, Rule]

# ScheduleError and TVM's FFI errors are RuntimeError/ValueError/TypeError/IndexError subclasses.
RULE_ERRORS = (RuntimeError, ValueError, TypeError, IndexError)

_SINGLE_THREADED = contextvars.ContextVar("single_threaded", default=False)


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Within the block, :func:`parallelize` only fuses: the rules' kernels run on one thread."""
    token = _SINGLE_THREADED.set(True)
    try:
        yield
    finally:
        _SINGLE_THREADED.reset(token)


def parallelize(sch: s_tir.Schedule, loops: Sequence[Any]) -> Any:
    """Fuse ``loops`` into one and run it on the thread pool (on one thread within
    :func:`single_threaded`); return the fused loop."""
    fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
    if not _SINGLE_THREADED.get():
        sch.parallel(fused)
    return fused


# Vector widths of the epilogue a register tile computes per tile: the first dividing its extent.
_EPILOGUE_VECTOR_EXTENTS = (16, 8, 4)

# Calls LLVM turns into vector instructions on x86 (no library call): blocks with only these
# (and arithmetic) get the full vector width.
VECTOR_NATIVE_CALLS = frozenset(
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


class BlockInfo:
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
        self.extents = [static(loop.extent) for loop in loop_nodes]

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
            shape = [static(dim) for dim in region.source.shape]
            if shape != self.extents or len(ranges) != len(self.vars):
                return False
            for rng, var in zip(ranges, self.vars):
                if static(rng.extent) != 1 or not rng.min.same_as(var):
                    return False
        return True

    def work(self) -> int | None:
        total = 1
        for extent in self.extents:
            if extent is None:
                return None
            total *= extent
        return total


def calls_a_library(block: Any) -> bool:
    """Whether ``block``'s body calls a function LLVM computes per lane (a libm call)."""
    found: list[str] = []

    def on_call(call: Any) -> None:
        name = getattr(call.op, "name", None)
        if name not in VECTOR_NATIVE_CALLS:
            found.append(str(name))

    tvm_ffi.structural_walk(block.body, [(tvm.ir.Call, on_call)])
    return bool(found)


def is_padding(block: Any) -> bool:
    """Whether ``block`` only pads: ``out[...] = if_then_else(inside, in[...], constant)``."""
    body = block.body
    value = getattr(body, "value", None)
    if not isinstance(body, tirx.BufferStore) or not isinstance(value, tvm.ir.Call):
        return False
    # The op is "tirx.if_then_else" or, as TVM 0.27 names it, "prim.if_then_else".
    if not str(getattr(value.op, "name", "")).endswith(".if_then_else") or len(value.args) != 3:
        return False
    _, inside, border = value.args
    return isinstance(inside, tvm.ir.TensorLoad) and isinstance(
        border, (tirx.FloatImm, tirx.IntImm)
    )


def inline_padding(sch: s_tir.Schedule, block: Any) -> None:
    """Inline the pads feeding ``block`` into its reads: the border becomes a condition on the
    read, so no padded copy of the input is written and read back (a pooling window's pad: ~60%
    of a 3x3 stride-2 max pool's time on 112x112x64)."""
    for producer in sch.get_producers(block):
        if is_padding(sch.get(producer)):
            try:
                sch.compute_inline(producer)
            except RULE_ERRORS:
                pass


def static(expr: Any) -> int | None:
    return int(expr.value) if isinstance(expr, tirx.IntImm) else None


def dtype_bytes(dtype: Any) -> int:
    return max(1, tvm.runtime.DataType(str(dtype)).bits // 8)


def fuse_epilogue(sch: s_tir.Schedule, write_back: Any, at: Any) -> bool:
    """Compute a single spatial consumer of the tile (bias, relu, ...) per tile, vectorized.

    The consumer then reads the tile's accumulators directly: the copy of the tile into the
    intermediate buffer (``write_back``) is inlined into it, so the intermediate (a whole
    output's size) is never written nor read back. Returns True when ``write_back`` is gone.
    """
    consumers = sch.get_consumers(write_back)
    if len(consumers) != 1:
        return False
    epilogue = consumers[0]
    node = sch.get(epilogue)
    if not all(iv.iter_type == tirx.IterVar.DataPar for iv in node.iter_vars):
        return False
    # Only a consumer with one iteration per produced element: reverse_compute_at runs the
    # consumer over the tile's region only, so a larger one (the zero border of the next conv's
    # pad) would keep rows no loop writes, read uninitialized on the next call (issue found with
    # a torch.export ResNet block: 3.4% of outputs wrong on the first call).
    if not same_count(domain_size(node), domain_size(sch.get(write_back))):
        return False
    try:
        sch.reverse_compute_at(epilogue, at)
    except s_tir.ScheduleError:
        return False  # it reads outside the tile (e.g. a transpose): keep it as its own stage
    try:
        sch.compute_inline(write_back)
        inlined = True
    except RULE_ERRORS:
        inlined = False
    inner = sch.get_loops(epilogue)[-1]
    width = divisor(static(sch.get(inner).extent), _EPILOGUE_VECTOR_EXTENTS)
    if width is not None:
        if static(sch.get(inner).extent) != width:
            inner = sch.split(inner, [None, width])[1]
        sch.vectorize(inner)
    return inlined


def domain_size(block: Any) -> Any:
    """How many iterations a block's domain holds (a PrimExpr: shapes may be symbolic)."""
    size: Any = tirx.const(1, "int64")
    for iv in block.iter_vars:
        size = size * tirx.Cast("int64", iv.dom.extent)
    return size


def loop_iterations(sch: s_tir.Schedule, block: Any) -> Any:
    """How many times the loops around ``block`` run it (a PrimExpr)."""
    size: Any = tirx.const(1, "int64")
    for loop in sch.get_loops(block):
        size = size * tirx.Cast("int64", sch.get(loop).extent)
    return size


def same_count(first: Any, second: Any) -> bool:
    """Provably equal iteration counts (symbolic ones included)."""
    return bool(tvm.sym.Analyzer().can_prove_equal(first, second))


def innermost_is(region: Any, var: tirx.Var, exact: bool = False) -> bool:
    """True when ``region``'s innermost index is ``var`` (``exact``) or ``var`` plus other vars."""
    ranges = list(region.region)
    if not ranges or static(ranges[-1].extent) != 1:
        return False
    index = ranges[-1].min
    if exact:
        return bool(index.same_as(var))
    if isinstance(index, tirx.Var):
        return bool(index.same_as(var))
    # var + reduction var (a convolution window): unit stride in var.
    return isinstance(index, tirx.Add) and any(side.same_as(var) for side in (index.a, index.b))


def region_vars(region: Any) -> list[tirx.Var]:
    found: list[tirx.Var] = []
    for rng in region.region:
        found.extend(tvm.tirx.analysis.undefined_vars(rng.min, []))
    return found


def plain_index_vars(region: Any) -> list[tirx.Var] | None:
    """The loop variables indexing ``region`` one per axis, or None for any other index."""
    found: list[tirx.Var] = []
    for rng in region.region:
        if static(rng.extent) != 1 or not isinstance(rng.min, tirx.Var):
            return None
        if contains(found, rng.min):
            return None
        found.append(rng.min)
    return found


def contains(variables: Sequence[tirx.Var], var: tirx.Var) -> bool:
    return any(v.same_as(var) for v in variables)


def divisor(extent: int | None, choices: Sequence[int]) -> int | None:
    if extent is None:
        return None
    return next((c for c in choices if extent % c == 0 and extent >= c), None)


@dataclass(frozen=True)
class Isa:
    """The target's vector unit as the rules see it.

    Attributes
    ----------
    vector_bits : int
        Width of the vectors LLVM will emit for the target (what it prefers, not the widest it
        has: with AVX-512 LLVM splits 512-bit vectors unless ``-prefer-256-bit`` is cleared).
    registers : int
        Vector registers: how many accumulators a register tile can hold.
    dot_bits : int
        Widest VNNI ``vpdpbusd`` (u8 x i8 dot products of 4 into int32) the target has: 512
        (AVX-512 VNNI with AVX-512VL, which also gives the 256-bit form), 256 (AVX-VNNI), 0.
    madd_bits : int
        Widest ``pmaddubsw`` (u8 x i8 products summed in pairs into int16): 512 (AVX-512BW),
        256 (AVX2), 128 (SSSE3), 0.
    """

    vector_bits: int
    registers: int
    dot_bits: int = 0
    madd_bits: int = 0

    def lanes(self, dtype: Any) -> int:
        return max(1, self.vector_bits // (dtype_bytes(dtype) * 8))


_SSE = Isa(128, 16)


# Per Target object: the feature queries cost ~0.1 ms, on every cold lowering. Targets are few
# and long-lived (host_target hands out one object per target), so the memo stays small.
@functools.lru_cache(maxsize=64)
def target_isa(target: tvm.target.Target) -> Isa:
    """The vector unit of an ``llvm`` target, from its CPU features (generic x86-64: SSE2).

    ``llvm_get_vector_width`` is not used: on TVM 0.27 it answers 512 for every x86 target,
    generic ``llvm`` included.
    """
    has = tvm.target.codegen.llvm_cpu_has_features
    try:
        if has(["avx512f"], target):
            # LLVM splits 512-bit vectors on CPUs that prefer 256 bits (rocketlake, icelake,
            # skylake-avx512...) unless the user cleared the preference; AMD's Zen 4 and 5 have
            # no such preference, and 256-bit kernels there ran at half of what the CPU does.
            # 32 registers either way.
            bits = 256 if has(["prefer-256-bit"], target) else 512
            dot = 512 if has(["avx512vnni", "avx512vl"], target) else 0
            return Isa(bits, 32, dot, 512 if has(["avx512bw"], target) else 256)
        if has(["avx"], target):
            madd = 256 if has(["avx2"], target) else 128 if has(["ssse3"], target) else 0
            return Isa(256, 16, 256 if has(["avxvnni"], target) else 0, madd)
        if has(["ssse3"], target):
            return Isa(128, 16, 0, 128)
    except RULE_ERRORS:
        pass  # not an x86 LLVM triple: assume 128-bit vectors, the common floor
    return _SSE
