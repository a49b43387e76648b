"""Differential tests: ``engine.jit`` output equals ``tvm.compile`` + ``relax.VirtualMachine``.

Each case is one Relax function; the shim traces it to ONE PrimFunc, the new path lowers it op by
op through the VM. Same inputs, same outputs (float tolerance: different loop structure may
reassociate float sums).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build, run_jit, run_new_path, sym
from tvm import relax

R = relax.op
NN = relax.op.nn
F32 = "float32"

rng = np.random.default_rng(1234)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(F32)


def positive(*shape: int) -> np.ndarray:
    return (rng.random(shape) + 0.5).astype(F32)


Case = tuple[str, list[tuple[str, tuple[Any, ...], str]], Callable[..., Any], list[np.ndarray]]

UNARY = [
    "exp",
    "negative",
    "abs",
    "tanh",
    "sigmoid",
    "sqrt",
    "log",
    "floor",
    "ceil",
    "sin",
    "cos",
    "square",
    "rsqrt",
]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power"]


def _unary_cases() -> list[Case]:
    cases = []
    for name in UNARY:
        data = positive(3, 4) if name in ("sqrt", "log", "rsqrt") else f32(3, 4)
        cases.append((name, [("x", (3, 4), F32)], lambda bb, x, n=name: getattr(R, n)(x), [data]))
    return cases


def _binary_cases() -> list[Case]:
    cases = []
    for name in BINARY:
        lhs = positive(2, 3, 4) if name == "power" else f32(2, 3, 4)
        cases.append(
            (
                f"{name}_broadcast",
                [("x", (2, 3, 4), F32), ("y", (3, 1), F32)],
                lambda bb, x, y, n=name: getattr(R, n)(x, y),
                [lhs, positive(3, 1)],
            )
        )
    return cases


CASES: list[Case] = [
    *_unary_cases(),
    *_binary_cases(),
    ("relu", [("x", (3, 4), F32)], lambda bb, x: NN.relu(x), [f32(3, 4)]),
    ("gelu", [("x", (3, 4), F32)], lambda bb, x: NN.gelu(x), [f32(3, 4)]),
    ("silu", [("x", (3, 4), F32)], lambda bb, x: NN.silu(x), [f32(3, 4)]),
    ("softmax", [("x", (3, 5), F32)], lambda bb, x: NN.softmax(x, axis=-1), [f32(3, 5)]),
    ("log_softmax", [("x", (3, 5), F32)], lambda bb, x: NN.log_softmax(x), [f32(3, 5)]),
    ("sum", [("x", (3, 5), F32)], lambda bb, x: R.sum(x, axis=[1]), [f32(3, 5)]),
    (
        "mean_keepdims",
        [("x", (3, 5), F32)],
        lambda bb, x: R.mean(x, axis=[0], keepdims=True),
        [f32(3, 5)],
    ),
    ("max", [("x", (3, 5), F32)], lambda bb, x: R.max(x, axis=[1]), [f32(3, 5)]),
    ("argmax", [("x", (3, 5), F32)], lambda bb, x: R.argmax(x, axis=1), [f32(3, 5)]),
    (
        "matmul",
        [("x", (3, 4), F32), ("w", (4, 5), F32)],
        lambda bb, x, w: R.matmul(x, w),
        [f32(3, 4), f32(4, 5)],
    ),
    (
        "batch_matmul",
        [("x", (2, 3, 4), F32), ("w", (2, 4, 5), F32)],
        lambda bb, x, w: R.matmul(x, w),
        [f32(2, 3, 4), f32(2, 4, 5)],
    ),
    ("reshape", [("x", (2, 6), F32)], lambda bb, x: R.reshape(x, (3, -1)), [f32(2, 6)]),
    (
        "permute_dims",
        [("x", (2, 3, 4), F32)],
        lambda bb, x: R.permute_dims(x, [2, 0, 1]),
        [f32(2, 3, 4)],
    ),
    (
        "concat",
        [("x", (2, 3), F32), ("y", (4, 3), F32)],
        lambda bb, x, y: R.concat([x, y], axis=0),
        [f32(2, 3), f32(4, 3)],
    ),
    (
        "strided_slice",
        [("x", (6, 4), F32)],
        lambda bb, x: R.strided_slice(x, axes=[0], begin=[1], end=[5], strides=[2]),
        [f32(6, 4)],
    ),
    (
        "take",
        [("x", (5, 3), F32), ("i", (4,), "int64")],
        lambda bb, x, i: R.take(x, i, axis=0),
        [f32(5, 3), np.array([0, 4, 2, 2], "int64")],
    ),
    (
        "where",
        [("c", (3, 4), "bool"), ("x", (3, 4), F32), ("y", (3, 4), F32)],
        lambda bb, c, x, y: R.where(c, x, y),
        [rng.random((3, 4)) > 0.5, f32(3, 4), f32(3, 4)],
    ),
    ("astype_f16", [("x", (3, 4), F32)], lambda bb, x: R.astype(x, "float16"), [f32(3, 4)]),
    ("astype_i32", [("x", (3, 4), F32)], lambda bb, x: R.astype(x, "int32"), [f32(3, 4) * 10]),
    ("clip", [("x", (3, 4), F32)], lambda bb, x: R.clip(x, -0.5, 0.5), [f32(3, 4)]),
    ("expand_dims", [("x", (3, 4), F32)], lambda bb, x: R.expand_dims(x, axis=1), [f32(3, 4)]),
    ("squeeze", [("x", (3, 1, 4), F32)], lambda bb, x: R.squeeze(x, axis=[1]), [f32(3, 1, 4)]),
    ("broadcast_to", [("x", (1, 4), F32)], lambda bb, x: R.broadcast_to(x, (3, 4)), [f32(1, 4)]),
    ("flip", [("x", (3, 4), F32)], lambda bb, x: R.flip(x, axis=1), [f32(3, 4)]),
    ("tile", [("x", (2, 3), F32)], lambda bb, x: R.tile(x, (2, 2)), [f32(2, 3)]),
    ("cumsum", [("x", (3, 4), F32)], lambda bb, x: R.cumsum(x, axis=1), [f32(3, 4)]),
    ("cumprod", [("x", (3, 4), F32)], lambda bb, x: R.cumprod(x, axis=0), [positive(3, 4)]),
    ("sort", [("x", (3, 6), F32)], lambda bb, x: R.sort(x, axis=1, descending=True), [f32(3, 6)]),
    ("argsort", [("x", (7,), F32)], lambda bb, x: R.argsort(x), [rng.permutation(7).astype(F32)]),
    ("topk", [("x", (3, 6), F32)], lambda bb, x: R.topk(x, k=2, axis=1), [f32(3, 6)]),
    (
        "layer_norm",
        [("x", (2, 3, 8), F32), ("g", (8,), F32), ("b", (8,), F32)],
        lambda bb, x, g, b: NN.layer_norm(x, g, b, axes=[-1]),
        [f32(2, 3, 8), f32(8), f32(8)],
    ),
    (
        "rms_norm",
        [("x", (2, 8), F32), ("g", (8,), F32)],
        lambda bb, x, g: NN.rms_norm(x, g, axes=[-1]),
        [f32(2, 8), f32(8)],
    ),
    (
        "conv1d",
        [("x", (1, 3, 10), F32), ("w", (4, 3, 3), F32)],
        lambda bb, x, w: NN.conv1d(x, w, padding=1),
        [f32(1, 3, 10), f32(4, 3, 3)],
    ),
    (
        "max_pool2d",
        [("x", (1, 2, 6, 6), F32)],
        lambda bb, x: NN.max_pool2d(x, pool_size=(2, 2), strides=(2, 2)),
        [f32(1, 2, 6, 6)],
    ),
    (
        "avg_pool2d",
        [("x", (1, 2, 6, 6), F32)],
        lambda bb, x: NN.avg_pool2d(x, pool_size=(3, 3), padding=(1, 1)),
        [f32(1, 2, 6, 6)],
    ),
    (
        "int_arith",
        [("x", (6,), "int32"), ("y", (6,), "int32")],
        lambda bb, x, y: R.multiply(R.add(x, y), y),
        [np.arange(6, dtype="int32"), np.arange(6, 12, dtype="int32")],
    ),
    (
        "float16_add",
        [("x", (4,), "float16"), ("y", (4,), "float16")],
        lambda bb, x, y: R.add(x, y),
        [f32(4).astype("float16"), f32(4).astype("float16")],
    ),
    # multi-op graphs
    (
        "conv2d_bias_relu",
        [("x", (1, 3, 8, 8), F32), ("w", (4, 3, 3, 3), F32), ("b", (1, 4, 1, 1), F32)],
        lambda bb, x, w, b: NN.relu(bb.emit(R.add(bb.emit(NN.conv2d(x, w, padding=1)), b))),
        [f32(1, 3, 8, 8), f32(4, 3, 3, 3), f32(1, 4, 1, 1)],
    ),
    (
        "softmax_matmul",
        [("x", (4, 8), F32), ("w", (8, 3), F32)],
        lambda bb, x, w: R.matmul(bb.emit(NN.softmax(x)), w),
        [f32(4, 8), f32(8, 3)],
    ),
    (
        "attention_like",
        [("q", (2, 4, 8), F32), ("k", (2, 4, 8), F32)],
        lambda bb, q, k: NN.softmax(bb.emit(R.matmul(q, bb.emit(R.permute_dims(k, [0, 2, 1]))))),
        [f32(2, 4, 8), f32(2, 4, 8)],
    ),
    (
        "tuple_output_split",
        [("x", (6, 2), F32)],
        lambda bb, x: (
            bb.emit(relax.TupleGetItem(bb.emit(R.split(x, 3, axis=0)), 0)),
            bb.emit(R.exp(x)),
        ),
        [f32(6, 2)],
    ),
    (
        "shared_subexpression",
        [("x", (3, 3), F32)],
        lambda bb, x: (lambda e: R.add(e, bb.emit(R.multiply(e, e))))(bb.emit(R.exp(x))),
        [f32(3, 3)],
    ),
    (
        "scalar_and_tensor_constants",
        [("x", (2, 3), F32)],
        lambda bb, x: R.multiply(
            bb.emit(R.add(x, relax.const(1.5, F32))),
            relax.const(np.arange(6, dtype=F32).reshape(2, 3)),
        ),
        [f32(2, 3)],
    ),
    (
        "placeholder_bypass",  # upstream test_compile_placeholder_bypass
        [("x", (2, 3), F32), ("y", (2, 3), F32), ("z", (2, 3), F32)],
        lambda bb, x, y, z: (x, bb.emit(R.concat([y, z], axis=0))),
        [f32(2, 3), f32(2, 3), f32(2, 3)],
    ),
    (
        "tuple_dup",  # upstream test_compile_tuple_dup
        [("x", (4,), F32)],
        lambda bb, x: (lambda lg: (lg, lg))(bb.emit(R.log(x))),
        [positive(4)],
    ),
    ("identity_and_repeat", [("x", (3,), F32)], lambda bb, x: (x, bb.emit(R.exp(x)), x), [f32(3)]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_jit_matches_new_path(engine, case):
    _, params, body, arrays = case
    func = build("main", params, body)
    kernel = engine.jit(func, "llvm")
    got = run_jit(kernel, engine.lower(func, "llvm"), *arrays)
    expected = run_new_path(func, *arrays)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape
        if np.issubdtype(e.dtype, np.floating):
            tol = 1e-3 if e.dtype == np.float16 else 1e-5
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, e)


def test_at_least_thirty_distinct_ops_are_covered():
    ops: set[str] = set()
    from compile_engine_compat.pipeline.trace import op_names

    for _, params, body, _ in CASES:
        ops.update(op_names(build("main", params, body)))
    assert len(ops) >= 30, sorted(ops)


@pytest.mark.parametrize("n", [1, 5])
def test_symbolic_shape_function(engine, n):
    m = sym("n")
    func = build(
        "main",
        [("x", (m, 8), F32), ("w", (8, 4), F32)],
        lambda bb, x, w: R.sum(bb.emit(NN.softmax(bb.emit(R.matmul(x, w)))), axis=[1]),
    )
    arrays = [f32(n, 8), f32(8, 4)]
    got = run_jit(engine.jit(func, "llvm"), engine.lower(func, "llvm"), *arrays)
    np.testing.assert_allclose(got[0], run_new_path(func, *arrays)[0], rtol=1e-5, atol=1e-5)


def test_tensor_constants_do_not_change_the_signature(engine):
    _, params, body, arrays = next(c for c in CASES if c[0] == "scalar_and_tensor_constants")
    func = build("main", params, body)
    cached = engine.lower(func, "llvm")
    assert len(cached.inputs) == 1 and len(cached.constants) == 1
    kernel = engine.jit(func, "llvm")
    assert kernel.num_inputs == 1
    out = tvm.runtime.empty((2, 3), F32, tvm.cpu())
    kernel(tvm.runtime.tensor(arrays[0]), out)
    expected = (arrays[0] + 1.5) * np.arange(6, dtype=F32).reshape(2, 3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
