"""``tvm.contrib.relay_viz.dot``: the DOT drawing of TVM 0.19's visualizer, without graphviz.

TVM 0.19 built ``graphviz.Digraph`` objects and rendered them to PDF or SVG through the
``graphviz`` package. Here :class:`DotGraph` writes the DOT source itself (the same nodes,
edges and attributes), and :meth:`DotPlotter.render` writes ``<filename>.dot``; with the
``graphviz`` package installed it also renders ``<filename>.<render_format>`` from that source.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any

from .interface import DefaultVizParser, Plotter, VizEdge, VizGraph, VizNode
from .terminal import write_text

__all__ = ["DotGraph", "DotPlotter", "DotVizParser"]


class DotVizParser(DefaultVizParser):
    """The default parser's rules, for the DOT drawing."""

    def get_node_edges(
        self, node: Any, relay_param: Mapping[str, Any], node_to_id: Mapping[Any, str]
    ) -> tuple[VizNode | None, list[VizEdge]]:
        return super().get_node_edges(node, relay_param, node_to_id)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _default_node_attr(node: VizNode) -> dict[str, str]:
    return {"label": f"{node.type_name}\n{node.detail}", "shape": "box"}


class DotGraph(VizGraph):
    """One function as a DOT digraph.

    Parameters
    ----------
    name : str
        The function.
    graph_attr, node_attr, edge_attr : dict, optional
        DOT attributes of the graph, every node, every edge.
    get_node_attr : callable, optional
        ``get_node_attr(viz_node) -> dict`` of one node's attributes.
    """

    def __init__(
        self,
        name: str,
        graph_attr: Mapping[str, str] | None = None,
        node_attr: Mapping[str, str] | None = None,
        edge_attr: Mapping[str, str] | None = None,
        get_node_attr: Callable[[VizNode], Mapping[str, str]] | None = None,
    ) -> None:
        self._name = name
        self._attrs = {
            "graph": dict(graph_attr or {}),
            "node": dict(node_attr or {}),
            "edge": dict(edge_attr or {}),
        }
        self._get_node_attr = get_node_attr or _default_node_attr
        self._lines: list[str] = []

    def node(self, viz_node: VizNode) -> None:
        """Add a node."""
        attrs = self._get_node_attr(viz_node)
        fields = " ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())
        self._lines.append(f"  {_quote(viz_node.identity)} [{fields}]")

    def edge(self, viz_edge: VizEdge) -> None:
        """Add an edge."""
        self._lines.append(f"  {_quote(viz_edge.start)} -> {_quote(viz_edge.end)}")

    @property
    def source(self) -> str:
        """The DOT source of the function."""
        head = [f"digraph {_quote(self._name)} {{"]
        for kind, attrs in self._attrs.items():
            if attrs:
                fields = " ".join(f"{k}={_quote(str(v))}" for k, v in attrs.items())
                head.append(f"  {kind} [{fields}]")
        return "\n".join([*head, *self._lines, "}"])


class DotPlotter(Plotter):
    """Draws every function as a DOT digraph.

    Parameters
    ----------
    graph_attr, node_attr, edge_attr : dict, optional
        DOT attributes for every graph made.
    get_node_attr : callable, optional
        ``get_node_attr(viz_node) -> dict`` of one node's attributes.
    render_format : str
        The format ``graphviz`` renders to, where it is installed (``"pdf"``, ``"svg"``).
    """

    def __init__(
        self,
        graph_attr: Mapping[str, str] | None = None,
        node_attr: Mapping[str, str] | None = None,
        edge_attr: Mapping[str, str] | None = None,
        get_node_attr: Callable[[VizNode], Mapping[str, str]] | None = None,
        render_format: str = "pdf",
    ) -> None:
        self._options = (graph_attr, node_attr, edge_attr, get_node_attr)
        self._format = render_format
        self._graphs: dict[str, DotGraph] = {}

    def create_graph(self, name: str) -> DotGraph:
        """A new DOT graph for the function ``name``."""
        self._graphs[name] = DotGraph(name, *self._options)
        return self._graphs[name]

    @property
    def source(self) -> str:
        """The DOT source of every function."""
        return "\n".join(graph.source for graph in self._graphs.values())

    def render(self, filename: str | None = None) -> None:
        """Write ``<filename>.dot`` (``plot.dot`` by default); with ``graphviz`` installed, also
        render it to ``<filename>.<render_format>``."""
        base = "plot" if filename is None else filename
        write_text(f"{base}.dot", self.source)
        if importlib.util.find_spec("graphviz") is not None:
            import graphviz

            graphviz.Source(self.source).render(base, format=self._format, cleanup=True)
