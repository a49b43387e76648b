"""``relay.transform.RemoveUnusedFunctions``: what no entry function reaches leaves."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay

pytestmark = pytest.mark.usefixtures("installed_alias")


def _module() -> tvm.IRModule:
    mod = tvm.IRModule()
    x = relay.var("x", shape=(2,))
    for name in ("called", "as_value", "unused"):
        mod[relay.GlobalVar(name)] = relay.Function([x], x)
    p = relay.var("p", "bool")
    y = relay.var("y", shape=(2,))
    called, as_value = mod.get_global_var("called"), mod.get_global_var("as_value")
    mod["main"] = relay.Function([p, y], relay.Call(relay.If(p, called, as_value), [y]))
    mod["other"] = relay.Function([y], called(y))
    return mod


def _names(mod: tvm.IRModule) -> set[str]:
    return {str(g.name_hint) for g in mod.functions}


def test_functions_called_or_used_as_values_are_kept():
    mod = _module()
    out = relay.transform.RemoveUnusedFunctions()(mod)
    assert _names(out) == {"main", "called", "as_value"}
    assert out["main"].same_as(mod["main"])  # kept functions are the old module's own


def test_several_entry_functions_and_bad_entries():
    out = relay.transform.RemoveUnusedFunctions(["other"])(_module())
    assert _names(out) == {"other", "called"}
    with pytest.raises(TypeError, match="list of names"):
        relay.transform.RemoveUnusedFunctions("main")
