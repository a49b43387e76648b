"""``relay.transform.CanonicalizeCast`` on the Relay graph (``transform/canonicalize_cast.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.origin import relay_of

T = relay.transform


def test_canonicalize_cast_copies_a_shared_upcast_for_each_consumer():
    x = relay.var("x", shape=(4,), dtype="int8")
    b1, b2 = relay.var("b1", shape=(4,), dtype="int32"), relay.var("b2", shape=(4,), dtype="int32")
    up = relay.cast(x, "int32")
    mod = tvm.IRModule.from_expr(relay.Function([x, b1, b2], (up + b1) + (up + b2)))
    with tvm.transform.PassContext(opt_level=3):
        out = T.CanonicalizeCast()(mod)
    body = relay_of(out).body
    first, second = body.args[0].args[0], body.args[1].args[0]
    assert first.op.name == second.op.name == "cast" and first is not second
    up2 = relay.cast(x, "int32")
    want = tvm.IRModule.from_expr(relay.Function([x, b1, b2], (up + b1) + (up2 + b2)))
    tvm.ir.assert_structural_equal(out["main"], want["main"])  # the Relay graphs compared
    data = [np.arange(4, dtype="int8"), np.ones(4, "int32"), np.full(4, 2, "int32")]
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    got = vm["main"](*[tvm.runtime.tensor(a) for a in data]).numpy()
    np.testing.assert_array_equal(got, 2 * data[0].astype("int32") + 3)
