"""``tvm.contrib.relay_viz`` of TVM <=0.19 (served by ``install()``): draw a module's functions.

``RelayVisualizer(mod, params).render()`` prints each function as a tree (the terminal
plotter, by default) or writes DOT (:class:`~.dot.DotPlotter`). The module is the front end's,
so what is drawn is the Relax form of the Relay graph: the same calls and arguments, with Relay's
op names (see :mod:`.interface`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .dot import DotGraph, DotPlotter, DotVizParser
from .interface import (
    DefaultVizParser,
    Plotter,
    VizEdge,
    VizGraph,
    VizNode,
    VizParser,
    dataflow_nodes,
)
from .terminal import TermGraph, TermNode, TermPlotter, TermVizParser

__all__ = [
    "DefaultVizParser",
    "DotGraph",
    "DotPlotter",
    "DotVizParser",
    "Plotter",
    "RelayVisualizer",
    "TermGraph",
    "TermNode",
    "TermPlotter",
    "TermVizParser",
    "VizEdge",
    "VizGraph",
    "VizNode",
    "VizParser",
]


class RelayVisualizer:
    """Draw the functions of ``relay_mod`` (``main`` first).

    Parameters
    ----------
    relay_mod : tvm.IRModule
        The module (Relay's front end builds it).
    relay_param : dict, optional
        Parameters: a variable named here is drawn ``Var(Param)``.
    plotter : Plotter, optional
        :class:`TermPlotter` by default.
    parser : VizParser, optional
        :class:`TermVizParser` by default.
    """

    def __init__(
        self,
        relay_mod: Any,
        relay_param: Mapping[str, Any] | None = None,
        plotter: Plotter | None = None,
        parser: VizParser | None = None,
    ) -> None:
        self._plotter = plotter if plotter is not None else TermPlotter()
        self._relay_param = dict(relay_param or {})
        self._parser = parser if parser is not None else TermVizParser()
        names = sorted(gv.name_hint for gv in relay_mod.get_global_vars())
        names.sort(key=lambda name: name != "main")
        offset = 0
        for name in names:
            order, ids, count = dataflow_nodes(relay_mod[name])
            ids = {node: str(int(i) + offset) for node, i in ids.items()}
            offset += count
            graph = self._plotter.create_graph(name)
            for node in order:
                viz_node, edges = self._parser.get_node_edges(node, self._relay_param, ids)
                if viz_node is not None:
                    graph.node(viz_node)
                for edge in edges:
                    graph.edge(edge)

    def render(self, filename: str | None = None) -> None:
        """Render every function through the plotter."""
        self._plotter.render(filename=filename)
