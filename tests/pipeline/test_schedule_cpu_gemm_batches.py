"""Whole-module convolutions and batched matrix products at every batch size and a symbolic batch:
the packed GEMM rule or a deliberate fallback, blocks whose accumulators stay within the block,
and the same results as TVM's default pipeline and NumPy.

A whole-module build legalizes conv2d as NHWC summed in the NCHW order
(``op_sources.MODULE_LEGALIZATIONS``) and schedules each PrimFunc with
``schedule_prim_func``; these tests take the same route, one convolution at a time.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build
from hypothesis import given, settings
from hypothesis import strategies as st
from tvm import relax, s_tir, tirx

from compile_engine_compat.pipeline.lower import inline_injective
from compile_engine_compat.pipeline.op_sources import MODULE_LEGALIZATIONS
from compile_engine_compat.pipeline.schedule import cpu_gemm, cpu_rules, schedule_prim_func
from compile_engine_compat.pipeline.schedule.blocks import BlockInfo, target_isa
from compile_engine_compat.pipeline.schedule.driver import uncovered_blocks
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare
from pipeline.schedule_cases import F32, HOST, R, np_conv

pytestmark = pytest.mark.property

TARGET = tvm.target.Target(HOST)


def examples(factor: float) -> int:
    """The current profile's max_examples scaled by this property's relative cost."""
    return max(2, int(settings().max_examples * factor))


def _conv(batch: Any, channels: int, size: int, kernel: int, stride: int, out: int):
    """An NHWC/OHWI conv (same padding) of a ``batch`` of ``size`` x ``size`` images."""
    x_shape, w_shape = (batch, size, size, channels), (out, kernel, kernel, channels)
    params = [("x", x_shape, F32), ("w", w_shape, F32)]
    return build("main", params, lambda bb, x, w: R.nn.conv2d(
        x, w, strides=[stride] * 2, padding=[kernel // 2] * 2, data_layout="NHWC",
        kernel_layout="OHWI"))  # fmt: skip


def _module_prim_func(func: relax.Function) -> tirx.PrimFunc:
    mod = relax.transform.LegalizeOps(MODULE_LEGALIZATIONS)(tvm.IRModule({"main": func}))
    (prim,) = (f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc))
    return prim.with_attr("global_symbol", "main")


def _scheduled(func: relax.Function) -> tuple[dict[str, str], Any]:
    """The conv's rule and its scheduled module, as a whole-module build schedules it."""
    outcome = schedule_prim_func(_module_prim_func(func), "main", TARGET)
    assert uncovered_blocks(outcome.schedule) == []
    return dict(outcome.rules), outcome.schedule.mod


def _run_kernel(mod: Any, x: np.ndarray, w: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
    out = tvm.runtime.empty(out_shape, F32)
    tvm.compile(mod, TARGET)(tvm.runtime.tensor(x), tvm.runtime.tensor(w), out)
    return out.numpy()


def _default_pipeline(func: relax.Function, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(tvm.IRModule({"main": func}), TARGET), tvm.cpu())
    return vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()


def _numpy(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    nchw = np_conv(x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), stride, w.shape[1] // 2)
    return nchw.transpose(0, 2, 3, 1)


def _check_all_paths(func: relax.Function, mod: Any, x: np.ndarray, w: np.ndarray, stride: int):
    expected = _numpy(x, w, stride)
    out = _run_kernel(mod, x, w, expected.shape)
    assert compare(out, expected.astype(F32), REFERENCE_TOLERANCES) == ""
    # TVM's NHWC conv sums the channels innermost, the module's legalization outermost: the
    # two float32 sums differ by rounding, within the reference tolerance (scaled to |max|).
    assert compare(out, _default_pipeline(func, x, w), REFERENCE_TOLERANCES) == ""


def _arrays(
    seed: int, batch: int, channels: int, size: int, kernel: int, out: int
) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, size, size, channels)).astype(F32)
    w = rng.standard_normal((out, kernel, kernel, channels)).astype(F32)
    return x, w


# ResNet-18's convolutions whose packed blocks once straddled two images at batch 4 and more
# (112 rows of 14 x 14 pixels): the rule was dropped and they ran unscheduled, 20-60x slower.
RESNET_CONVS = {
    "3x3_256x14x14": (256, 14, 3, 1, 256),
    "stem_7x7_stride2": (3, 224, 7, 2, 64),
    "1x1_stride2_128x28x28": (128, 28, 1, 2, 256),
}


@pytest.mark.parametrize("batch", [1, 2, 4, 8, 16, 32, "symbolic"])
@pytest.mark.parametrize("conv", sorted(RESNET_CONVS))
def test_resnet_convolutions_take_the_packed_rule_at_every_batch(conv, batch):
    # A symbolic batch (relay.Any()) stays an outer parallel loop; the rows are the pixels.
    size = tirx.Var("n", "int64") if batch == "symbolic" else batch
    rules, _ = _scheduled(_conv(size, *RESNET_CONVS[conv]))
    assert rules.get("conv2d_nhwc") == "packed_gemm"


