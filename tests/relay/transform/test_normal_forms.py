"""``ToANormalForm``, ``ToBasicBlockNormalForm``, ``ToGraphNormalForm`` on the Relay graph."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.origin import relay_of
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.analysis import Feature, detect_feature

T = relay.transform


def _run(expr: relay.Expr, p: tvm.transform.Pass) -> relay.Function:
    out = relay_of(p(tvm.IRModule.from_expr(expr))["main"])
    assert isinstance(out, relay.Function)
    return out


def _lets(bindings: list[tuple[relay.Var, relay.Expr]], body: relay.Expr) -> relay.Expr:
    for var, value in reversed(bindings):
        body = relay.Let(var, value, body)
    return body


def test_a_normal_form_binds_each_node_in_evaluation_order():
    x, y, z = relay.const(1), relay.const(2), relay.const(3)
    anf = _run(relay.Function([], x + y * z), T.ToANormalForm())
    a, b, c, d, e = (relay.Var(n) for n in "abcde")
    expected = _lets([(a, x), (b, y), (c, z), (d, b * c), (e, a + d)], e)
    assert relay_equal(anf, relay.Function([], expected))


def test_a_normal_form_gives_each_if_branch_its_scope():
    cond = relay.const(True)
    anf = _run(
        relay.Function([], relay.If(cond, relay.const(2), relay.const(3))), T.ToANormalForm()
    )
    a, b, c, d = (relay.Var(n) for n in "abcd")
    branches = relay.If(c, relay.Let(a, relay.const(2), a), relay.Let(b, relay.const(3), b))
    expected = _lets([(c, cond), (d, branches)], d)
    assert relay_equal(anf, relay.Function([], expected))


def test_basic_block_form_binds_only_what_several_scopes_use():
    a = relay.var("a", shape=(2,))
    c = relay.var("c", shape=(), dtype="bool")
    shared = a + a
    bb = _run(
        relay.Function([a, c], relay.If(c, shared * shared, shared)), T.ToBasicBlockNormalForm()
    )
    v = relay.Var("v")
    expected = relay.Function([a, c], relay.Let(v, a + a, relay.If(c, v * v, v)))
    assert relay_equal(bb, expected)


def test_graph_normal_form_drops_every_let():
    x, y = relay.Var("x"), relay.Var("y")
    f = relay.Function([], relay.Let(x, relay.const(1), relay.Let(y, x + x, y * y)))
    g = _run(f, T.ToGraphNormalForm())
    assert Feature.fLet in detect_feature(f) and Feature.fLet not in detect_feature(g)
    one = relay.const(1)
    two = one + one
    assert relay_equal(g, relay.Function([], two * two))


def test_the_module_function_a_pass_left_evaluates_as_its_relay_function():
    x = relay.Var("x")
    f = relay.Function([], relay.Let(x, relay.const(2.0), x + x))
    main = T.ToANormalForm()(tvm.IRModule.from_expr(f))["main"]  # a Relax function
    executor = relay.create_executor(mod=tvm.IRModule(), target="llvm")
    assert float(executor.evaluate(main)().numpy()) == 4.0
    assert float(executor.evaluate(main()).numpy()) == 4.0  # a call of it, as Relay's tests write
