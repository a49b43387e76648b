"""``relay.transform.Legalize`` on the Relay graph (``transform/legalize.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr

T = relay.transform


def _function() -> relay.Function:
    x = relay.var("x", shape=(2, 3))
    return relay.Function([x], relay.nn.relu(x - relay.const(1.0)))


def test_a_registered_function_replaces_the_call_and_the_numbers_follow():
    seen = []

    def legalize_relu(attrs, inputs, types):
        seen.append([str(t) for t in types])
        return relay.clip(inputs[0], 0.0, 2.0)  # relu, capped: the pass really ran it

    with TempOpAttr("nn.relu", "FTVMLegalize", legalize_relu):
        out = T.Legalize()(tvm.IRModule.from_expr(_function()))
    x = relay.var("x", shape=(2, 3))
    expected = relay.Function([x], relay.clip(x - relay.const(1.0), 0.0, 2.0))
    tvm.ir.assert_structural_equal(out["main"], expected, map_free_vars=True)
    assert seen == [["Tensor[(2, 3), float32]", "Tensor[(2, 3), float32]"]]

    data = np.arange(6, dtype="float32").reshape(2, 3)
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(data)).numpy()
    np.testing.assert_allclose(got, np.clip(data - 1, 0, 2))


def test_none_keeps_the_call_and_no_function_changes_nothing():
    mod = tvm.IRModule.from_expr(_function())
    with TempOpAttr("nn.relu", "FTVMLegalize", lambda attrs, inputs, types: None):
        assert T.Legalize()(mod)["main"].same_as(mod["main"])
    assert T.Legalize()(mod)["main"].same_as(mod["main"])


def test_register_legalize_sets_the_attribute_and_a_bad_result_is_named():
    op = relay.op.get("nn.relu")
    try:
        relay.op.register_legalize("nn.relu", lambda attrs, inputs, types: 3)
        with pytest.raises(TypeError, match=r"FTVMLegalize function of nn\.relu returned int"):
            T.Legalize()(tvm.IRModule.from_expr(_function()))
    finally:
        op.reset_attr("FTVMLegalize")
    with pytest.raises(TypeError, match="legalize_map_attr_name"):
        T.Legalize(1)  # type: ignore[arg-type]
