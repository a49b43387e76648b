"""``relay.transform.EliminateCommonSubexpr`` (``transform/eliminate_common_subexpr.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


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
