"""``relay.analysis``'s walks and variable queries (``analysis/graph.py``, ``analysis/vars.py``)."""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.registry import RelayOp

A = relay.analysis


def _graph() -> tuple[Any, ...]:
    x = relay.var("x", shape=(2, 2))
    w = relay.var("w", shape=(2, 2), dtype="float32")
    t = relay.var("t")
    body = relay.Let(t, relay.exp(x), relay.nn.dense(t, w))
    return x, w, t, relay.Function([x, w], body)


def test_post_order_visit_visits_children_first_and_each_node_once():
    x, _, _, func = _graph()
    order: list[Any] = []
    A.post_order_visit(func, order.append)
    assert order[-1] is func and order[0] is x
    assert len(order) == len({id(n) for n in order})
    names = [n.name for n in order if isinstance(n, RelayOp)]
    assert names == ["exp", "nn.dense"]


def test_post_order_visit_of_a_module_main_walks_its_relay_function():
    *_, func = _graph()
    mod = tvm.IRModule.from_expr(func)
    seen: list[Any] = []
    A.post_order_visit(mod["main"], seen.append)
    assert seen[-1] is func


def test_post_order_visit_of_a_plain_relax_function_uses_relax():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([2], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(relax.op.exp(x))
    seen: list[Any] = []
    A.post_order_visit(bb.get()["main"], seen.append)
    assert any(isinstance(n, relax.Call) for n in seen)


def test_free_bound_and_all_vars():
    x, w, t, func = _graph()
    assert A.free_vars(func) == []
    assert A.bound_vars(func) == [x, w, t]
    assert A.all_vars(func.body) == [t, x, w]
    assert A.free_vars(func.body) == [x, w]
    assert A.free_type_vars(func) == A.bound_type_vars(func) == A.all_type_vars(func) == []


def test_all_dtypes_reads_the_inferred_types():
    x = relay.var("x", shape=(2,), dtype="int8")
    y = relay.cast(x, "int32") + relay.const(1)
    assert A.all_dtypes(relay.Function([x], y)) == {"int8", "int32"}
