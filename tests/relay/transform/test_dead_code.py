"""``relay.transform.DeadCodeElimination`` on the Relay graph."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def _main(body: relay.Expr, **options: bool) -> relay.Function:
    mod = tvm.IRModule()
    mod["main"] = relay.Function([], body)
    out = relay.transform.DeadCodeElimination(**options)(mod)
    return relay_definitions(out)[out.get_global_var("main")]


def test_unused_pure_lets_go_and_inline_once_inlines_a_single_use():
    a, b = relay.var("a"), relay.var("b")
    one, two = relay.const(1.0), relay.const(2.0)
    body = relay.Let(a, one + one, relay.Let(b, two, a * a))
    assert relay_equal(_main(body).body, relay.Let(a, one + one, a * a))
    c = relay.var("c")
    once = relay.Let(c, one + two, c * two)
    assert relay_equal(_main(once, inline_once=True).body, (one + two) * two)


def test_reference_effects_are_kept():
    r, u = relay.var("r"), relay.var("u")
    zero = relay.const(0.0)
    body = relay.Let(r, relay.RefCreate(zero), relay.Let(u, relay.RefWrite(r, zero), zero))
    out = _main(body, inline_once=True).body  # the write stays, its reference inlined
    assert isinstance(out, relay.Let) and out.var is u and isinstance(out.value, relay.RefWrite)
    assert isinstance(out.value.ref, relay.RefCreate)
    assert _main(body, inline_once=True, ignore_impurity=True).body is zero
