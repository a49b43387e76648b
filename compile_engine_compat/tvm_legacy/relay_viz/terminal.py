"""``tvm.contrib.relay_viz.terminal``: the text drawing of TVM 0.19's visualizer (an AST dump
of each function, the result first, ``|--``/`` `--`` for the arguments)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from .interface import DefaultVizParser, Plotter, VizEdge, VizGraph, VizNode

__all__ = ["TermGraph", "TermNode", "TermPlotter", "TermVizParser"]


class TermVizParser(DefaultVizParser):
    """The default parser's rules; the terminal drawing reads them as TVM 0.19's did."""

    def get_node_edges(
        self, node: Any, relay_param: Mapping[str, Any], node_to_id: Mapping[Any, str]
    ) -> tuple[VizNode | None, list[VizEdge]]:
        return super().get_node_edges(node, relay_param, node_to_id)


class TermNode:
    """A node's text: its type and its details on one line."""

    def __init__(self, viz_node: VizNode) -> None:
        self.type = viz_node.type_name
        self.other_info = viz_node.detail.replace("\n", ", ")


class TermGraph(VizGraph):
    """One function drawn as text."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._graph: dict[str, list[str]] = {}
        self._nodes: dict[str, TermNode] = {}
        self._reverse_post_order: deque[str] = deque()

    def node(self, viz_node: VizNode) -> None:
        """Add a node (in post-order: the last one added is the root)."""
        self._reverse_post_order.appendleft(viz_node.identity)
        self._graph.setdefault(viz_node.identity, [])
        self._nodes[viz_node.identity] = TermNode(viz_node)

    def edge(self, viz_edge: VizEdge) -> None:
        """Add an edge; drawn from the consumer to what it consumes."""
        self._graph.setdefault(viz_edge.end, []).append(viz_edge.start)

    def render(self) -> str:
        """The text of the function."""
        if not self._reverse_post_order:
            return f"@{self._name}()"
        lines: list[str] = []
        seen: set[tuple[str, str]] = set()

        def draw(indent: str, node_id: str) -> None:
            if (indent, node_id) in seen:
                return
            seen.add((indent, node_id))
            children = self._graph.get(node_id, [])
            for index, child in enumerate(children):
                last = index == len(children) - 1
                node = self._nodes[child]
                lines.append(f"{indent}{'`--' if last else '|--'}{node.type} {node.other_info}")
                draw(indent + ("   " if last else "|  "), child)

        root = self._reverse_post_order[0]
        lines.append(f"@{self._name}({self._nodes[root].other_info})")
        draw("", root)
        return "\n".join(lines)


class TermPlotter(Plotter):
    """Draws every function as text."""

    def __init__(self) -> None:
        self._graphs: dict[str, TermGraph] = {}

    def create_graph(self, name: str) -> TermGraph:
        """A new text graph for the function ``name``."""
        self._graphs[name] = TermGraph(name)
        return self._graphs[name]

    def render(self, filename: str | None = None) -> None:
        """Print the text, or write it to ``filename`` (a new file, renamed into place)."""
        text = "\n".join(graph.render() for graph in self._graphs.values())
        if filename is None:
            print(text)
        else:
            write_text(filename, text)


def write_text(filename: str, text: str) -> None:
    """Write ``text`` to ``filename`` through a temporary file renamed over it."""
    import os

    partial = f"{filename}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(partial, filename)
