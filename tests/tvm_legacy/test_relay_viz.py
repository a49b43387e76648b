"""tvm.contrib.relay_viz: the terminal and DOT drawings of a front-end module."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy import relay_viz


def _module():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, padding=(1, 1)))
    return tvm.IRModule.from_expr(relay.Function([x, w], relay.add(y, relay.const(1.0))))


def test_terminal_drawing_is_relays_tree(tmp_path, capsys):
    relay_viz.RelayVisualizer(_module(), {"w": None}).render()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "@main()"
    assert lines[1].startswith("`--Call add")
    assert any(line.strip(" |`-").startswith("Call nn.conv2d") for line in lines)
    assert any("Var(Param) name_hint: w" in line for line in lines)
    assert any("Var(Input) name_hint: x, shape: (1, 3, 8, 8)" in line for line in lines)
    out = tmp_path / "graph.txt"
    relay_viz.RelayVisualizer(_module()).render(str(out))
    assert out.read_text().startswith("@main()")


def test_dot_drawing_without_graphviz(tmp_path):
    plotter = relay_viz.DotPlotter(graph_attr={"rankdir": "TB"})
    viz = relay_viz.RelayVisualizer(_module(), plotter=plotter, parser=relay_viz.DotVizParser())
    source = plotter.source
    assert source.startswith('digraph "main" {') and 'rankdir="TB"' in source
    assert 'label="Call nn.relu' in source and source.count(" -> ") == 6
    viz.render(str(tmp_path / "plot"))
    assert (tmp_path / "plot.dot").read_text() == source


def test_a_custom_parser_subclass_sees_every_node():
    seen = []

    class Recording(relay_viz.DefaultVizParser):
        def get_node_edges(self, node, relay_param, node_to_id):
            seen.append(type(node).__name__)
            return super().get_node_edges(node, relay_param, node_to_id)

    relay_viz.RelayVisualizer(_module(), parser=Recording())
    assert seen.count("Call") == 3 and seen[-1] == "Function"
