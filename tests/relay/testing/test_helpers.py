"""``relay.testing``'s helpers: run_opt_pass, count_ops, enabled_targets, and the LSTM's
arithmetic against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.interpreter import module_types
from compile_engine_compat.tvm_legacy.graph_executor import GraphModule

T = relay.testing


def _relu_net():
    x = relay.var("x", shape=(2, 3))
    y = relay.nn.relu(relay.add(x, relay.const(1.0)))
    return relay.Function([x], relay.nn.relu(y))


def test_run_opt_pass_returns_main_for_a_function_and_the_body_for_an_expression():
    func = _relu_net()
    # A pass that keeps the module's Relay graph gives Relay back, as TVM 0.19 did.
    out = T.run_opt_pass(func, relay.transform.InferType())
    assert isinstance(out, relay.Function)
    body = T.run_opt_pass(func.body, relay.transform.InferType())
    assert isinstance(body, relay.expr.Expr) and not isinstance(body, relay.Function)
    # A Relax pass rewrites the Relax form: what it returns is Relax.
    fused = T.run_opt_pass(func, relax.transform.LegalizeOps())
    assert isinstance(fused, relax.Function)
    with pytest.raises(TypeError, match=r"tvm\.transform\.Pass"):
        T.run_opt_pass(func, "FoldConstant")
    # The prelude declared first: a function over its lists is kept (for the interpreter).
    plain = T.run_opt_pass(func, relay.transform.InferType(), import_prelude=True)
    assert isinstance(plain, relay.Function)
    (data,) = [
        d for h, d in module_types(relay.prelude.Prelude().mod).items() if h.name_hint == "List"
    ]
    cons, nil = data.constructors
    x = relay.var("x", shape=(), dtype="int32")
    listed = T.run_opt_pass(
        relay.Function([x], cons(x, nil())), relay.transform.InferType(), import_prelude=True
    )
    assert isinstance(listed, relay.Function) and listed.body.op.name_hint == "Cons"  # type: ignore[attr-defined]


def test_count_ops_on_relay_and_on_what_a_pass_returned():
    func = _relu_net()
    assert T.count_ops(func) == {"nn.relu": 2, "add": 1}
    folded = T.run_opt_pass(func, relay.transform.InferType())
    assert T.count_ops(folded)["nn.relu"] == 2


def test_enabled_targets_are_tvm_testings():
    assert any(str(target).startswith("llvm") for target, _ in T.enabled_targets())


def test_lstm_matches_numpy():
    mod, params = T.lstm.get_workload(iterations=2, num_hidden=3)
    lib = relay.build(mod, target="llvm", params=params)
    module = GraphModule(lib["default"](tvm.cpu()))
    data = np.random.default_rng(1).standard_normal((1, 3)).astype("float32")
    module.run(data=data)

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    h = c = np.zeros((1, 3), "float32")
    for step in range(2):
        p = {k: params[f"lstm_{step}_{k}"].numpy() for k in ("i2h_weight", "i2h_bias")}
        q = {k: params[f"lstm_{step}_{k}"].numpy() for k in ("h2h_weight", "h2h_bias")}
        gates = data @ p["i2h_weight"].T + p["i2h_bias"] + h @ q["h2h_weight"].T + q["h2h_bias"]
        i, f, g, o = np.split(gates, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
    np.testing.assert_allclose(module.get_output(0).numpy(), h, rtol=1e-5, atol=1e-6)
