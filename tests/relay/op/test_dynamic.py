"""nn.batch_matmul on relay.Any() batches, where Relax's matmul infers no result shape: Relay's
max-batch rule, against NumPy, and its run-time checks as errors (never a wrong result)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay

RNG = np.random.default_rng(11)
X = RNG.standard_normal((5, 4, 6)).astype("float32")
Y = RNG.standard_normal((5, 6, 3)).astype("float32")


def _run(x_shape, y_shape, x, y, **attrs):
    a = relay.var("a", relay.TensorType(x_shape))
    b = relay.var("b", relay.TensorType(y_shape))
    func = relay.Function([a, b], relay.nn.batch_matmul(a, b, **attrs))
    mod = tvm.IRModule.from_expr(func)
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(x, y).numpy()


@pytest.mark.parametrize(
    ("x_any", "y_any"),
    [("batch", "none"), ("batch", "batch"), ("none", "all"), ("batch", "all"), ("all", "all")],
)
@pytest.mark.parametrize(("transpose_a", "transpose_b"), [(False, False), (True, True)])
def test_any_batches_match_numpy(x_any, y_any, transpose_a, transpose_b):
    x = X.transpose(0, 2, 1).copy() if transpose_a else X
    y = Y.transpose(0, 2, 1).copy() if transpose_b else Y

    def shape(data, which):
        if which == "none":
            return data.shape
        if which == "batch":
            return (relay.Any(), *data.shape[1:])
        return tuple(relay.Any() for _ in data.shape)

    out = _run(
        shape(x, x_any), shape(y, y_any), x, y, transpose_a=transpose_a, transpose_b=transpose_b
    )
    np.testing.assert_allclose(out, X @ Y, rtol=1e-5, atol=1e-6)


def test_a_batch_of_one_broadcasts():
    out = _run((relay.Any(), 4, 6), (relay.Any(), 6, 3), X[:1].copy(), Y, transpose_b=False)
    np.testing.assert_allclose(out, X[:1] @ Y, rtol=1e-5, atol=1e-6)


def test_mismatched_batches_or_lengths_raise_at_the_call():
    with pytest.raises(AssertionError, match="batches neither match nor are 1"):
        _run((relay.Any(), 4, 6), (relay.Any(), 6, 3), X[:3].copy(), Y, transpose_b=False)
    with pytest.raises(AssertionError, match="reduction lengths differ"):
        _run((relay.Any(), 4, 6), (5, relay.Any(), 3), X, Y[:, :5].copy(), transpose_b=False)


def test_static_batches_keep_relaxs_own_matmul():
    a, b = relay.var("a", shape=(5, 4, 6)), relay.var("b", shape=(5, 6, 3))
    text = tvm.IRModule.from_expr(
        relay.Function([a, b], relay.nn.batch_matmul(a, b, transpose_b=False))
    ).script()
    assert "R.matmul" in text and "call_tir" not in text


# -- broadcasting ops on Any dimensions ------------------------------------------------------
def _binary(op, x_shape, y_shape, x, y):
    a, b = relay.var("a", shape=x_shape), relay.var("b", shape=y_shape)
    mod = tvm.IRModule.from_expr(relay.Function([a, b], op(a, b)))
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(x, y).numpy()


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "x_data", "y_data"),
    [
        ((relay.Any(),), (3, 2), (1,), (3, 2)),  # the Any is 1 at run time
        ((relay.Any(),), (3, 2), (2,), (3, 2)),  # ... or the other dimension
        ((relay.Any(), relay.Any()), (relay.Any(),), (4, 1), (5,)),
        ((relay.Any(), 1), (relay.Any(), relay.Any()), (3, 1), (3, 4)),
    ],
)
def test_broadcasting_any_dimensions_match_numpy(x_shape, y_shape, x_data, y_data):
    x = RNG.standard_normal(x_data).astype("float32")
    y = RNG.standard_normal(y_data).astype("float32")
    np.testing.assert_allclose(_binary(relay.add, x_shape, y_shape, x, y), x + y, rtol=1e-6)
    out = _binary(relay.greater, x_shape, y_shape, x, y)
    np.testing.assert_array_equal(out, x > y)


def test_where_broadcasts_three_any_operands():
    c = relay.var("c", shape=(relay.Any(), 1), dtype="bool")
    a, b = relay.var("a", shape=(relay.Any(),)), relay.var("b", shape=(1, relay.Any()))
    mod = tvm.IRModule.from_expr(relay.Function([c, a, b], relay.where(c, a, b)))
    cond = RNG.standard_normal((3, 1)) > 0
    x, y = RNG.standard_normal(4).astype("float32"), RNG.standard_normal((1, 4)).astype("float32")
    out = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(cond, x, y).numpy()
    np.testing.assert_array_equal(out, np.where(cond, x, y))


def test_dimensions_that_do_not_broadcast_raise_at_the_call():
    x = RNG.standard_normal(3).astype("float32")
    with pytest.raises(AssertionError, match=r"relay\.add: broadcast dimensions"):
        _binary(relay.add, (relay.Any(),), (3, 2), x, RNG.standard_normal((3, 2)).astype("float32"))


def test_a_static_batch_of_one_broadcasts_against_an_any_batch():
    out = _run((1, 4, 6), (relay.Any(), 6, 3), X[:1].copy(), Y, transpose_b=False)
    np.testing.assert_allclose(out, X[:1] @ Y, rtol=1e-5, atol=1e-6)


def test_shape_tensors_build_the_dyn_twins_read_at_run_time():
    """Relay's dyn.* ops: a shape given as a tensor is read when the function runs, and the
    result's dimensions are Any, as Relay typed them."""
    shape = relay.var("shape", shape=(3,), dtype="int64")
    reps = relay.var("reps", shape=(2,), dtype="int32")
    x = relay.var("x", shape=(4, 1))
    wide = relay.broadcast_to(x, shape)
    assert wide.op.name == "dyn.broadcast_to" and relay.op.get("dyn.broadcast_to") is wide.op
    typed = relay.testing.run_infer_type(wide).checked_type
    assert typed == relay.TensorType((relay.Any(),) * 3, "float32")
    outs = [wide, relay.zeros(shape, "int64"), relay.full(relay.const(2.0), shape)]
    outs.append(relay.tile(x, reps))
    depth = relay.var("depth", shape=(), dtype="int32")
    outs.append(
        relay.one_hot(relay.const([2, 0]), relay.const(1.0), relay.const(0.0), depth, 0, "float32")
    )
    codes = relay.var("codes", shape=(2,), dtype="int64")
    outs.append(relay.reshape(x, codes))  # Relay's codes, resolved when the function runs
    func = relay.Function([x, shape, reps, depth, codes], relay.Tuple(outs))
    mod = tvm.IRModule.from_expr(func)
    data = np.arange(4, dtype="float32").reshape(4, 1)
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    values = [np.array([2, 4, 3], "int64"), np.array([2, 3], "int32"), np.array(3, "int32")]
    got = run(data, *values, np.array([-1, 2]))
    np.testing.assert_array_equal(got[0].numpy(), np.broadcast_to(data, (2, 4, 3)))
    np.testing.assert_array_equal(got[1].numpy(), np.zeros((2, 4, 3), "int64"))
    np.testing.assert_array_equal(got[2].numpy(), np.full((2, 4, 3), 2.0, "float32"))
    np.testing.assert_array_equal(got[3].numpy(), np.tile(data, (2, 3)))
    np.testing.assert_array_equal(got[4].numpy(), np.eye(3, dtype="float32")[:, [2, 0]])
    np.testing.assert_array_equal(got[5].numpy(), data.reshape(2, 2))
    with pytest.raises(relay.RelayTypeError, match="1-d numeric tensor"):
        relay.testing.run_infer_type(relay.zeros(relay.var("s", shape=(2, 2)), "float32"))