def test_a_rule_that_does_not_fit_falls_back_to_parallel_loops(monkeypatch):
    # The old block sizes (whole image rows, across images): the packed rule leaves part of the
    # output unwritten and is dropped; the conv still runs in parallel, not as a bare loop nest.
    monkeypatch.setattr(cpu_gemm, "_runs", lambda extents: (extents[-1],))
    func = _conv(4, 128, 28, 1, 2, 256)
    rules, mod = _scheduled(func)
    assert rules.get("conv2d_nhwc") == "parallel_reduction"
    _check_all_paths(func, mod, *_arrays(0, 4, 128, 28, 1, 256), stride=2)


def _conv_plan(func: relax.Function) -> cpu_gemm.GemmPlan | None:
    sch = inline_injective(_module_prim_func(func), "main")
    return cpu_gemm.gemm_plan(BlockInfo(sch, "conv2d_nhwc"), target_isa(TARGET))


def test_a_symbolic_batch_takes_a_register_tile_that_leaves_registers_free():
    # Indexed in 64-bit, the 14 x 2 tile of ResNet-18's 56x56 3x3 conv spilled a third of its
    # inner loop to the stack and ran 1.5-5x slower than the static kernel (AVX-512).
    static = _conv_plan(_conv(1, 64, 56, 3, 1, 64))
    symbolic = _conv_plan(_conv(tirx.Var("n", "int64"), 64, 56, 3, 1, 64))
    assert static is not None and symbolic is not None
    assert symbolic.rows * symbolic.vectors <= 20
    if target_isa(TARGET).registers == 32:
        assert static.rows * static.vectors == 28


@settings(max_examples=examples(0.3))
@given(
    batch=st.sampled_from([1, 2, 3, 4, 5, 8]),
    channels=st.sampled_from([3, 8, 16, 24, 32]),
    size=st.integers(3, 16),
    kernel=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    out=st.sampled_from([8, 16, 24, 32, 48]),
    seed=st.integers(0, 2**16),
)
def test_module_convolutions_match_the_default_pipeline_and_numpy_at_any_batch(
    batch, channels, size, kernel, stride, out, seed
):
    func = _conv(batch, channels, size, kernel, stride, out)
    rules, mod = _scheduled(func)
    out_size = (size - 1) // stride + 1
    work = batch * out_size * out_size * out * kernel * kernel * channels
    if work >= cpu_rules.MIN_PARALLEL_WORK:  # below it, deliberately no rule (tiny kernels)
        assert rules.get("conv2d_nhwc") in ("packed_gemm", "tiled_reduction", "parallel_reduction")
    _check_all_paths(func, mod, *_arrays(seed, batch, channels, size, kernel, out), stride)


@settings(max_examples=examples(0.2))
@given(
    channels=st.sampled_from([3, 8, 16]),
    size=st.integers(3, 12),
    kernel=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    out=st.sampled_from([8, 16]),
    seed=st.integers(0, 2**16),
)
def test_module_convolutions_with_a_symbolic_batch_match_at_batch_1_and_3(
    channels, size, kernel, stride, out, seed
):
    func = _conv(tirx.Var("n", "int64"), channels, size, kernel, stride, out)
    rules, mod = _scheduled(func)  # no TypeError: the legalization keeps the batch symbolic
    out_size = (size - 1) // stride + 1
    # The packed rule when a register tile's rows divide the pixels, else the parallel fallback.
    assert rules.get("conv2d_nhwc") in ("packed_gemm", "parallel_reduction")
    if out_size * out_size % 2 == 0:
        assert rules.get("conv2d_nhwc") == "packed_gemm"
    for batch in (1, 3):
        _check_all_paths(func, mod, *_arrays(seed, batch, channels, size, kernel, out), stride)


def _matmul_bias_gelu(batch: int, seq: int, k: int, n: int) -> relax.Function:
    """An encoder's first feed-forward product: ``gelu(x @ w + b)`` over ``batch`` x ``seq``."""
    params = [("x", (batch, seq, k), F32), ("w", (k, n), F32), ("b", (n,), F32)]
    return build("main", params, lambda bb, x, w, b: R.nn.gelu(
        bb.emit(R.add(bb.emit(R.matmul(x, w)), b))))  # fmt: skip


def _fused_prim_func(func: relax.Function) -> tirx.PrimFunc:
    """The one kernel a whole-module build makes of ``func`` (legalized, fused)."""
    passes = [
        relax.transform.LegalizeOps(MODULE_LEGALIZATIONS),
        relax.transform.AnnotateTIROpPattern(),
        relax.transform.FuseOps(),
        relax.transform.FuseTIR(),
    ]
    mod = tvm.transform.Sequential(passes)(tvm.IRModule({"main": func}))
    (prim,) = (f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc))
    return prim.with_attr("global_symbol", "main")


