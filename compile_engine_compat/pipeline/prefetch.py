"""Build: prefetch the next chunk of packed weights while a register tile's chunk is computed.

Inside a model, a convolution's packed weights come from DRAM on every run (ResNet-18's 45 MB do
not fit a 32 MB L3). The packed GEMM rule reads them one chunk panel at a time, and only the first
row tile of a chunk misses; it stalls on each miss. This pass adds, at the start of each row tile,
a prefetch of its share of the next panel (the panel that follows in memory: the next chunk of
the same column tile), so the whole next panel arrives while the current one is computed.
ResNet-18's 7x7 convolution with its residual add went from 1,710-1,820 to 1,130-1,180 us inside
the model (2-vCPU AMD EPYC VM; bench/RESULTS.md).

It runs on lowered TIR, after TVM's own pipeline (:func:`tir_pipeline`), and changes no value:
``llvm.prefetch`` is a hint, and an address past a buffer's end is never read (x86 and Arm
prefetches do not fault).

A row tile qualifies when it is a serial loop of at least :data:`MIN_ROW_TILES` iterations whose
body only reads one global buffer in vectors, indexed by every serial loop inside it but not by
the row tile's own variable (a reduction walking one panel, the same for every row tile), and
whose share of the next panel is at most :data:`MAX_LINES_PER_TILE` cache lines.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from compile_engine_compat.boundary import register_tir_pipeline

__all__ = [
    "MAX_LINES_PER_TILE",
    "MIN_PANEL_BYTES",
    "MIN_ROW_TILES",
    "TIR_PIPELINE",
    "WeightPrefetch",
    "tir_pipeline",
]

#: The name of the shim's TIR pipeline for CPU kernels: TVM's, then :func:`WeightPrefetch`.
TIR_PIPELINE = "compile_engine_compat"

_LOAD = tvm.ir.expr.TensorLoad
_LINE_BYTES = 64
#: Row tiles that share the prefetch of one panel: with fewer, each carries too much of it (the
#: 14x14 layer's 2 row tiles of 72 lines each ran no faster).
MIN_ROW_TILES = 4
MAX_LINES_PER_TILE = 24
#: Panels smaller than this stay in L1 or L2 across the kernel: nothing to prefetch.
MIN_PANEL_BYTES = 4096


def _walk(node: Any, kind: type, visit: Any) -> None:
    tvm_ffi.structural_walk(node, [(kind, visit)])


def _uses(expr: Any, var: Any) -> bool:
    found: list[bool] = []
    _walk(expr, tirx.Var, lambda v: found.append(True) if v.same_as(var) else None)
    return bool(found)


def _substitute(expr: Any, values: list[tuple[Any, Any]]) -> Any:
    def on_var(var: Any, mutator: Any) -> Any:
        return next((value for key, value in values if key.same_as(var)), var)

    return tvm_ffi.structural_mutate(expr, [(tirx.Var, on_var)])


def _expanded_binds(binds: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Each variable bound inside the row tile (CSE's) with its value in terms of variables bound
    outside it: binds come in definition order, so each value is expanded once, through those
    before it."""
    expanded: list[tuple[Any, Any]] = []
    for var, value in binds:
        expanded.append((var, _substitute(value, expanded) if expanded else value))
    return expanded


