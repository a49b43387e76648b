"""``relay.transform``'s rewrites of the Relay graph (``transform/graph_rewrites.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _ops(mod: tvm.IRModule) -> list[str]:
    return sorted(relay.analysis.list_op_freqs(mod))


def test_div_to_mul_multiplies_by_the_reciprocal_and_keeps_the_numbers():
    x = relay.var("x", shape=(4,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x / relay.const(4.0)))
    out = T.DivToMul()(mod)
    assert _ops(out) == ["multiply"]
    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(_run(out, data), data / 4)
    assert origin.relay_of(out) is not None  # the module reads back as Relay


def test_div_to_mul_leaves_an_integer_division():
    x = relay.var("x", shape=(4,), dtype="int32")
    mod = tvm.IRModule.from_expr(relay.Function([x], x / relay.const(2)))
    assert T.DivToMul()(mod)["main"].same_as(mod["main"])


def test_simplify_expr_merges_reshapes_and_transposes_and_drops_identities():
    x = relay.var("x", shape=(2, 3, 4))
    y = relay.reshape(relay.reshape(x, (6, 4)), (24,))
    z = relay.transpose(relay.transpose(x, (1, 0, 2)), (1, 0, 2))
    body = relay.Tuple([y * relay.const(1.0), relay.cast(z, "float32") + relay.const(0.0)])
    mod = tvm.IRModule.from_expr(relay.Function([x], body))
    out = T.SimplifyExpr()(mod)
    assert relay.analysis.list_op_freqs(out) == {"reshape": 1}
    data = np.random.default_rng(0).random((2, 3, 4), dtype="float32")
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(data))
    np.testing.assert_allclose(got[0].numpy(), data.reshape(24))
    np.testing.assert_allclose(got[1].numpy(), data)


def test_change_batch_sets_the_given_axis_to_the_batch_size_as_tvm_019():
    # TVM 0.19: data maps each parameter to the axis holding its batch; batch_size is the size
    x = relay.var("x", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    changed = T.ChangeBatch({x: 0}, batch_size=5)(mod)
    assert 'x: R.Tensor((5, 3), dtype="float32")' in changed.script()
    assert 'x: R.Tensor((2, 16), dtype="float32")' in T.ChangeBatch({"x": 1})(mod).script()
    with pytest.raises(ValueError, match="batch_size"):
        T.ChangeBatch({x: 0}, batch_size=0)


def test_simplify_fc_transpose_makes_a_transposed_weight_parameter():
    x = relay.var("x", shape=(1, 4))
    w = relay.var("w", shape=(4, 3))
    dense = relay.nn.dense(x, relay.transpose(w, [1, 0]))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], dense))
    out = T.SimplifyFCTranspose(["w"])(mod)
    assert [p.name for p in out["main"].params] == ["x", "w.T"]
    data, weight = np.ones((1, 4), "float32"), np.arange(12, dtype="float32").reshape(4, 3)
    np.testing.assert_allclose(_run(out, data, weight.T), data @ weight)


def test_eliminate_common_subexpr_merges_equal_calls_unless_fskip_keeps_them():
    x = relay.var("x", shape=(1, 4))
    one = relay.const(1.0)
    y = relay.add(relay.nn.relu(x), one) + relay.add(relay.nn.relu(x), one)
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    freqs = relay.analysis.list_op_freqs
    assert dict(freqs(T.EliminateCommonSubexpr()(mod))) == {"nn.relu": 1, "add": 2}
    kept = T.EliminateCommonSubexpr(lambda call: call.op.name == "add")(mod)  # type: ignore[attr-defined]
    assert dict(freqs(kept)) == {"nn.relu": 1, "add": 3}
    data = np.array([[-1.0, 0.0, 1.0, 2.0]], "float32")
    np.testing.assert_allclose(_run(kept, data), 2 * (np.maximum(data, 0) + 1))
    leaky = relay.Function([x], relay.nn.leaky_relu(x, 0.1) + relay.nn.leaky_relu(x, 0.2))
    out = T.EliminateCommonSubexpr()(tvm.IRModule.from_expr(leaky))
    assert dict(freqs(out))["nn.leaky_relu"] == 2  # different attributes: kept apart
