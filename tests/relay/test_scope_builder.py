"""relay.ScopeBuilder: nested Let and If scopes over the front end's AST, run on the Relax VM
against NumPy; Relay's errors for a misused builder."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.expr import If, Let

RNG = np.random.default_rng(25)


def _run(func: relay.Function, *args: object) -> np.ndarray:
    mod = tvm.IRModule.from_expr(func)
    return relay.create_executor("vm", mod=mod, target="llvm").evaluate()(*args).numpy()


def test_lets_chain_in_order_and_compute_the_value():
    x = relay.var("x", shape=(3, 4))
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", relay.exp(x))
    t2 = sb.let(("t2", relay.TensorType((3, 4))), relay.add(t1, x))
    sb.ret(relay.multiply(t2, t1))
    body = sb.get()
    assert isinstance(body, Let) and body.var is t1 and isinstance(body.body, Let)
    data = RNG.standard_normal((3, 4)).astype("float32")
    expected = (np.exp(data) + data) * np.exp(data)
    np.testing.assert_allclose(_run(relay.Function([x], body), data), expected, rtol=1e-6)


def test_if_and_else_scopes_make_one_if_with_branch_lets():
    x = relay.var("x", shape=(4,))
    c = relay.var("c", shape=(), dtype="bool")
    sb = relay.ScopeBuilder()
    with sb.if_scope(c):
        doubled = sb.let("d", relay.add(x, x))
        sb.ret(doubled)
    with sb.else_scope():
        sb.ret(relay.negative(x))
    body = sb.get()
    assert isinstance(body, If) and isinstance(body.true_branch, Let)
    func = relay.Function([c, x], body)
    data = RNG.standard_normal(4).astype("float32")
    np.testing.assert_allclose(_run(func, np.array(True), data), 2 * data)
    np.testing.assert_allclose(_run(func, np.array(False), data), -data)


def test_a_misused_builder_raises_relays_errors():
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    with pytest.raises(RuntimeError, match="ret is not called"):
        sb.get()
    sb.ret(x)
    with pytest.raises(RuntimeError, match="already set"):
        sb.ret(x)

    sb = relay.ScopeBuilder()
    with sb.if_scope(relay.var("c", shape=(), dtype="bool")):
        sb.ret(x)
    with pytest.raises(RuntimeError, match="without else"):
        sb.get()

    sb = relay.ScopeBuilder()
    with pytest.raises(RuntimeError, match="else scope must follow"):
        with sb.else_scope():
            sb.ret(x)
    with pytest.raises(TypeError, match=r"relay\.Var or a name"):
        relay.ScopeBuilder().let(3, x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Tuple\[str, relay\.Type\]"):
        relay.ScopeBuilder().let(("a", None, 1), x)  # type: ignore[arg-type]


def test_type_of_a_variable_is_its_annotation():
    ty = relay.TensorType((2,), "float32")
    x = relay.var("x", ty)
    sb = relay.ScopeBuilder()
    assert sb.type_of(x) is ty
    with pytest.raises(NotImplementedError, match="InferTypeLocal"):
        sb.type_of(relay.exp(x))


def test_executor_arguments_follow_relays_scalar_rule():
    """Python floats/ints/bools are float32/int32/bool, as Relay's executors took them."""
    x, y = relay.var("x", shape=()), relay.var("y", shape=())
    assert _run(relay.Function([x, y], relay.add(x, y)), 10.0, 1.0) == np.float32(11.0)
    i, j = relay.var("i", shape=(), dtype="int32"), relay.var("j", shape=(), dtype="int32")
    out = _run(relay.Function([i, j], relay.add(i, j)), 3, 4)
    assert out.dtype == np.int32 and out == 7
    b = relay.var("b", shape=(), dtype="bool")
    assert _run(relay.Function([b], relay.logical_not(b)), True) == np.False_