def _local_buffer_bytes(mod: Any) -> list[int]:
    """The bytes of each ``local`` buffer of ``mod["main"]`` once TVM's lowering compacted it to
    the region one iteration of its enclosing loops uses (a parallel block's accumulators)."""
    compact = tvm.transform.Sequential([
        s_tir.transform.LowerInitBlock(),
        s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(),
        s_tir.transform.CompactBufferAllocation(),
    ])  # fmt: skip
    text = compact(mod)["main"].script()
    shapes = re.findall(r'alloc_buffer\(\((.*?)\), scope="local"', text)
    return [4 * math.prod(int(d) for d in re.findall(r"int64\((\d+)\)", s)) for s in shapes]


@pytest.mark.parametrize("batch", [1, 2, 8])
def test_a_batched_products_blocks_keep_their_accumulators_within_the_block(batch):
    # Blocks of 64 of the 128 tokens: the rule once cut them from the batch and token axes
    # fused, and each parallel block's accumulators kept 442 KB (batch 2) or 6.6 MB (batch 8)
    # instead of 24 KB: BERT-base's feed-forward product at batch 8 ran 2.5x slower.
    rules, mod = _scheduled_kernel(_matmul_bias_gelu(batch, 128, 96, 192))
    assert rules.get("matmul") == "packed_gemm"
    assert _local_buffer_bytes(mod) == [64 * 96 * 4]


@pytest.mark.parametrize(("channels", "out"), [(16, 96), (24, 144)])
def test_an_unchunked_reduction_writes_each_tile_back_from_registers(channels, out):
    # MobileNetV2's expansions: the whole reduction fits one panel, so each register tile is
    # finished in one pass and written back (bias and ReLU6 with it) at once; the accumulators
    # are the tile's only (14 pixels x 32 or 48 channels), not a 28-pixel block's.
    func = _conv_bias_relu6(channels, 28, out)
    rules, mod = _scheduled_kernel(func)
    assert rules.get("conv2d_nhwc") == "packed_gemm"
    (tile,) = _local_buffer_bytes(mod)
    assert tile <= 14 * 48 * 4
    x, w = _arrays(0, 1, channels, 28, 1, out)
    b = np.random.default_rng(1).standard_normal(out).astype(F32)
    got = tvm.runtime.empty((1, 28, 28, out), F32)
    tvm.compile(mod, TARGET)(*(tvm.runtime.tensor(a) for a in (x, w, b)), got)
    expected = np.clip(_numpy(x, w, 1) + b, 0, 6).astype(F32)
    assert compare(got.numpy(), expected, REFERENCE_TOLERANCES) == ""


def _conv_bias_relu6(channels: int, size: int, out: int) -> relax.Function:
    """A 1x1 NHWC conv, bias and ReLU6 (a MobileNetV2 expansion), fused as a module build does."""
    params = [("x", (1, size, size, channels), F32), ("w", (out, 1, 1, channels), F32),
              ("b", (out,), F32)]  # fmt: skip

    def body(bb: Any, x: Any, w: Any, b: Any) -> Any:
        conv = bb.emit(R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="OHWI"))
        return R.clip(bb.emit(R.add(conv, b)), 0.0, 6.0)

    return build("main", params, body)


def _scheduled_kernel(func: relax.Function) -> tuple[dict[str, str], Any]:
    outcome = schedule_prim_func(_fused_prim_func(func), "main", TARGET)
    assert uncovered_blocks(outcome.schedule) == []
    return dict(outcome.rules), outcome.schedule.mod


@settings(max_examples=examples(0.1))
@given(
    batch=st.sampled_from([1, 2, 3, 8]),
    seq=st.sampled_from([7, 14, 16, 20, 64]),
    k=st.sampled_from([8, 24, 96]),
    n=st.sampled_from([16, 24, 48, 96]),
    seed=st.integers(0, 2**16),
)
def test_batched_products_with_an_epilogue_match_the_default_pipeline_and_numpy(
    batch, seq, k, n, seed
):
    func = _matmul_bias_gelu(batch, seq, k, n)
    rules, mod = _scheduled_kernel(func)
    if batch * seq * k * n >= cpu_rules.MIN_PARALLEL_WORK:
        assert rules.get("matmul") in ("packed_gemm", "tiled_reduction", "parallel_reduction")
        assert max(_local_buffer_bytes(mod), default=0) <= 64 * 1024
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, seq, k)).astype(F32)
    w = rng.standard_normal((k, n)).astype(F32)
    b = rng.standard_normal(n).astype(F32)
    out = tvm.runtime.empty((batch, seq, n), F32)
    tvm.compile(mod, TARGET)(*(tvm.runtime.tensor(a) for a in (x, w, b)), out)
    linear = x.astype(np.float64) @ w.astype(np.float64) + b
    expected = 0.5 * linear * (1 + np.vectorize(math.erf)(linear / math.sqrt(2)))
    assert compare(out.numpy(), expected.astype(F32), REFERENCE_TOLERANCES) == ""
    vm = relax.VirtualMachine(tvm.compile(tvm.IRModule({"main": func}), TARGET), tvm.cpu())
    default = vm["main"](*(tvm.runtime.tensor(a) for a in (x, w, b))).numpy()
    assert compare(out.numpy(), default, REFERENCE_TOLERANCES) == ""
