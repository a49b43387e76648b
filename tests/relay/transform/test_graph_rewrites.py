"""``relay.transform``'s rewrites of the Relay graph in ``transform/graph_rewrites.py``."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


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
