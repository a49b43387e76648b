"""``relay.transform.PartialEvaluate`` on the Relay graph (with ``DeadCodeElimination``)."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def _dcpe(func: relay.Function) -> relay.Function:
    mod = tvm.IRModule()
    mod["main"] = func
    seq = tvm.transform.Sequential(
        [
            relay.transform.PartialEvaluate(),
            relay.transform.DeadCodeElimination(inline_once=True, ignore_impurity=True),
        ]
    )
    out = seq(mod)
    return relay_definitions(out)[out.get_global_var("main")]


def test_a_known_call_is_unfolded_and_reference_reads_become_their_contents():
    t = relay.TensorType([], "float32")
    d, r, x, y = relay.var("d", t), relay.var("r"), relay.var("x"), relay.var("y")
    double = relay.Function([y], y + y)
    body = relay.Let(
        r, relay.RefCreate(d), relay.Let(x, relay.RefWrite(r, double(d)), relay.RefRead(r))
    )
    out = _dcpe(relay.Function([d], body))
    assert relay_equal(out, relay.Function([d], d + d), map_free_vars=True)


def test_a_branch_on_a_known_condition_is_taken_and_an_unknown_one_kept():
    c = relay.var("c", shape=(), dtype="bool")
    one, two = relay.const(1.0), relay.const(2.0)
    known = _dcpe(relay.Function([c], relay.If(relay.const(True), one, two)))
    assert isinstance(known.body, relay.Constant) and float(known.body.data.numpy()) == 1.0
    unknown = _dcpe(relay.Function([c], relay.If(c, one, two)))
    assert isinstance(unknown.body, relay.If)
