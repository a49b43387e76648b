"""``relay.transform.DivToMul`` (``transform/div_to_mul.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def test_div_to_mul_multiplies_by_the_reciprocal_and_keeps_the_numbers():
    x = relay.var("x", shape=(4,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x / relay.const(4.0)))
    out = T.DivToMul()(mod)
    assert sorted(relay.analysis.list_op_freqs(out)) == ["multiply"]
    data = np.arange(4, dtype="float32")
    np.testing.assert_allclose(_run(out, data), data / 4)
    assert origin.relay_of(out) is not None  # the module reads back as Relay


def test_div_to_mul_leaves_an_integer_division():
    x = relay.var("x", shape=(4,), dtype="int32")
    mod = tvm.IRModule.from_expr(relay.Function([x], x / relay.const(2)))
    assert T.DivToMul()(mod)["main"].same_as(mod["main"])
