"""relay.expr_functor: GraphVisitor and GraphMutator over the front end's Relay graph."""

from __future__ import annotations

from typing import Any

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, GraphVisitor


def test_the_mutator_keeps_untouched_nodes_and_rebuilds_changed_ones():
    x = relay.var("x", shape=(2,))
    keep = relay.nn.relu(x)
    graph = relay.add(relay.tanh(x), keep)

    class TanhToSigmoid(GraphMutator):
        def visit_call(self, call: Any) -> Any:
            new = super().visit_call(call)
            return relay.sigmoid(new.args[0]) if call.op.name == "tanh" else new

    assert GraphMutator().visit(graph) is graph
    out = TanhToSigmoid().visit(graph)
    assert out is not graph and out.args[1] is keep
    assert out.args[0].op.name == "sigmoid"


def test_a_visitor_sees_each_shared_node_once_and_deep_graphs_do_not_recurse():
    x = relay.var("x", shape=(2,))
    node = x
    for _ in range(5000):  # far deeper than Python's recursion limit
        node = relay.nn.relu(node)
    shared = relay.add(node, node)
    calls = []

    class Count(GraphVisitor):
        def visit_call(self, call: Any) -> Any:
            calls.append(call)
            return super().visit_call(call)

    Count().visit(relay.Function([x], shared))
    assert len(calls) == 5001
    assert GraphMutator().visit(shared) is shared
