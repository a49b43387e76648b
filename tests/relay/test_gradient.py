"""``relay.transform.gradient`` / ``relay.testing.check_grad`` over ``relax.transform.Gradient``."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError


def test_gradient_gives_the_output_and_the_gradient_of_its_sum():
    x, g = relay.var("x", shape=(3, 4)), relay.var("g", shape=(3, 4))
    forward = relay.Function([x, g], relay.log(x) * g)
    backward = relay.testing.run_infer_type(relay.transform.gradient(forward))
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, (3, 4)).astype("float32")
    b = rng.uniform(size=(3, 4)).astype("float32")
    out, (grad_x, grad_g) = relay.create_executor(target="llvm").evaluate(backward)(a, b)
    np.testing.assert_allclose(out.numpy(), np.log(a) * b, rtol=1e-6)
    np.testing.assert_allclose(grad_x.numpy(), b / a, rtol=1e-5)
    np.testing.assert_allclose(grad_g.numpy(), np.log(a), rtol=1e-5)


def test_check_grad_passes_a_right_gradient_and_catches_a_wrong_one():
    cpu = [("llvm", tvm.cpu())]
    x = relay.var("x", shape=(2, 3), dtype="float64")
    relay.testing.check_grad(relay.Function([x], relay.exp(x)), target_devices=cpu)
    y = relay.var("y", shape=(2,), dtype="float64")
    func = relay.Function([y], relay.exp(y))
    # A coarse step makes the numerical gradient of exp 4% off: a strict check must fail.
    with pytest.raises(AssertionError):
        relay.testing.check_grad(
            func, inputs=[np.array([1.0, 2.0])], eps=0.5, atol=0, rtol=1e-9, target_devices=cpu
        )


def test_an_op_without_a_relax_gradient_is_refused_at_the_call():
    x = relay.var("x", shape=(2,))
    with pytest.raises(UnsupportedRelayError, match=r"relax\.prod"):
        relay.transform.gradient(relay.Function([x], relay.prod(x)))


def test_gradient_takes_the_module_function_a_relay_pass_left():
    x = relay.var("x", shape=(3,))
    mod = relay.transform.ToANormalForm()(tvm.IRModule.from_expr(relay.Function([x], x * x)))
    grad = relay.transform.gradient(mod["main"])  # a Relax function with a Relay origin
    assert grad is not None
    with pytest.raises(TypeError, match=r"relay\.Function"):
        relay.transform.gradient(3)


def test_gradient_is_typed_and_differentiates_tuple_fields():
    x = relay.var("x", shape=(2,))
    y = relay.var("y", shape=(2,))
    tup = relay.Tuple([x, y])
    forward = relay.Function([x, y], relay.TupleGetItem(tup, 0) * relay.TupleGetItem(tup, 1))
    backward = relay.testing.run_infer_type(relay.transform.gradient(forward))
    t = relay.TensorType((2,), "float32")
    assert backward.checked_type == relay.FuncType(
        [t, t], relay.TupleType([t, relay.TupleType([t, t])])
    )
    a, b = np.array([1.0, 2.0], "float32"), np.array([3.0, 5.0], "float32")
    out, (grad_x, grad_y) = relay.create_executor(target="llvm").evaluate(backward)(a, b)
    np.testing.assert_allclose(out.numpy(), a * b)
    np.testing.assert_allclose(grad_x.numpy(), b)
    np.testing.assert_allclose(grad_y.numpy(), a)
