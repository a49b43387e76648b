"""``tvm.contrib.relay_viz.interface``: the nodes, edges, parsers and plotters of TVM 0.19's
visualizer, over the Relax functions the front end's modules hold.

A Relax function is a list of bindings (``lv = R.add(x, y)``); the parser sees the dataflow
graph Relay drew: each call's arguments are the nodes that computed them (a bound variable
stands for its value), parameters are ``Var(Input)`` (``Var(Param)`` when named in the params),
constants ``Const``. Op names are Relay's (``relax.`` dropped).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

import tvm
from tvm import relax

__all__ = [
    "UNKNOWN_TYPE",
    "DefaultVizParser",
    "Plotter",
    "VizEdge",
    "VizGraph",
    "VizNode",
    "VizParser",
    "dataflow_nodes",
]

UNKNOWN_TYPE = "unknown"


class VizNode:
    """A node of the drawing: an id, a type name and a detail text."""

    def __init__(self, node_id: str, node_type: str, node_detail: str) -> None:
        self._id = node_id
        self._type = node_type
        self._detail = node_detail

    @property
    def identity(self) -> str:
        """The node's unique id."""
        return self._id

    @property
    def type_name(self) -> str:
        """What the node is (``Call nn.conv2d``, ``Var(Input)``)."""
        return self._type

    @property
    def detail(self) -> str:
        """The node's details, one a line."""
        return self._detail

    def __repr__(self) -> str:
        detail = self._detail.replace("\n", ", ")
        return f"VizNode(identity: {self._id}, type_name: {self._type}, detail: {detail}"


class VizEdge:
    """An edge from the node ``start_node`` to ``end_node`` (ids)."""

    def __init__(self, start_node: str, end_node: str) -> None:
        self._start = start_node
        self._end = end_node

    @property
    def start(self) -> str:
        """The id of the node the edge leaves."""
        return self._start

    @property
    def end(self) -> str:
        """The id of the node the edge enters."""
        return self._end


class VizParser(abc.ABC):
    """Turns one expression into a node and the edges entering it."""

    @abc.abstractmethod
    def get_node_edges(
        self, node: Any, relay_param: Mapping[str, Any], node_to_id: Mapping[Any, str]
    ) -> tuple[VizNode | None, list[VizEdge]]:
        """The node of ``node`` (None to draw none) and its incoming edges."""


class VizGraph(abc.ABC):
    """One drawn function."""

    @abc.abstractmethod
    def node(self, viz_node: VizNode) -> None:
        """Add a node (nodes come in post-order)."""

    @abc.abstractmethod
    def edge(self, viz_edge: VizEdge) -> None:
        """Add an edge."""


class Plotter(abc.ABC):
    """Makes a graph per function and renders them all."""

    @abc.abstractmethod
    def create_graph(self, name: str) -> VizGraph:
        """A new graph for the function ``name``."""

    @abc.abstractmethod
    def render(self, filename: str | None) -> None:
        """Render every graph (to ``filename``, or to standard output)."""


def _op_name(op: Any) -> str:
    return str(op.name).removeprefix("relax.")


def _attr_lines(attrs: Any) -> list[str]:
    """``key: value`` for each field of a call's attributes (TVM 0.27's attrs have no keys())."""
    if attrs is None:
        return []
    names = [n for n in dir(attrs) if not n.startswith("_") and n != "id_"]
    return [f"{n}: {getattr(attrs, n)}" for n in names if not callable(getattr(attrs, n))]


def dataflow_nodes(func: Any) -> tuple[list[Any], dict[Any, str], int]:
    """The nodes of ``func`` to draw, in post-order, and the id of each expression.

    A variable bound in ``func`` shares the id of its value, so a call's arguments lead to the
    calls that computed them.

    Returns
    -------
    tuple
        (nodes in post-order, expression -> id, the number of ids given).
    """
    order: list[Any] = []
    ids: dict[Any, str] = {}

    def give(node: Any) -> str:
        if node not in ids:
            ids[node] = str(len(order))
            order.append(node)
        return ids[node]

    def visit(expr: Any) -> str:
        if expr in ids:
            return ids[expr]
        if isinstance(expr, relax.Call):
            for arg in expr.args:
                visit(arg)
        elif isinstance(expr, relax.Tuple):
            for field in expr.fields:
                visit(field)
        elif isinstance(expr, relax.TupleGetItem):
            visit(expr.tuple_value)
        elif isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    ids[binding.var] = visit(binding.value)
            ids[expr] = visit(expr.body)
            return ids[expr]
        return give(expr)

    if isinstance(func, relax.Function):
        for param in func.params:
            give(param)
        visit(func.body)
        give(func)
    else:
        visit(func)
    return order, ids, len(order)


class DefaultVizParser(VizParser):
    """The drawing rules of TVM 0.19's default parser, for the Relax form of a Relay graph."""

    def get_node_edges(
        self, node: Any, relay_param: Mapping[str, Any], node_to_id: Mapping[Any, str]
    ) -> tuple[VizNode | None, list[VizEdge]]:
        node_id = node_to_id[node]
        if isinstance(node, relax.Function):
            body = node.body.body if isinstance(node.body, relax.SeqExpr) else node.body
            return VizNode(node_id, "Func ", ""), [VizEdge(node_to_id[body], node_id)]
        if isinstance(node, relax.Call):
            return self._call(node, node_id, node_to_id)
        if isinstance(node, relax.Var):
            return self._var(node, node_id, relay_param), []
        if isinstance(node, relax.Tuple):
            edges = [VizEdge(node_to_id[f], node_id) for f in node.fields]
            return VizNode(node_id, "Tuple", ""), edges
        if isinstance(node, relax.TupleGetItem):
            edge = VizEdge(node_to_id[node.tuple_value], node_id)
            return VizNode(node_id, "TupleGetItem", f"idx: {node.index}"), [edge]
        if isinstance(node, tvm.ir.expr.Constant):
            ty = node.ty
            dims = getattr(getattr(ty, "shape", None), "values", ())
            shape = tuple(int(d.value) for d in dims)
            detail = f"shape: {shape}, dtype: {getattr(ty, 'dtype', '')}"
            return VizNode(node_id, "Const", detail), []
        if isinstance(node, tvm.ir.GlobalVar | tvm.ir.Op):
            return None, []
        return VizNode(node_id, UNKNOWN_TYPE, f"don't know how to parse {type(node)}"), []

    def _var(self, node: Any, node_id: str, relay_param: Mapping[str, Any]) -> VizNode:
        name = node.name
        kind = "Var(Param)" if name in relay_param else "Var(Input)"
        detail = f"name_hint: {name}"
        shape = getattr(getattr(node.ty, "shape", None), "values", None)
        if shape is not None:
            dims = tuple(int(d.value) if hasattr(d, "value") else str(d) for d in shape)
            detail += f"\nshape: {dims}\ndtype: {node.ty.dtype}"
        return VizNode(node_id, kind, detail)

    def _call(
        self, node: Any, node_id: str, node_to_id: Mapping[Any, str]
    ) -> tuple[VizNode, list[VizEdge]]:
        if isinstance(node.op, tvm.ir.Op):
            name, detail = _op_name(node.op), _attr_lines(node.attrs)
        elif isinstance(node.op, tvm.ir.GlobalVar):
            name, detail = "GlobalVar", [f"GlobalVar.name_hint: {node.op.name_hint}"]
        else:
            name, detail = type(node.op).__name__, []
        edges = [VizEdge(node_to_id[arg], node_id) for arg in node.args if arg in node_to_id]
        return VizNode(node_id, f"Call {name}", "\n".join(detail)), edges
