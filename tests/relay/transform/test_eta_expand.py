"""``relay.transform.EtaExpand`` on the Relay graph."""

from __future__ import annotations

from typing import Any

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def test_a_global_function_used_as_a_value_is_wrapped_only_when_asked():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(), dtype="int32")
    aux = relay.GlobalVar("aux")
    mod[aux] = relay.Function([x], x)
    p = relay.var("p", "bool")
    mod["main"] = relay.Function([p], relay.If(p, aux, aux))
    kept = relay.transform.EtaExpand()(mod)
    assert not isinstance(
        relay_definitions(kept)[kept.get_global_var("main")].body.true_branch, relay.Function
    )
    out = relay.transform.EtaExpand(expand_global_var=True)(mod)
    main: Any = relay_definitions(out)[out.get_global_var("main")]
    wrapper = main.body.true_branch
    assert isinstance(wrapper, relay.Function) and wrapper.params[0].name_hint == "x"
    call: Any = wrapper.body
    assert call.op.name_hint == "aux" and call.args[0] is wrapper.params[0]
