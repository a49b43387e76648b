"""Injective stages inlined on the TE graph: the same stages as the s_tir pass, in linear time."""

from __future__ import annotations

import numpy as np
from _builders import build
from tvm import relax, te, topi

from compile_engine_compat.pipeline.fuse import fuse_injective

R = relax.op

_CHAIN = [  # (Relax op, NumPy op) pairs that keep values bounded over hundreds of steps
    (lambda v, y: R.add(v, y), lambda v, y: v + y),
    (lambda v, y: R.exp(v), lambda v, y: np.exp(v)),
    (lambda v, y: R.multiply(v, y), lambda v, y: v * y),
    (lambda v, y: R.negative(v), lambda v, y: -v),
    (lambda v, y: R.sigmoid(v), lambda v, y: 1 / (1 + np.exp(-v))),
    (lambda v, y: R.subtract(v, y), lambda v, y: v - y),
    (lambda v, y: R.abs(v), lambda v, y: np.abs(v)),
]


def _stages(script: str) -> int:
    return script.count("T.sblock(") - 1  # the root block is not a stage


def _run(engine, func, *inputs, out_shape, dtype="float32"):
    out = np.empty(out_shape, dtype)
    engine.jit(func, "llvm")(*inputs, out)
    return out


def test_a_300_op_chain_becomes_one_stage_and_stays_right(engine):
    count = 300

    def chain(bb, x, y):
        v = x
        for i in range(count):
            v = bb.emit(_CHAIN[i % len(_CHAIN)][0](v, y))
        return v

    func = build("main", [("x", (3, 5), "float32"), ("y", (3, 5), "float32")], chain)
    cached = engine.lower(func, "llvm")
    assert _stages(cached.funcs.script()) == 1
    assert _stages(cached.prim_func.script()) == count  # prim_func: before any inlining
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5)).astype("float32")
    y = rng.uniform(0.5, 1.0, (3, 5)).astype("float32")
    expected = x.astype("float64")
    for i in range(count):
        expected = _CHAIN[i % len(_CHAIN)][1](expected, y)
    got = _run(engine, func, x, y, out_shape=(3, 5))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_broadcast_and_transposed_reads_substitute_their_indices(engine):
    def body(bb, x, b):
        v = bb.emit(R.exp(bb.emit(R.add(x, b))))  # b broadcast along the rows
        v = bb.emit(R.permute_dims(v, [1, 0]))
        return R.sigmoid(bb.emit(R.multiply(v, v)))

    func = build("main", [("x", (4, 6), "float32"), ("b", (6,), "float32")], body)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6)).astype("float32")
    b = rng.standard_normal(6).astype("float32")
    v = np.exp(x + b).T
    expected = 1 / (1 + np.exp(-(v * v)))
    np.testing.assert_allclose(_run(engine, func, x, b, out_shape=(6, 4)), expected, rtol=1e-5)
    assert _stages(engine.lower(func, "llvm").funcs.script()) == 1


def test_a_multi_output_reduction_after_inlined_stages_is_left_to_the_s_tir_pass(engine):
    def body(bb, x):
        return R.argmax(bb.emit(R.add(bb.emit(R.exp(x)), x)), axis=1)

    func = build("main", [("x", (5, 7), "float32")], body)
    x = np.random.default_rng(2).standard_normal((5, 7)).astype("float32")
    got = _run(engine, func, x, out_shape=(5,), dtype="int64")
    np.testing.assert_array_equal(got, np.argmax(np.exp(x) + x, axis=1))


def test_outputs_keep_their_names_shapes_and_dtypes():
    a = te.placeholder((4, 3), "float32", name="a")
    b = topi.exp(a)
    c = topi.add(b, a)
    d = topi.sum(c, axis=1)  # a reduction: c stays, b is inlined into it
    e = topi.negative(c)  # a second output reading c
    fused = fuse_injective([d, e])
    assert [t.op.name for t in fused] == [d.op.name, e.op.name]
    assert [[int(s) for s in t.shape] for t in fused] == [[4], [4, 3]]
    assert [t.dtype for t in fused] == ["float32", "float32"]
    # c was rebuilt without b: it now reads the placeholder only.
    (c_new,) = fused[1].op.input_tensors
    assert c_new.op.name == c.op.name and list(c_new.op.input_tensors) == [a]


def test_a_graph_with_nothing_to_inline_is_returned_as_is():
    a = te.placeholder((4, 3), "float32", name="a")
    out = topi.sum(a, axis=0)
    assert fuse_injective([out])[0].same_as(out)
