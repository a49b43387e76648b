"""``relay.transform.LambdaLift`` on the Relay graph."""

from __future__ import annotations

from typing import Any

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def _lifted(mod: tvm.IRModule) -> dict[str, Any]:
    return {
        str(g.name_hint): f for g, f in relay_definitions(relay.transform.LambdaLift()(mod)).items()
    }


def test_a_local_function_with_no_free_variables_becomes_its_global_var():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([y], relay.Function([x], x * x)(y))
    out = _lifted(mod)
    (name,) = [n for n in out if n != "main"]
    assert name.startswith("lifted_name")
    call = out["main"].body
    assert isinstance(call.op, tvm.ir.GlobalVar) and call.op.name_hint == name
    assert out[name].params[0] is x and "Closure" not in out[name].attrs


def test_a_closure_is_lifted_as_a_function_of_its_captured_variables():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([y], relay.Function([x], x + y)(y))
    out = _lifted(mod)
    (name,) = [n for n in out if n != "main"]
    lifted = out[name]
    assert int(lifted.attrs["Closure"]) == 1 and [p.name_hint for p in lifted.params] == ["y"]
    assert lifted.params[0] is not y  # a fresh variable of the captured one
    inner = lifted.body
    assert isinstance(inner, relay.Function)
    add: Any = inner.body
    assert add.args[1] is lifted.params[0]
    head = out["main"].body.op  # the closure made by calling the lifted function on y
    assert isinstance(head, relay.Call) and head.args[0] is y


def test_free_vars_counts_a_closure_called_by_its_variable():
    f, x = relay.var("f"), relay.var("x")
    assert relay.analysis.free_vars(relay.Function([x], f(x))) == [f]
