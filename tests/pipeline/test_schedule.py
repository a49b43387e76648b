"""Default schedules: applied by target, never change results, give way to user schedules."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build, run_jit, sym
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tvm import relax, te

from compile_engine_compat import silenced
from compile_engine_compat.facade.engine import global_engine
from compile_engine_compat.pipeline import schedule as _schedule
from compile_engine_compat.pipeline import strategy as _strategy
from compile_engine_compat.pipeline.strategy import OpImplementation
from compile_engine_compat.testing import (
    OP_NAMES,
    assert_matches_new_path,
    input_arrays,
    relax_functions,
)
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare

R = relax.op
F32 = "float32"
rng = np.random.default_rng(7)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(F32)


def _matmul_bias_relu() -> relax.Function:
    return build(
        "main",
        [("x", (48, 96), F32), ("w", (96, 80), F32), ("b", (80,), F32)],
        lambda bb, x, w, b: R.nn.relu(bb.emit(R.add(bb.emit(R.matmul(x, w)), b))),
    )


def _conv_relu() -> relax.Function:
    return build(
        "main",
        [("x", (1, 8, 20, 24), F32), ("w", (16, 8, 3, 3), F32)],
        lambda bb, x, w: R.nn.relu(bb.emit(R.nn.conv2d(x, w, padding=[1, 1]))),
    )


# name -> (function, inputs, what the scheduled script must show)
CASES = {
    "matmul_bias_relu": (_matmul_bias_relu, lambda: [f32(48, 96), f32(96, 80), f32(80)], "tile"),
    "batch_matmul": (
        lambda: build(
            "main",
            [("a", (3, 40, 32), F32), ("b", (3, 32, 64), F32)],
            lambda bb, a, b: R.matmul(a, b),
        ),
        lambda: [f32(3, 40, 32), f32(3, 32, 64)],
        "tile",
    ),
    "linear": (
        lambda: build(
            "main",
            [("x", (64, 48), F32), ("w", (32, 48), F32)],
            lambda bb, x, w: R.linear(x, w),
        ),
        lambda: [f32(64, 48), f32(32, 48)],
        "tile",
    ),
    "conv2d_relu": (_conv_relu, lambda: [f32(1, 8, 20, 24), f32(16, 8, 3, 3)], "tile"),
    "sum_last_axis": (
        lambda: build("main", [("x", (128, 300), F32)], lambda bb, x: R.sum(x, axis=[1])),
        lambda: [f32(128, 300)],
        "parallel",
    ),
    "softmax": (
        lambda: build("main", [("x", (64, 257), F32)], lambda bb, x: R.nn.softmax(x)),
        lambda: [f32(64, 257)],
        "parallel",
    ),
    "elementwise_chain": (
        lambda: build(
            "main",
            [("x", (64, 256), F32), ("y", (256,), F32)],
            lambda bb, x, y: R.exp(bb.emit(R.multiply(bb.emit(R.add(x, y)), x))),
        ),
        lambda: [f32(64, 256), f32(256)],
        "vector",
    ),
    "odd_extents": (
        lambda: build("main", [("x", (131, 127), F32)], lambda bb, x: R.nn.relu(x)),
        lambda: [f32(131, 127)],
        "parallel",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_scheduled_kernels_match_the_new_path_and_the_unscheduled_kernel(engine, name):
    make, inputs, shows = CASES[name]
    func, arrays = make(), inputs()
    cached = engine.lower(func, "llvm")
    script = cached.funcs.script()
    assert "T.parallel" in script
    if shows in ("tile", "vector"):
        assert "T.vectorized" in script
    if shows == "tile":
        assert 'scope="local"' in script  # the register tile
    kernel = engine.jit(func, "llvm")
    outs = [np.empty([int(d) for d in t.shape], str(t.dtype)) for t in cached.outputs]
    kernel(*arrays, *outs)
    # Bit-identical to the unscheduled PrimFunc built for the same target (the host CPU's, with
    # its FMA contraction): no rule reorders a reduction.
    plain = tvm.compile(cached.prim_func, target=cached.target)
    plain_outs = [tvm.runtime.empty(o.shape, str(o.dtype)) for o in outs]
    plain(*[tvm.runtime.tensor(a) for a in arrays], *plain_outs)
    for got, expected in zip(outs, plain_outs):
        np.testing.assert_array_equal(got, expected.numpy())
    assert_matches_new_path(func, *arrays)


def test_symbolic_shapes_are_scheduled_and_correct(engine):
    n = sym()
    func = build(
        "main",
        [("x", (n, 64), F32), ("w", (64, 32), F32)],
        lambda bb, x, w: R.nn.relu(bb.emit(R.matmul(x, w))),
    )
    for rows in (1, 5, 300):
        assert_matches_new_path(func, f32(rows, 64), f32(64, 32))
    assert "T.parallel" in engine.lower(func, "llvm").funcs.script()


def test_avx2_target_is_scheduled_and_correct(engine):
    target = tvm.target.Target({"kind": "llvm", "mcpu": "x86-64-v3"})
    func = _matmul_bias_relu()
    arrays = [f32(48, 96), f32(96, 80), f32(80)]
    cached = engine.lower(func, target)
    assert "T.vectorized" in cached.funcs.script()
    out = np.empty((48, 80), F32)
    engine.jit(func, target)(*arrays, out)
    expected = np.maximum(arrays[0] @ arrays[1] + arrays[2], 0)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_small_kernels_stay_single_threaded(engine):
    func = build("main", [("x", (3, 4), F32)], lambda bb, x: R.exp(x))
    assert "T.parallel" not in engine.lower(func, "llvm").funcs.script()


def _loop_extents(cached) -> list[int]:
    """The loop extents of the scheduled function's only block."""
    sch = cached.schedule
    (block,) = sch.get_child_blocks(sch.get_sblock("root"))
    return [int(sch.get(loop).extent) for loop in sch.get_loops(block)]


