"""``relay.transform.gradient`` of the elementwise ops TVM 0.27's Relax has no gradient for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from scipy import special
from tvm import relax

from compile_engine_compat import boundary, relay
from compile_engine_compat.relay._impl.gradient import (
    ELEMENTWISE_DERIVATIVES,
    register_elementwise_gradients,
)

#: Relay op -> (NumPy derivative, input range the op is defined on).
DERIVATIVES: dict[str, tuple[Callable[[Any], Any], tuple[float, float]]] = {
    "erf": (lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), (-2.0, 2.0)),
    "tan": (lambda x: 1 / np.cos(x) ** 2, (-1.0, 1.0)),
    "atan": (lambda x: 1 / (1 + x * x), (-3.0, 3.0)),
    "sinh": (np.cosh, (-2.0, 2.0)),
    "cosh": (np.sinh, (-2.0, 2.0)),
    "asin": (lambda x: 1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "acos": (lambda x: -1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "asinh": (lambda x: 1 / np.sqrt(x * x + 1), (-3.0, 3.0)),
    "acosh": (lambda x: 1 / np.sqrt(x * x - 1), (1.1, 3.0)),
    "atanh": (lambda x: 1 / (1 - x * x), (-0.9, 0.9)),
}


NUMPY_NAMES = {n: f"arc{n[1:]}" for n in ("asin", "acos", "atan", "asinh", "acosh", "atanh")}


def test_every_registered_derivative_is_tested():
    assert {f"relax.{name}" for name in DERIVATIVES} == set(ELEMENTWISE_DERIVATIVES)


#: The shim's module build cannot compile relax.sinh/cosh themselves (TVM's code generation
#: meets an unlowered tirx.sinh); their derivatives are checked on plain TVM below.
FORWARD_FAILS = {"sinh", "cosh"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(set(DERIVATIVES) - FORWARD_FAILS))
def test_gradient_is_the_derivative(name, dtype):
    derivative, (low, high) = DERIVATIVES[name]
    x = np.random.default_rng(0).uniform(low, high, (3, 4)).astype(dtype)
    xv = relay.var("x", shape=x.shape, dtype=dtype)
    backward = relay.transform.gradient(relay.Function([xv], getattr(relay, name)(xv)))
    out, (grad,) = relay.create_executor("debug", target="llvm").evaluate(backward)(x)
    forward = special.erf(x) if name == "erf" else getattr(np, NUMPY_NAMES.get(name, name))(x)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out.numpy(), forward, rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(grad.numpy(), derivative(x), rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_each_derivative_expression_matches_numpy_on_plain_tvm(name):
    derivative, (low, high) = DERIVATIVES[name]
    x = np.random.default_rng(1).uniform(low, high, (5,))
    bb = relax.BlockBuilder()
    xv = relax.Var("x", relax.TensorType(x.shape, "float64"))
    with bb.function("main", [xv]):
        bb.emit_func_output(bb.emit(ELEMENTWISE_DERIVATIVES[f"relax.{name}"](xv)))
    vm = relax.VirtualMachine(tvm.compile(bb.get(), "llvm"), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(x)).numpy()
    np.testing.assert_allclose(got, derivative(x), rtol=1e-10)


def test_check_grad_passes_on_a_registered_op():
    xv = relay.var("x", shape=(2, 3), dtype="float64")
    relay.testing.check_grad(relay.Function([xv], relay.atan(xv)))


def test_an_attribute_tvm_already_has_is_never_replaced():
    register_elementwise_gradients()
    sin_grad = tvm.ir.Op.get("relax.sin").get_attr("FPrimalGradient")
    assert not boundary.register_op_attr_if_absent("relax.sin", "FPrimalGradient", print)
    assert tvm.ir.Op.get("relax.sin").get_attr("FPrimalGradient").same_as(sin_grad)
    assert tvm.ir.Op.get("relax.erf").get_attr("FPrimalGradient") is not None
