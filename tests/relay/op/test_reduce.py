"""``relay.op.reduce``: every reduction, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.op import reduce

from .cases import Case, data, family_tests

CASES: dict[str, Case] = {
    "sum": Case(
        [data((2, 3, 4))], {"axis": 1, "keepdims": True}, lambda x: x.sum(1, keepdims=True)
    ),
    "mean": Case([data((2, 3, 4))], {"axis": [0, 2]}, lambda x: x.mean((0, 2))),
    "max": Case([data((2, 3, 4))], {"axis": 1, "exclude": True}, lambda x: x.max((0, 2))),
    "min": Case([data((2, 3, 4))], {}, lambda x: x.min()),
    "prod": Case([data((2, 3))], {"axis": -1}, lambda x: x.prod(-1)),
    "variance": Case([data((2, 3))], {"axis": 1}, lambda x: x.var(1)),
    "std": Case([data((2, 3))], {"axis": 0, "keepdims": True}, lambda x: x.std(0, keepdims=True)),
    "mean_variance": Case(
        [data((2, 3, 4))],
        {"axis": 1, "exclude": True, "unbiased": True},
        lambda x: (x.mean((0, 2)), x.var((0, 2), ddof=1)),
    ),
    "mean_std": Case(
        [data((2, 3))],
        {"axis": 1, "keepdims": True},
        lambda x: (x.mean(1, keepdims=True), x.std(1, keepdims=True)),
    ),
    "logsumexp": Case([data((2, 3, 4))], {"axis": [0, 2]}, lambda x: np.log(np.exp(x).sum((0, 2)))),
    "argmax": Case([data((2, 5))], {"axis": 1}, lambda x: x.argmax(1).astype("int32")),
    "argmin": Case([data((2, 5))], {"axis": [0]}, lambda x: x.argmin(0).astype("int32")),
    **{
        name: Case([data((2, 3), "bool")], {"axis": 1}, lambda x, f=fn: f(x, 1))
        for name, fn in (("all", np.all), ("any", np.any))
    },
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(reduce, CASES)


@pytest.mark.parametrize(
    ("axis", "keepdims", "unbiased"),
    [(None, False, True), (1, True, True), ((0, 2), False, False)],
)
def test_variance_std_and_logsumexp_follow_numpy(axis, keepdims, unbiased):
    x = data((3, 4, 5))
    xv = relay.var("x", shape=x.shape)
    ddof = 1 if unbiased else 0
    for build, want in (
        (
            relay.variance(xv, axis, keepdims, False, unbiased),
            x.var(axis, keepdims=keepdims, ddof=ddof),
        ),
        (relay.std(xv, axis, keepdims, False, unbiased), x.std(axis, keepdims=keepdims, ddof=ddof)),
        (relay.logsumexp(xv, axis, keepdims), _logsumexp(x, axis, keepdims)),
    ):
        np.testing.assert_allclose(_run(xv, build, x), want, rtol=1e-5, atol=1e-6)


def _logsumexp(x, axis, keepdims):
    top = x.max(axis, keepdims=True)
    out = np.log(np.exp(x - top).sum(axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis)


def _run(xv, body, *arrays):
    ex = relay.create_executor("graph", target="llvm")
    return ex.evaluate(relay.Function([xv], body))(*arrays).numpy()


def test_unbiased_variance_keeps_symbolic_axes_in_its_type():
    n = tvm.te.var("n")
    xv = relay.var("x", relay.TensorType((n, 4), "float32"))
    typed = relay.testing.run_infer_type(relay.variance(xv, 1, unbiased=True))
    assert typed.checked_type == relay.TensorType((n,), "float32")


@pytest.mark.parametrize(
    ("name", "axis", "keepdims", "want"),
    [
        ("argmax", 1, False, [2, 3]),
        ("argmax", None, True, [[7]]),
        ("argmin", 0, True, [[0, 0, 1, 0]]),
        ("argmax", None, False, 7),
    ],
)
def test_select_last_index_finds_the_last_extreme_as_int32(name, axis, keepdims, want):
    x = np.array([[1, 3, 3, 0], [5, 5, 2, 5]], "float32")
    xv = relay.var("x", shape=x.shape)
    got = _run(xv, getattr(relay, name)(xv, axis, keepdims, False, True), x)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.array(want))


def test_select_last_index_on_a_symbolic_axis_is_refused_at_the_build():
    xv = relay.var("x", relay.TensorType((tvm.te.var("n"), 4), "float32"))
    with pytest.raises(relay.UnsupportedRelayError, match="static length"):
        tvm.IRModule.from_expr(relay.Function([xv], relay.argmax(xv, 0, select_last_index=True)))


def test_argmax_over_several_axes_indexes_the_flattened_reduced_axes():
    x = data((3, 4, 5))
    xv = relay.var("x", shape=x.shape)
    body = relay.argmax(xv, (0, 2), True)
    assert relay.testing.run_infer_type(body).checked_type == relay.TensorType((1, 4, 1), "int32")
    got = _run(xv, body, x)
    np.testing.assert_array_equal(got.ravel(), x.transpose(1, 0, 2).reshape(4, 15).argmax(1))


def test_float16_mean_and_variance_sum_in_float32_as_relay_did():
    # 16K halves of ~0.5: a float16 sum stops at 2048, which made the mean 0.125.
    x = np.random.default_rng(0).uniform(0.45, 0.55, (64, 4, 64)).astype("float16")
    xv = relay.var("x", shape=x.shape, dtype="float16")
    wide = x.astype("float64")
    ex = relay.create_executor("graph", target="llvm")
    mean, var = (
        out.numpy()
        for out in ex.evaluate(relay.Function([xv], relay.mean_variance(xv, (0, 2)).astuple()))(x)
    )
    np.testing.assert_allclose(mean, wide.mean((0, 2)), rtol=2e-3)
    np.testing.assert_allclose(var, wide.var((0, 2)), rtol=2e-2)
    assert mean.dtype == var.dtype == np.float16
    np.testing.assert_allclose(_run(xv, relay.mean(xv), x), wide.mean(), rtol=2e-3)
