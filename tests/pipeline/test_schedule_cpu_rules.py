"""The CPU rules other than the packed GEMM: which rule a block gets, and what it makes of it."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build, sym

from compile_engine_compat.testing import assert_matches_new_path
from pipeline.schedule_cases import CASES, F32, R, f32, matmul_bias_relu


@pytest.mark.parametrize("name", sorted(CASES))
def test_scheduled_kernels_match_the_new_path_and_the_unscheduled_kernel(
    engine, parallel_rules, name
):
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


@pytest.mark.parametrize("name", ["max_pool_padded", "avg_pool_padded"])
def test_a_pooling_window_reads_through_its_pad_without_a_padded_copy(engine, name):
    cached = engine.lower(CASES[name][0](), "llvm")
    unscheduled = cached.prim_func.script()
    assert "T.if_then_else" in unscheduled and "pad_temp" in unscheduled  # TOPI pads first
    scheduled = cached.funcs.script()
    assert "pad_temp" not in scheduled  # the border is a condition on the read
    assert "T.if_then_else" in scheduled


@pytest.mark.parametrize(
    ("shape", "tiles"),
    [
        ((1, 112, 112, 64), 56 * 56),  # ResNet-18's: one tile per output pixel, all 64 channels
        ((1, 12, 12, 64), 6 * 6 * 2),  # 36 pixels: too few for 64-channel tiles, 32 each
    ],
)
def test_a_pooling_tile_takes_more_channels_while_enough_parallel_tiles_remain(
    engine, parallel_rules, shape, tiles
):
    func = build(
        "main",
        [("x", shape, F32)],
        lambda bb, x: R.nn.max_pool2d(x, (3, 3), (2, 2), (1, 1, 1, 1), layout="NHWC"),
    )
    script = engine.lower(func, "llvm").funcs.script()
    assert f"T.parallel(T.int64({tiles}))" in script
    x = f32(*shape)
    assert_matches_new_path(func, x)


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
    func = matmul_bias_relu()
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


def _matmul(bb, a, b):
    return R.matmul(a, b)


def _relu(bb, x):
    return R.nn.relu(x)


@pytest.mark.parametrize(
    ("shapes", "body", "parallel"),
    [
        # 64 x 128 x 96 = 786K multiply-adds: scheduled (a packed GEMM), on the calling thread.
        ([(64, 128), (128, 96)], _matmul, False),
        ([(128, 128), (128, 96)], _matmul, True),
        # 32K elements: vectorized, on the calling thread; 128K: on the pool.
        ([(128, 256)], _relu, False),
        ([(512, 256)], _relu, True),
    ],
)
def test_blocks_below_a_pool_wake_up_keep_their_rule_on_one_thread(engine, shapes, body, parallel):
    func = build("main", [(f"x{i}", shape, F32) for i, shape in enumerate(shapes)], body)
    script = engine.lower(func, "llvm").funcs.script()
    assert "T.vectorized" in script  # the rule applied either way
    assert ("T.parallel" in script) is parallel
    assert_matches_new_path(func, *[f32(*shape) for shape in shapes])


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
