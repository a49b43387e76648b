"""The packed GEMM rule: matmul, dense, batch_matmul and conv2d, against NumPy."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build, run_jit, sym
from tvm import relax, s_tir

from compile_engine_compat.pipeline.op_sources import MODULE_LEGALIZATIONS
from compile_engine_compat.pipeline.schedule import cpu_gemm
from compile_engine_compat.pipeline.schedule.blocks import BlockInfo, target_isa
from compile_engine_compat.pipeline.schedule.cpu_gemm import gemm_plan
from compile_engine_compat.pipeline.schedule.driver import schedule_prim_func
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare
from pipeline.schedule_cases import F32, HOST, HOST_IDS, HOST_TARGETS, R, f32, np_conv


def _mm(a_shape, b_shape, transpose_b=False, epilogue=False):
    def body(bb, a, b, *bias):
        out = R.linear(a, b) if transpose_b else R.matmul(a, b)
        return R.nn.relu(bb.emit(R.add(bb.emit(out), bias[0]))) if epilogue else out

    n_out = b_shape[0] if transpose_b else b_shape[-1]
    params = [("a", a_shape, F32), ("b", b_shape, F32)]
    params += [("bias", (n_out,), F32)] if epilogue else []
    return build("main", params, body)


def _mm_ref(a, b, *bias, transpose_b=False):
    out = a.astype(np.float64) @ (b.T if transpose_b else b).astype(np.float64)
    return np.maximum(out + bias[0], 0) if bias else out


def _nhwc_conv(channels, size):
    params = [("x", (1, size, size, channels), F32), ("w", (channels, 3, 3, channels), F32)]
    return build("main", params, lambda bb, x, w: R.nn.conv2d(
        x, w, padding=[1, 1], data_layout="NHWC", kernel_layout="OHWI"))  # fmt: skip


# name -> (function, input shapes, NumPy reference)
GEMM_CASES: dict[str, tuple[Callable[[], Any], list[tuple[int, ...]], Callable[..., Any]]] = {
    "odd_257x129x65": (lambda: _mm((257, 129), (129, 65)), [(257, 129), (129, 65)], _mm_ref),
    "tile_multiples_96x256x48": (
        lambda: _mm((96, 256), (256, 48)), [(96, 256), (256, 48)], _mm_ref),
    "not_tile_multiples_100x72x40": (
        lambda: _mm((100, 72), (72, 40)), [(100, 72), (72, 40)], _mm_ref),
    "bias_relu_epilogue": (
        lambda: _mm((64, 300), (300, 96), epilogue=True), [(64, 300), (300, 96), (96,)], _mm_ref),
    "gemv_batch1_bias_relu_1x200x1000": (
        lambda: _mm((1, 200), (200, 1000), epilogue=True),
        [(1, 200), (200, 1000), (1000,)],
        _mm_ref,
    ),
    "gemv_dense_transposed_1x96x48": (
        lambda: _mm((1, 96), (48, 96), transpose_b=True),
        [(1, 96), (48, 96)],
        functools.partial(_mm_ref, transpose_b=True),
    ),
    "uneven_blocks_49x960x320": (
        lambda: _mm((49, 960), (960, 320)), [(49, 960), (960, 320)], _mm_ref),
    "batch_matmul": (lambda: _mm((3, 40, 64), (3, 64, 48)), [(3, 40, 64), (3, 64, 48)], _mm_ref),
    "dense_transposed_b": (
        lambda: _mm((64, 96), (48, 96), transpose_b=True),
        [(64, 96), (48, 96)],
        functools.partial(_mm_ref, transpose_b=True),
    ),
    "conv2d_resnet_3x3_128x28x28": (
        lambda: build("main", [("x", (1, 128, 28, 28), F32), ("w", (128, 128, 3, 3), F32)],
                      lambda bb, x, w: R.nn.conv2d(x, w, padding=[1, 1])),
        [(1, 128, 28, 28), (128, 128, 3, 3)],
        lambda x, w: np_conv(x, w, 1, 1),
    ),
    "conv2d_stem_7x7_stride2": (
        lambda: build("main", [("x", (1, 3, 40, 40), F32), ("w", (32, 3, 7, 7), F32)],
                      lambda bb, x, w: R.nn.conv2d(x, w, strides=[2, 2], padding=[3, 3])),
        [(1, 3, 40, 40), (32, 3, 7, 7)],
        lambda x, w: np_conv(x, w, 2, 3),
    ),
}  # fmt: skip


# Every case on the host CPU; two on the other vector widths too (kept short: each builds).
_GEMM_PARAMS = [pytest.param(name, HOST, id=f"{name}-host") for name in sorted(GEMM_CASES)] + [
    pytest.param(name, target, id=f"{name}-{label}")
    for name in ("odd_257x129x65", "conv2d_resnet_3x3_128x28x28")
    for target, label in zip(HOST_TARGETS, HOST_IDS)
    if target is not HOST
]


@pytest.mark.parametrize(("name", "target"), _GEMM_PARAMS)
def test_packed_gemm_matches_numpy(engine, name, target):
    make, shapes, reference = GEMM_CASES[name]
    func, arrays = make(), [f32(*shape) for shape in shapes]
    cached = engine.lower(func, target)
    (out,) = run_jit(engine.jit(func, target), cached, *arrays)
    expected = reference(*arrays).astype(F32)
    assert compare(out, expected, REFERENCE_TOLERANCES) == ""


def _blocks(cached) -> dict[str, tvm.tirx.SBlock]:
    sch = cached.schedule
    return {sch.get(b).name_hint: sch.get(b) for b in sch.get_child_blocks(sch.get_sblock("root"))}


@pytest.mark.parametrize("target", HOST_TARGETS[:2], ids=["generic", "host"])
def test_packed_gemm_applies_to_a_512_matmul(engine, target):
    cached = engine.lower(_mm((512, 512), (512, 512)), target)
    blocks = _blocks(cached)
    # The B operand is copied into column panels [512 // cols, 512, cols] by its own block...
    (packed,) = blocks["b_global"].writes
    panels, k, cols = (int(d) for d in packed.source.shape)
    lanes = target_isa(tvm.target.Target(target)).lanes(F32)
    assert k == 512 and panels * cols == 512 and cols % lanes == 0
    # ...which the matmul reads, accumulating in a local tile with parallel outer blocks.
    assert any(r.source.same_as(packed.source) for r in blocks["matmul_update"].reads)
    script = cached.funcs.script()
    assert 'scope="local"' in script and "T.parallel" in script and "T.vectorized" in script


def test_a_batch_1_dense_reads_its_weights_as_packed_panels(engine):
    # One row: the weights are streamed panel by panel, not a column tile per row a page apart.
    cached = engine.lower(_mm((1, 512), (512, 1000)), HOST)
    (packed,) = _blocks(cached)["b_global"].writes
    panels, k, cols = (int(d) for d in packed.source.shape)
    assert k == 512 and panels * cols == 1000


def test_packed_gemm_leaves_integer_and_symbolic_matmuls_to_the_other_rules(engine):
    ints = build("main", [("a", (64, 64), "int32"), ("b", (64, 64), "int32")],
                 lambda bb, a, b: R.matmul(a, b))  # fmt: skip
    symbolic = build("main", [("a", (sym(), 64), F32), ("b", (64, 64), F32)],
                     lambda bb, a, b: R.matmul(a, b))  # fmt: skip
    for func in (ints, symbolic):
        assert "b_global" not in _blocks(engine.lower(func, HOST))


def _module_conv(channels: int, size: int) -> tvm.tirx.PrimFunc:
    """The NHWC conv a whole-module build schedules: its legalization sums channels first."""
    mod = relax.transform.LegalizeOps(MODULE_LEGALIZATIONS)(
        tvm.IRModule({"main": _nhwc_conv(channels, size)})
    )
    (func,) = (f for f in mod.functions.values() if isinstance(f, tvm.tirx.PrimFunc))
    return func.with_attr("global_symbol", "main")


@pytest.mark.parametrize(("channels", "spread"), [(256, True), (64, True), (96, False)])
def test_a_padded_nhwc_input_gets_one_more_cache_line_per_pixel(channels, spread):
    # 256 or 64 channels put a block's pixels 1 KB or 256 bytes apart, in a few L1 sets; 96
    # (384 bytes) already spread over many. storage_align pads the pixel stride at lowering.
    target = tvm.target.Target(HOST)
    sch = schedule_prim_func(_module_conv(channels, 14), "main", target).schedule
    blocks = {
        sch.get(b).name_hint: sch.get(b) for b in sch.get_child_blocks(sch.get_sblock("root"))
    }
    assert ("buffer_dim_align" in blocks["pad_temp"].annotations) is spread
    if channels == 256:  # the padded copy gives the same values
        rng = np.random.default_rng(0)
        x = rng.standard_normal((1, 14, 14, 256)).astype(F32)
        w = rng.standard_normal((256, 3, 3, 256)).astype(F32)
        kernel = tvm.compile(sch.mod, target)
        out = tvm.runtime.empty((1, 14, 14, 256), F32)
        kernel(tvm.runtime.tensor(x), tvm.runtime.tensor(w), out)
        expected = np_conv(x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), 1, 1)
        assert (
            compare(out.numpy(), expected.transpose(0, 2, 3, 1).astype(F32), REFERENCE_TOLERANCES)
            == ""
        )


@pytest.mark.parametrize(("channels", "block_cols"), [(256, 32), (64, 64)])
def test_a_deep_reduction_takes_blocks_whose_weight_slab_fits_l2(channels, block_cols):
    # 3x3x256 = 2,304 deep: 128 columns of weights are 1.2 MB, more than a Zen 5 core's L2.
    sch = s_tir.Schedule(tvm.IRModule({"main": _module_conv(channels, 14)}))
    plan = gemm_plan(BlockInfo(sch, "conv2d_nhwc"), target_isa(tvm.target.Target(HOST)))
    assert plan is not None and plan.block_cols == block_cols


@pytest.mark.parametrize(("threads", "block_cols"), [(2, 32), (1, 64)])
def test_blocks_share_out_evenly_over_the_threads(engine, monkeypatch, threads, block_cols):
    # MobileNetV2's 960 -> 320 projection at 7x7: 64-column blocks make 5, three turns on one of
    # two threads; 32-column blocks make 10. One thread keeps the larger blocks.
    monkeypatch.setattr(cpu_gemm, "kernel_threads", lambda: threads)
    func = engine.lower(_mm((49, 960), (960, 320)), HOST).prim_func
    sch = s_tir.Schedule(tvm.IRModule({"main": func}))
    plan = gemm_plan(BlockInfo(sch, "matmul"), target_isa(tvm.target.Target(HOST)))
    assert plan is not None and (plan.block_cols, plan.block_rows) == (block_cols, 49)
