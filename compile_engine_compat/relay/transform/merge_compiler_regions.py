"""``relay.transform.MergeCompilerRegions``: join neighbouring regions of one compiler.

After ``AnnotateTarget`` every node is a region of its own. A region feeding a region of the same
compiler (through ``compiler_end`` then ``compiler_begin``) is merged with it, unless the merged
region would depend on itself through another region (a cycle): the annotations between the two
are removed. ``"default"`` regions (the host's) are left as they are.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, children

from ..analysis.annotated_regions import BEGIN, END, AnnotatedRegionSet, is_annotation
from ..function import Function
from .annotate_target import DEFAULT
from .relay_module import relay_graph_pass

__all__ = ["MergeCompilerRegions", "merge_compiler_regions"]


class _Regions:
    """Regions as a graph (region -> regions it feeds), merged with union-find."""

    def __init__(self, regions: AnnotatedRegionSet) -> None:
        self.set = regions
        self.parent = list(range(len(regions)))
        self.feeds: dict[int, set[int]] = {r.id: set() for r in regions}
        consumers: dict[int, list[Any]] = {}
        for node in regions.order:
            for kid in children(node):
                consumers.setdefault(id(kid), []).append(node)
        # Region A feeds region B when a node of B (or a host node on the way) uses A's output.
        for region in regions:
            reached = self._downstream(region.rets, consumers)
            self.feeds[region.id] = {r for r in reached if r != region.id}

    def _downstream(self, starts: list[Any], consumers: dict[int, list[Any]]) -> set[int]:
        """The regions reached from ``starts`` through host nodes (stopping at regions)."""
        found: set[int] = set()
        stack, seen = list(starts), set()
        while stack:
            node = stack.pop()
            for user in consumers.get(id(node), []):
                if id(user) in seen:
                    continue
                seen.add(id(user))
                region = self.set.get_region(user)
                if region is not None and user not in region.rets:
                    found.add(region.id)
                else:
                    stack.append(user)
        return found

    def find(self, r: int) -> int:
        while self.parent[r] != r:
            self.parent[r] = self.parent[self.parent[r]]
            r = self.parent[r]
        return r

    def successors(self, r: int) -> set[int]:
        members = [m for m in range(len(self.parent)) if self.find(m) == r]
        return {self.find(s) for m in members for s in self.feeds[m]} - {r}

    def reaches(self, start: int, goal: int, skip_direct: bool) -> bool:
        """Whether ``goal`` is reachable from ``start`` (through another region if
        ``skip_direct``)."""
        stack = [s for s in self.successors(start) if not (skip_direct and s == goal)]
        seen: set[int] = set()
        while stack:
            r = stack.pop()
            if r == goal:
                return True
            if r in seen:
                continue
            seen.add(r)
            stack.extend(self.successors(r))
        return False

    def merge(self, a: int, b: int) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        if self.reaches(ra, rb, True) or self.reaches(rb, ra, True):
            return False  # merging would make a cycle through another region
        self.parent[rb] = ra
        return True


class _Dropper(GraphMutator):
    """Removes the ``compiler_begin(compiler_end(x))`` pairs inside merged regions."""

    def __init__(self, drop: set[int]) -> None:
        super().__init__()
        self.drop = drop

    def stops_at(self, node: Any) -> bool:
        return isinstance(node, Function) or super().stops_at(node)

    def _dispatch(self, expr: Any) -> Any:
        if isinstance(expr, Function):
            return expr
        if id(expr) in self.drop:
            return self.visit(expr.args[0].args[0])
        return super()._dispatch(expr)


def merge_compiler_regions(func: Function) -> Function:
    """``func`` with neighbouring regions of one compiler merged (see the module docstring)."""
    if "Compiler" in func.attrs:
        return func
    regions = AnnotatedRegionSet(func.body, **INTERNAL)
    graph = _Regions(regions)
    pairs = []
    for node in regions.order:
        if is_annotation(node, BEGIN) and is_annotation(node.args[0], END):
            consumer, producer = regions.get_region(node), regions.get_region(node.args[0])
            same = str(node.attrs["compiler"]) == str(node.args[0].attrs["compiler"])
            if consumer is not None and producer is not None and same:
                if consumer.target != DEFAULT:
                    pairs.append((node, producer.id, consumer.id))
    for _, producer_id, consumer_id in pairs:
        graph.merge(producer_id, consumer_id)
    drop = {id(n) for n, p, c in pairs if graph.find(p) == graph.find(c)}
    if not drop:
        return func
    body = _Dropper(drop).visit(func.body)
    return Function(func.params, body, func.ret_type, func.type_params, func.attrs)


@legacy_api("relay.transform.PartitionGraph")
def MergeCompilerRegions() -> Any:
    """Merge neighbouring regions of one compiler (Relay's pass).

    Returns
    -------
    tvm.transform.Pass
    """
    return relay_graph_pass(
        "MergeCompilerRegions",
        lambda fs: {g: merge_compiler_regions(f) for g, f in fs.items()},
    )