def test_small_elementwise_kernels_run_one_flat_vectorized_loop(engine):
    # Left as a 16x40 nest, LLVM unrolled every row: ~5x the build time for the same speed. The
    # flat loop is cut into whole vectors: 4 lanes around the exp's per-lane library calls.
    func = build(
        "main",
        [("x", (16, 40), F32), ("y", (16, 40), F32)],
        lambda bb, x, y: R.multiply(bb.emit(R.exp(bb.emit(R.add(x, y)))), y),
    )
    assert _loop_extents(engine.lower(func, "llvm")) == [16 * 40 // 4, 4]
    assert_matches_new_path(func, f32(16, 40), f32(16, 40))


def test_small_elementwise_kernels_no_vector_divides_stay_one_flat_loop(engine):
    func = build(
        "main",
        [("x", (3, 7), F32), ("y", (3, 7), F32)],
        lambda bb, x, y: R.multiply(bb.emit(R.add(x, y)), y),
    )
    assert _loop_extents(engine.lower(func, "llvm")) == [3 * 7]
    assert_matches_new_path(func, f32(3, 7), f32(3, 7))


@pytest.mark.parametrize(
    ("other", "transpose"),
    [((40,), False), ((16, 1), False), ((40, 16), True)],
    ids=["row_broadcast", "column_broadcast", "transpose"],
)
def test_small_broadcasts_and_transposes_keep_their_loop_nest(engine, other, transpose):
    # Fused, their accesses would need a division per element (measured up to 2x slower).
    def body(bb, x, y):
        return R.add(x, R.permute_dims(y) if transpose else y)

    func = build("main", [("x", (16, 40), F32), ("y", other, F32)], body)
    assert len(_loop_extents(engine.lower(func, "llvm"))) >= 2
    assert_matches_new_path(func, f32(16, 40), f32(*other))


def test_cached_func_keeps_the_unscheduled_prim_func_and_a_live_schedule(engine):
    cached = engine.lower(_matmul_bias_relu(), "llvm")
    assert "T.parallel" not in cached.prim_func.script()
    tvm.ir.assert_structural_equal(cached.schedule.mod, cached.funcs)
    # The handle still reschedules: users may keep transforming it.
    blocks = cached.schedule.get_child_blocks(cached.schedule.get_sblock("root"))
    assert blocks


def test_a_user_schedule_wins_over_the_default(engine):
    seen = []

    def compute(attrs, inputs, out_type):
        a, b = inputs
        k = te.reduce_axis((0, a.shape[1]), name="k")
        return te.compute(
            (a.shape[0], b.shape[1]),
            lambda i, j: te.sum(a[i, k] * b[k, j], axis=k),
            name="user_matmul",
        )

    def schedule(sch, names):
        seen.append(list(names))
        assert len(sch.get_loops(sch.get_sblock(names[0]))) == 3  # untouched by the defaults

    impl = OpImplementation("user_matmul", compute, schedule=schedule, plevel=30)
    func = _matmul_bias_relu()
    arrays = [f32(48, 96), f32(96, 80), f32(80)]
    with _strategy.temp_strategy("matmul", [impl]):
        cached = engine.lower(func, "llvm")
        out = np.empty((48, 80), F32)
        engine.jit(func, "llvm")(*arrays, out)
    engine.clear()
    assert seen == [["user_matmul"]]
    assert 'scope="local"' not in cached.funcs.script()  # no default tile on the user's block
    np.testing.assert_allclose(
        out, np.maximum(arrays[0] @ arrays[1] + arrays[2], 0), rtol=1e-5, atol=1e-5
    )


def test_user_schedules_travel_with_the_traced_function(engine):
    # No process-global table keyed by C handles: the traced function carries each schedule
    # with the ops it made, and two traces never see each other's.
    from compile_engine_compat.pipeline import trace as _trace

    def compute(attrs, inputs, out_type):
        a, b = inputs
        k = te.reduce_axis((0, a.shape[1]), name="k")
        return te.compute(
            (a.shape[0], b.shape[1]), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="mine"
        )

    def schedule(sch, names):
        pass

    impl = OpImplementation("mine", compute, schedule=schedule, plevel=30)
    with _strategy.temp_strategy("matmul", [impl]):
        traced = _trace.trace(_matmul_bias_relu(), global_engine().op_lowering)
        plain = _trace.trace(add3_like(), global_engine().op_lowering)
    assert [(fn, [op.name for op in ops]) for fn, ops in traced.schedules] == [(schedule, ["mine"])]
    assert plain.schedules == []
    assert _schedule.user_schedules(traced.schedules, traced.outputs) == {schedule: ["mine"]}
    assert not any("pending" in name.lower() for name in vars(_strategy))


def add3_like() -> Any:
    return build(
        "add", [("x", (3,), "float32"), ("y", (3,), "float32")], lambda bb, x, y: relax.op.add(x, y)
    )


def test_a_rule_that_does_not_fit_leaves_the_block_as_it_was():
    func = te.create_prim_func(
        [a := te.placeholder((64, 64), name="a"), te.compute((64, 64), lambda i, j: a[j, i])]
    )
    sch = tvm.s_tir.Schedule(func)
    before = sch.mod

    def failing(trial, name):
        trial.parallel(trial.get_loops(trial.get_sblock(name))[0])
        raise tvm.s_tir.ScheduleError("does not fit")

    assert _schedule._try(sch, "compute", failing) is sch
    tvm.ir.assert_structural_equal(sch.mod, before)


# -- the packed GEMM rule -------------------------------------------------------------------------

_HOST = {"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()}
_HOST_TARGETS = ["llvm", _HOST]
if tvm.target.codegen.llvm_cpu_has_features(["avx512f"], tvm.target.Target(_HOST)):
    _HOST_TARGETS.append({**_HOST, "mattr": ["-prefer-256-bit"]})  # 512-bit vectors
_HOST_IDS = ["generic", "host", "host512"][: len(_HOST_TARGETS)]


def _np_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """NCHW conv2d in float64 (the reference's precision)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]  # (n, c, oh, ow, kh, kw)
    return np.tensordot(win, w.astype(np.float64), axes=([1, 4, 5], [1, 2, 3])).transpose(
        0, 3, 1, 2
    )


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


# name -> (function, input shapes, NumPy reference)
GEMM_CASES: dict[str, tuple[Callable[[], Any], list[tuple[int, ...]], Callable[..., Any]]] = {
    "odd_257x129x65": (lambda: _mm((257, 129), (129, 65)), [(257, 129), (129, 65)], _mm_ref),
    "tile_multiples_96x256x48": (
        lambda: _mm((96, 256), (256, 48)), [(96, 256), (256, 48)], _mm_ref),
    "not_tile_multiples_100x72x40": (
        lambda: _mm((100, 72), (72, 40)), [(100, 72), (72, 40)], _mm_ref),
    "bias_relu_epilogue": (
        lambda: _mm((64, 300), (300, 96), epilogue=True), [(64, 300), (300, 96), (96,)], _mm_ref),
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
        lambda x, w: _np_conv(x, w, 1, 1),
    ),
    "conv2d_stem_7x7_stride2": (
        lambda: build("main", [("x", (1, 3, 40, 40), F32), ("w", (32, 3, 7, 7), F32)],
                      lambda bb, x, w: R.nn.conv2d(x, w, strides=[2, 2], padding=[3, 3])),
        [(1, 3, 40, 40), (32, 3, 7, 7)],
        lambda x, w: _np_conv(x, w, 2, 3),
    ),
}  # fmt: skip


# Every case on the host CPU; two on the other vector widths too (kept short: each builds).
_GEMM_PARAMS = [pytest.param(name, _HOST, id=f"{name}-host") for name in sorted(GEMM_CASES)] + [
    pytest.param(name, target, id=f"{name}-{label}")
    for name in ("odd_257x129x65", "conv2d_resnet_3x3_128x28x28")
    for target, label in zip(_HOST_TARGETS, _HOST_IDS)
    if target is not _HOST
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


@pytest.mark.parametrize("target", _HOST_TARGETS[:2], ids=["generic", "host"])
def test_packed_gemm_applies_to_a_512_matmul(engine, target):
    cached = engine.lower(_mm((512, 512), (512, 512)), target)
    blocks = _blocks(cached)
    # The B operand is copied into column panels [512 // cols, 512, cols] by its own block...
    (packed,) = blocks["b_global"].writes
    panels, k, cols = (int(d) for d in packed.source.shape)
    lanes = _schedule._target_isa(tvm.target.Target(target)).lanes(F32)
    assert k == 512 and panels * cols == 512 and cols % lanes == 0
    # ...which the matmul reads, accumulating in a local tile with parallel outer blocks.
    assert any(r.source.same_as(packed.source) for r in blocks["matmul_update"].reads)
    script = cached.funcs.script()
    assert 'scope="local"' in script and "T.parallel" in script and "T.vectorized" in script


def test_packed_gemm_leaves_integer_and_symbolic_matmuls_to_the_other_rules(engine):
    ints = build("main", [("a", (64, 64), "int32"), ("b", (64, 64), "int32")],
                 lambda bb, a, b: R.matmul(a, b))  # fmt: skip
    symbolic = build("main", [("a", (sym(), 64), F32), ("b", (64, 64), F32)],
                     lambda bb, a, b: R.matmul(a, b))  # fmt: skip
    for func in (ints, symbolic):
        assert "b_global" not in _blocks(engine.lower(func, _HOST))


@pytest.mark.parametrize(
    ("target", "bits", "registers"),
    [
        ("llvm", 128, 16),
        ({"kind": "llvm", "mcpu": "x86-64-v3"}, 256, 16),
        ({"kind": "llvm", "mcpu": "rocketlake"}, 256, 32),
        ({"kind": "llvm", "mcpu": "rocketlake", "mattr": ["-prefer-256-bit"]}, 512, 32),
        ({"kind": "llvm", "mtriple": "aarch64-linux-gnu"}, 128, 16),
    ],
)
def test_vector_unit_comes_from_the_target(target, bits, registers):
    isa = _schedule._target_isa(tvm.target.Target(target))
    assert (isa.vector_bits, isa.registers) == (bits, registers)


# -- GPU ------------------------------------------------------------------------------------------


def _cuda_can_build() -> bool:
    enabled = tvm.get_global_func("target.build.cuda", allow_missing=True) is not None
    return enabled and shutil.which("nvcc") is not None


@pytest.mark.skipif(not _cuda_can_build(), reason="TVM built without CUDA or no nvcc")
@pytest.mark.parametrize("name", ["matmul_bias_relu", "conv2d_relu", "softmax", "sum_last_axis"])
def test_cuda_lowering_is_thread_bound_and_builds_cuda_source(engine, name):
    cached = engine.lower(CASES[name][0](), "cuda")
    script = cached.funcs.script()
    assert "threadIdx.x" in script
    if name == "matmul_bias_relu":
        assert 'scope="shared' in script  # dlight's Matmul rule, not a plain thread binding
    lib = tvm.compile(cached.funcs, target="cuda")
    source = lib.mod.imports[0].inspect_source()
    assert "__global__" in source


# -- property: every rule on every block, on random functions ------------------------------------


@contextlib.contextmanager
def _schedule_everything() -> Iterator[None]:
    """Drop the size threshold, so even tiny random kernels get every default rule."""
    saved = _schedule._MIN_PARALLEL_WORK
    _schedule._MIN_PARALLEL_WORK = 0
    engine = global_engine()
    with silenced():
        engine.clear()
    try:
        yield
    finally:
        _schedule._MIN_PARALLEL_WORK = saved
        with silenced():
            engine.clear()


# The scan fallbacks are left out: argmax of a cumsum/cumprod output returns int32 where Relax
# says int64, with or without schedules (a tracer issue of the fallback lowering, not a rule's).
OPS = [name for name in OP_NAMES if name not in ("cumsum", "cumprod")]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_rule_keeps_results_on_random_functions(data):
    func = data.draw(relax_functions(OPS, max_ops=4), label="func")
    inputs = data.draw(input_arrays(func), label="inputs")
    with _schedule_everything():
        assert_matches_new_path(func, *inputs, seed=inputs.seed)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_rule_keeps_results_on_random_functions_with_symbolic_dims(data):
    func = data.draw(relax_functions(OPS, max_ops=3, symbolic=True), label="func")
    inputs = data.draw(input_arrays(func), label="inputs")
    with _schedule_everything():
        assert_matches_new_path(func, *inputs, seed=inputs.seed)


# -- threads --------------------------------------------------------------------------------------


def test_threads_default_to_the_physical_cores_unless_the_user_chose(monkeypatch):
    from compile_engine_compat import threads

    monkeypatch.delenv("TVM_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    threads.configure()
    assert int(os.environ["TVM_NUM_THREADS"]) == threads.physical_cores() >= 1
    monkeypatch.setenv("TVM_NUM_THREADS", "1")
    threads.configure()
    assert os.environ["TVM_NUM_THREADS"] == "1"
    monkeypatch.delenv("TVM_NUM_THREADS")
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    threads.configure()
    assert "TVM_NUM_THREADS" not in os.environ


def _resnet_block():
    # conv-scale-relu-conv-add-relu: the second conv's zero-padded input is a consumer of the
    # first conv's tile with a larger domain (58x58 from 56x56 rows).
    def body(bb, x, w1, w2, scale):
        y = bb.emit(R.nn.conv2d(x, w1, padding=[1, 1]))
        y = bb.emit(R.nn.relu(R.multiply(y, scale)))
        z = bb.emit(R.nn.conv2d(y, w2, padding=[1, 1]))
        return R.nn.relu(R.add(z, x))

    shapes = {"x": (1, 16, 28, 28), "w1": (16, 16, 3, 3), "w2": (16, 16, 3, 3), "scale": (16, 1, 1)}
    return build("main", [(name, shape, F32) for name, shape in shapes.items()], body), shapes


@pytest.mark.parametrize("target", _HOST_TARGETS[:2], ids=["generic", "host"])
def test_no_rule_leaves_part_of_a_block_unwritten(engine, target):
    # Regression: the tile epilogue once took in the next conv's pad, whose border rows no loop
    # then wrote: read uninitialized, 3.4% of a ResNet block's outputs were wrong on a first call.
    func, shapes = _resnet_block()
    cached = engine.lower(func, target)
    assert _schedule.uncovered_blocks(cached.schedule) == []
    arrays = [f32(*shape) for shape in shapes.values()]
    (out,) = run_jit(engine.jit(func, target), cached, *arrays)
    x, w1, w2, scale = arrays
    expected = np.maximum(_conv3x3(np.maximum(_conv3x3(x, w1) * scale, 0), w2) + x, 0)
    assert compare(out, expected, REFERENCE_TOLERANCES) == ""


def _conv3x3(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    height, width = x.shape[2:]
    windows = np.stack(
        [padded[:, :, dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)], -1
    )  # (n, c, h, w, 9)
    return np.einsum("nchwk,ock->nohw", windows, w.reshape(w.shape[0], w.shape[1], 9))


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_scheduled_block_runs_over_its_whole_domain(engine, name):
    make, _, _ = CASES[name]
    assert _schedule.uncovered_blocks(engine.lower(make(), "llvm").schedule) == []
