"""``relay.transform.FoldConstant`` on the Relay graph (``transform/fold_constant.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _main(mod: tvm.IRModule) -> relay.Function:
    return T.InferType()(mod)["main"]


def test_fold_constant_evaluates_constant_calls_and_keeps_the_rest():
    x = relay.var("x", shape=(1, 3))
    c = relay.const(np.array([[1, 2, 3]], "float32"))
    pair = relay.Tuple([x, c])
    body = relay.add(relay.add(pair[1], c), pair[0]) * relay.ndarray_size(x, "float32")
    out = T.FoldConstant()(tvm.IRModule.from_expr(relay.Function([x], body)))
    want = relay.add(relay.const(np.array([[2, 4, 6]], "float32")), x) * relay.const(np.float32(3))
    tvm.ir.assert_structural_equal(
        out["main"], _main(tvm.IRModule.from_expr(relay.Function([x], want)))
    )
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    data = np.array([[1, 1, 1]], "float32")
    got = vm["main"](tvm.runtime.tensor(data)).numpy()
    np.testing.assert_allclose(got, (np.array([[2, 4, 6]], "float32") + data) * 3)


def test_fold_constant_inlines_constant_lets_and_keeps_dropout():
    x = relay.var("x", shape=(2,))
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", relay.const(np.array([1, 2], "float32")))
    t2 = sb.let("t2", relay.add(t1, t1))
    sb.ret(relay.add(t2, x))
    out = T.FoldConstant()(tvm.IRModule.from_expr(relay.Function([x], sb.get())))
    want = relay.Function([x], relay.add(relay.const(np.array([2, 4], "float32")), x))
    tvm.ir.assert_structural_equal(out["main"], _main(tvm.IRModule.from_expr(want)))
    kept = relay.Function(
        [], relay.nn.dropout(relay.const(np.array([1, 2], "float32"))) + relay.const(1.0)
    )
    mod = tvm.IRModule.from_expr(kept)
    assert T.FoldConstant()(mod)["main"].same_as(mod["main"])
