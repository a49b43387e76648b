"""``CombineParallelConv2D``/``Dense``/``BatchMatmul`` on the Relay graph
(``transform/combine_parallel.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> list[np.ndarray]:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(a) for a in args])
    return [o.numpy() for o in out]


def _shape_of(var: relay.Var) -> tuple[int, ...]:
    ty: Any = var.type_annotation
    return tuple(int(d) for d in ty.shape)


def _slice(y: relay.Expr, begin: list[int], end: list[int]) -> relay.Expr:
    return relay.strided_slice(y, begin, end, strides=[1] * len(begin), slice_mode="size")


def test_conv2d_branches_become_one_convolution_with_the_scale_and_relu_that_follow():
    x = relay.var("x", shape=(1, 2, 4, 4))
    w1, w2 = relay.var("w1", shape=(2, 2, 1, 1)), relay.var("w2", shape=(3, 2, 1, 1))
    s1, s2 = relay.var("s1", shape=(2, 1, 1)), relay.var("s2", shape=(3, 1, 1))
    args = [x, w1, w2, s1, s2]
    y1 = relay.nn.relu(relay.nn.conv2d(x, w1) * s1)
    y2 = relay.nn.relu(relay.nn.conv2d(x, w2) * s2)
    mod = tvm.IRModule.from_expr(relay.Function(args, relay.Tuple([y1, y2])))
    out = T.CombineParallelConv2D(min_num_branches=2)(mod)

    w = relay.concatenate([w1, w2], axis=0)
    y = relay.nn.relu(relay.nn.conv2d(x, w, channels=5) * relay.concatenate([s1, s2], axis=0))
    expected = relay.Function(
        args, relay.Tuple([_slice(y, [0, 0], [-1, 2]), _slice(y, [0, 2], [-1, 3])])
    )
    tvm.ir.assert_structural_equal(out["main"], expected, map_free_vars=True)
    assert T.CombineParallelConv2D()(mod)["main"].same_as(mod["main"])  # 2 < 3 branches

    rng = np.random.default_rng(0)
    data = [rng.random(_shape_of(a), dtype="float32") for a in args]
    conv = [np.einsum("nchw,oc->nohw", data[0], w[:, :, 0, 0]) for w in data[1:3]]
    for got, c, s in zip(_run(out, *data), conv, data[3:]):
        np.testing.assert_allclose(got, np.maximum(c * s, 0), rtol=1e-5, atol=1e-6)


def test_dense_branches_become_a_batch_matmul_split_back():
    x = relay.var("x", shape=(2, 4))
    w1, w2 = relay.var("w1", shape=(3, 4)), relay.var("w2", shape=(3, 4))
    mod = tvm.IRModule.from_expr(
        relay.Function([x, w1, w2], relay.Tuple([relay.nn.dense(x, w1), relay.nn.dense(x, w2)]))
    )
    out = T.CombineParallelDense(min_num_branches=2)(mod)
    y = relay.nn.batch_matmul(relay.stack([x, x], axis=0), relay.stack([w1, w2], axis=0))
    parts = relay.split(y, 2)
    body = relay.Tuple([relay.squeeze(parts[0], [0]), relay.squeeze(parts[1], [0])])
    tvm.ir.assert_structural_equal(
        out["main"], relay.Function([x, w1, w2], body), map_free_vars=True
    )


def test_dense_branches_become_one_dense_of_every_unit_and_keep_the_numbers():
    x = relay.var("x", shape=(2, 4))
    w1, w2 = relay.var("w1", shape=(3, 4)), relay.var("w2", shape=(5, 4))
    b1, b2 = relay.var("b1", shape=(3,)), relay.var("b2", shape=(5,))
    args = [x, w1, w2, b1, b2]
    body = relay.Tuple([relay.nn.dense(x, w1) + b1, relay.nn.dense(x, w2) + b2])
    mod = tvm.IRModule.from_expr(relay.Function(args, body))
    out = T.CombineParallelDense(min_num_branches=2, to_batch=False)(mod)
    y = relay.nn.dense(x, relay.concatenate([w1, w2], axis=0), units=8)
    y = y + relay.concatenate([b1, b2], axis=0)
    expected = relay.Function(
        args, relay.Tuple([_slice(y, [0, 0], [-1, 3]), _slice(y, [0, 3], [-1, 5])])
    )
    tvm.ir.assert_structural_equal(out["main"], expected, map_free_vars=True)

    rng = np.random.default_rng(1)
    data = [rng.random(_shape_of(a), dtype="float32") for a in args]
    got = _run(out, *data)
    np.testing.assert_allclose(got[0], data[0] @ data[1].T + data[3], rtol=1e-5)
    np.testing.assert_allclose(got[1], data[0] @ data[2].T + data[4], rtol=1e-5)


def test_batch_matmul_branches_concatenate_their_weights_on_axis_1():
    x = relay.var("x", shape=(2, 3, 4))
    w1, w2 = relay.var("w1", shape=(2, 5, 4)), relay.var("w2", shape=(2, 5, 4))
    body = relay.Tuple([relay.nn.batch_matmul(x, w1), relay.nn.batch_matmul(x, w2)])
    mod = tvm.IRModule.from_expr(relay.Function([x, w1, w2], body))
    out = T.CombineParallelBatchMatmul(min_num_branches=2)(mod)
    y = relay.nn.batch_matmul(x, relay.concatenate([w1, w2], axis=1))
    body = relay.Tuple([_slice(y, [0, 0, 0], [-1, -1, 5]), _slice(y, [0, 0, 5], [-1, -1, 5])])
    tvm.ir.assert_structural_equal(
        out["main"], relay.Function([x, w1, w2], body), map_free_vars=True
    )


def test_min_num_branches_must_be_an_int():
    with pytest.raises(TypeError, match="min_num_branches"):
        T.CombineParallelConv2D(min_num_branches="2")  # type: ignore[arg-type]


def test_batching_ops_runs_the_three_with_their_defaults():
    x = relay.var("x", shape=(2, 4))
    ws = [relay.var(f"w{i}", shape=(3, 4)) for i in range(3)]
    mod = tvm.IRModule.from_expr(
        relay.Function([x, *ws], relay.Tuple([relay.nn.dense(x, w) for w in ws]))
    )
    with tvm.transform.PassContext(opt_level=4):
        out = T.BatchingOps()(mod)
    assert relay.analysis.list_op_freqs(out).get("nn.batch_matmul") == 1
