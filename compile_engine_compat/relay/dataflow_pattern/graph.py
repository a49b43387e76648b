"""The dataflow graph of a Relay expression, as the matcher needs it (Relay's ``IndexedGraph``).

Each node knows its inputs and its consumers, its place in topological order (inputs first),
and its immediate dominator: the nearest node every path from it to the root passes through.
``dominates`` patterns and the overlap check of partitioning read that dominator tree.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay._impl.graph_walk import children

__all__ = ["ExprGraph"]


class ExprGraph:
    """The dataflow graph below ``root`` (function bodies included).

    Attributes
    ----------
    order : list
        Every node, inputs before the nodes that use them; ``root`` last.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self.order: list[Any] = []
        self.inputs: dict[int, list[Any]] = {}
        self.outputs: dict[int, list[Any]] = {}
        self.index: dict[int, int] = {}
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                self.index[id(node)] = len(self.order)
                self.order.append(node)
                continue
            if id(node) in self.inputs:
                continue
            kids = children(node)
            self.inputs[id(node)] = kids
            self.outputs.setdefault(id(node), [])
            stack.append((node, True))
            for kid in reversed(kids):
                self.outputs.setdefault(id(kid), []).append(node)
                stack.append((kid, False))
        self._dominators()

    def __contains__(self, node: Any) -> bool:
        return id(node) in self.index

    def _dominators(self) -> None:
        """The immediate dominator of each node, consumers first (the root has none)."""
        self.idom: dict[int, Any] = {}
        self.depth: dict[int, int] = {id(self.root): 0}
        self.dominated: dict[int, list[Any]] = {id(n): [] for n in self.order}
        for node in reversed(self.order[:-1]):
            users = [u for u in self.outputs[id(node)] if id(u) in self.depth]
            if not users:
                continue
            parent = users[0]
            for user in users[1:]:
                parent = self._common(parent, user)
            self.idom[id(node)] = parent
            self.depth[id(node)] = self.depth[id(parent)] + 1
            self.dominated[id(parent)].append(node)

    def _common(self, a: Any, b: Any) -> Any:
        while a is not b:
            if self.depth[id(a)] >= self.depth[id(b)]:
                a = self.idom[id(a)]
            else:
                b = self.idom[id(b)]
        return a

    def dominator_children(self, node: Any) -> list[Any]:
        """The nodes whose immediate dominator is ``node``."""
        return self.dominated.get(id(node), [])

    def dominates(self, a: Any, b: Any) -> bool:
        """Whether every path from ``b`` to the root passes through ``a`` (``a is b`` too)."""
        current = b
        while current is not None:
            if current is a:
                return True
            current = self.idom.get(id(current))
        return False
