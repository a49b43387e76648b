"""``relay/origin.py``: the Relay function behind a front-end Relax function."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin


def _func(name: str = "x") -> relay.Function:
    x = relay.var(name, shape=(2,))
    return relay.Function([x], relay.exp(x))


def test_a_module_main_reads_back_as_its_relay_function():
    func = _func()
    mod = tvm.IRModule.from_expr(func)
    assert origin.relay_of(mod["main"]) is func
    assert origin.relay_of(mod) is func
    assert origin.relay_of(tvm.IRModule({})) is None
    assert origin.relay_of("main") is None


def test_a_relax_pass_result_has_no_origin():
    mod = tvm.IRModule.from_expr(_func())
    rewritten = tvm.relax.transform.LegalizeOps()(mod)
    assert origin.relay_of(rewritten["main"]) is None


def test_only_the_most_recent_functions_are_remembered():
    first = _func("first")
    relax_first = first.__relax_function__()
    for i in range(origin.LIMIT):
        _func(f"v{i}").__relax_function__()
    assert origin.relay_of(relax_first) is None
    assert first.__relax_function__() is relax_first  # used again: remembered again
    assert origin.relay_of(relax_first) is first


def test_a_relay_function_is_its_own_origin():
    # Under install(), Relay-era code reads mod["main"] as the Relay view: relay_of takes
    # either view, so its callers need not know which one they hold.
    func = _func()
    assert origin.relay_of(func) is func
