"""``relay.analysis.AnnotatedRegionSet``: the regions ``compiler_begin``/``compiler_end`` mark.

A region is a set of nodes joined by direct dataflow edges, entered through ``compiler_begin``
annotations (its inputs) and left through ``compiler_end`` annotations (its outputs); its target
is the compiler those annotations name. ``MergeCompilerRegions`` and ``PartitionGraph`` work on
these regions; variables, constants and functions (composites) are leaves, not region nodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import children

from ..expr import Call, Tuple, TupleGetItem
from ..function import Function

__all__ = ["AnnotatedRegion", "AnnotatedRegionSet", "is_annotation", "region_graph_order"]

BEGIN, END = "annotation.compiler_begin", "annotation.compiler_end"


def is_annotation(node: Any, kind: str | None = None) -> bool:
    """Whether ``node`` is a ``compiler_begin``/``compiler_end`` call (``kind``: that one)."""
    name = getattr(getattr(node, "op", None), "name", None) if isinstance(node, Call) else None
    return name in (BEGIN, END) if kind is None else name == kind


def _compiler(node: Call) -> str:
    attrs: Any = node.attrs
    return str(attrs["compiler"])


def region_graph_order(root: Any) -> list[Any]:
    """Every node below ``root`` (not inside functions), inputs first."""
    order: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        if not isinstance(node, Function) or node is root:
            kids = [node.body] if isinstance(node, Function) else children(node)
            stack.extend((c, False) for c in reversed(kids))
    return order


class AnnotatedRegion:
    """One region (Relay's names): its ``nodes`` (annotations included), ``args`` (the
    ``compiler_begin`` calls), ``rets`` (the ``compiler_end`` calls), ``target`` and ``id``."""

    def __init__(self, region_id: int, target: str | None) -> None:
        self.id = region_id
        self.target = target
        self.nodes: list[Any] = []
        self.args: list[Call] = []
        self.rets: list[Call] = []

    def __repr__(self) -> str:
        return f"AnnotatedRegion(id={self.id}, target={self.target!r}, nodes={len(self.nodes)})"


@legacy_api("relay.transform.PartitionGraph")
class AnnotatedRegionSet:
    """The regions of ``expr`` (Relay's ``AnnotatedRegionSet(expr, begin_op, end_op)``).

    Parameters
    ----------
    expr : Expr
        An annotated graph (a function: its body).
    region_begin_op, region_end_op : Op, optional
        ``annotation.compiler_begin`` and ``annotation.compiler_end`` (the only ones served).
    """

    def __init__(self, expr: Any, region_begin_op: Any = None, region_end_op: Any = None) -> None:
        for op, name in ((region_begin_op, BEGIN), (region_end_op, END)):
            if op is not None and getattr(op, "name", None) != name:
                raise ValueError(f"AnnotatedRegionSet takes the {name} op, got {op!r}")
        self.root = expr
        self.order = region_graph_order(expr)
        self._parent: dict[int, int] = {}
        self._nodes: dict[int, Any] = {}
        for node in self.order:
            if self._member(node):
                self._nodes[id(node)] = node
                self._parent.setdefault(id(node), id(node))
        for node in self.order:
            if id(node) not in self._nodes or is_annotation(node, BEGIN):
                continue  # a begin does not join the value entering the region
            for kid in children(node):
                if id(kid) not in self._nodes:
                    continue
                if is_annotation(kid, END) and not is_annotation(node, END):
                    continue  # a consumer of an end is outside the region
                self._union(id(node), id(kid))
        self._build()

    @staticmethod
    def _member(node: Any) -> bool:
        return isinstance(node, Call | Tuple | TupleGetItem)

    def _find(self, key: int) -> int:
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def _union(self, a: int, b: int) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self._parent[rb] = ra

    def _build(self) -> None:
        self.regions: list[AnnotatedRegion] = []
        by_root: dict[int, AnnotatedRegion] = {}
        self._region_of: dict[int, AnnotatedRegion] = {}
        for node in self.order:
            if id(node) not in self._nodes:
                continue
            root = self._find(id(node))
            region = by_root.get(root)
            if region is None:
                region = by_root[root] = AnnotatedRegion(len(by_root), None)
                self.regions.append(region)
            region.nodes.append(node)
            self._region_of[id(node)] = region
        for region in self.regions:
            for node in region.nodes:
                if is_annotation(node, BEGIN):
                    region.args.append(node)
                elif is_annotation(node, END):
                    region.rets.append(node)
                if is_annotation(node):
                    region.target = region.target or _compiler(node)
        # Keep annotated regions only: plain graph nodes are in no region.
        self.regions = [r for r in self.regions if r.args or r.rets]
        kept = {id(r) for r in self.regions}
        self._region_of = {k: r for k, r in self._region_of.items() if id(r) in kept}
        for i, region in enumerate(self.regions):
            region.id = i

    def get_region(self, expr: Any) -> AnnotatedRegion | None:
        """The region holding ``expr`` (None when it is in none)."""
        return self._region_of.get(id(expr))

    def __len__(self) -> int:
        return len(self.regions)

    def __iter__(self) -> Iterator[AnnotatedRegion]:
        return iter(self.regions)