def _prefetch_plan(loop: Any) -> tuple[Any, Any, int, int] | None:
    """``(buffer, panel start, panel elements, element bytes)`` for a qualifying row tile."""
    inner: list[Any] = []
    _walk(loop.body, tirx.For, lambda f: inner.append(f) if f.kind == tirx.ForKind.SERIAL else None)
    loads: list[Any] = []
    _walk(loop.body, _LOAD, loads.append)
    # Vector reads of memory (the accumulators' local buffer lives in registers).
    vectors = [
        load for load in loads if load.ty.dtype.lanes > 1 and str(load.source.scope()) == "global"
    ]
    if not inner or not vectors or any(not isinstance(f.extent, tirx.IntImm) for f in inner):
        return None
    buffer = vectors[0].source
    if any(
        not load.source.same_as(buffer) or not isinstance(load.indices[0], tirx.Ramp)
        for load in vectors
    ):
        return None
    binds: list[tuple[Any, Any]] = []
    _walk(loop.body, tirx.Bind, lambda b: binds.append((b.var, b.value)))
    expanded = _expanded_binds(binds)
    bases = [_substitute(load.indices[0].base, expanded) for load in vectors]
    if any(_uses(base, loop.loop_var) for base in bases) or not all(
        any(_uses(base, f.loop_var) for base in bases) for f in inner
    ):
        return None
    analyzer = tvm.sym.Analyzer()
    offsets = [analyzer.simplify(base - bases[0]) for base in bases]
    if any(not isinstance(offset, tirx.IntImm) for offset in offsets):
        return None
    low = min(int(offset.value) for offset in offsets)
    span = max(int(offset.value) for offset in offsets) - low + vectors[0].ty.dtype.lanes
    elements = span * math.prod(int(f.extent.value) for f in inner)
    start = analyzer.simplify(_substitute(bases[0], [(f.loop_var, f.min) for f in inner]) + low)
    if any(_uses(start, var) for var, _ in binds):
        return None
    return buffer, start, elements, vectors[0].ty.dtype.bits // 8


def _with_prefetch(loop: Any) -> Any:
    """``loop`` with its share of the next panel prefetched first, or ``loop`` unchanged."""
    if loop.kind != tirx.ForKind.SERIAL or not isinstance(loop.extent, tirx.IntImm):
        return loop
    tiles = int(loop.extent.value)
    plan = _prefetch_plan(loop) if tiles >= MIN_ROW_TILES else None
    if plan is None:
        return loop
    buffer, start, elements, item = plan
    per_line = max(1, _LINE_BYTES // item)
    share = math.ceil(math.ceil(elements / per_line) / tiles)
    if elements * item < MIN_PANEL_BYTES or share > MAX_LINES_PER_TILE:
        return loop
    line = tirx.Var("prefetch_line", "int32")
    address = start + elements + (loop.loop_var * share + line) * per_line
    hint = tirx.call_intrin(
        "void", "tirx.prefetch", tirx.address_of(tirx.BufferLoad(buffer, [address])), 0, 3, 1
    )
    prefetch = tirx.For(line, 0, share, tirx.ForKind.SERIAL, tirx.Evaluate(hint))
    body = tirx.SeqStmt([prefetch, loop.body])
    return tirx.For(
        loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding,
        loop.annotations,
    )  # fmt: skip


@tirx.transform.prim_func_pass(opt_level=0, name="compile_engine_compat.WeightPrefetch")
def WeightPrefetch(func: Any, mod: Any, ctx: Any) -> Any:
    """Add the prefetch of the next weight panel to every qualifying row tile (module doc)."""

    def on_for(loop: Any, mutator: Any) -> Any:
        return _with_prefetch(mutator.default_mutate(loop))

    return func.with_body(tvm_ffi.structural_mutate(func.body, [(tirx.For, on_for)]))


def _pipeline(**kwargs: Any) -> tuple[Any, Any, Any]:
    passes, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline("s_tir", **kwargs)
    return tvm.transform.Sequential([passes, WeightPrefetch]), finalize_host, finalize_device


_registered = threading.Lock()


def tir_pipeline(target: tvm.target.Target) -> str:
    """The ``tir_pipeline`` for ``tvm.compile`` of the shim's kernels for ``target``: the shim's
    for CPU (``llvm``) targets, registered with TVM on first use; TVM's default for others."""
    if target.kind.name != "llvm":
        return "default"
    with _registered:
        register_tir_pipeline(TIR_PIPELINE, _pipeline)
    return TIR_PIPELINE
