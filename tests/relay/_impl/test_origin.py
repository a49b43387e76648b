"""relay/origin.py: a module's Relax function leads back to the Relay function it was made from."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.origin import relay_origin


def test_a_modules_main_leads_back_to_its_relay_function():
    x = relay.var("x", shape=(2,))
    func = relay.Function([x], relay.nn.relu(x))
    mod = tvm.IRModule.from_expr(func)
    assert relay_origin(mod["main"]) is func
    expr = relay.nn.relu(x)  # an expression: the function of its free variables
    origin = relay_origin(tvm.IRModule.from_expr(expr)["main"])
    assert origin.body is expr and origin.params == [x]


def test_a_relax_function_made_elsewhere_has_none():
    from tvm import relax

    bb = relax.BlockBuilder()
    v = relax.Var("v", relax.TensorType((2,), "float32"))
    with bb.function("main", [v]):
        bb.emit_func_output(v)
    assert relay_origin(bb.get()["main"]) is None
    assert relay_origin("not a tvm object") is None
