"""Rewriting and partitioning with patterns: ``rewrite``, ``DFPatternCallback``, ``partition``.

Both start from the same grouping (Relay's ``PatternGrouper``): the graph is searched from its
output towards its inputs, and each match becomes a group, unless it overlaps a group found
before or one of its inner nodes is used outside it. A group knows its inputs (what its leaf
patterns matched; constants matched by ``is_constant()`` or ``is_expr(const)`` stay inside),
the function of those inputs it amounts to, and its name (the ops of its body in post-order:
``"nn.conv2d_nn.bias_add_nn.relu_"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.graph_walk import GraphMutator
from compile_engine_compat.relay._impl.structural import relay_equal

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem, Var
from ..function import Function
from .graph import ExprGraph
from .matcher import Matcher
from .patterns import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
)

__all__ = ["DFPatternCallback", "Group", "group_matches", "partition", "rewrite"]

#: The most rounds ``rewrite`` runs its callbacks before it stops (Relay's limit).
MAX_ROUNDS = 100


def _pattern_inputs(p: DFPattern) -> list[DFPattern]:
    if isinstance(p, CallPattern):
        return [p.op, *(p.args or [])]
    if isinstance(p, FunctionPattern):
        return [*(p.params or []), p.body]
    if isinstance(p, TuplePattern):
        return list(p.fields or [])
    if isinstance(p, TupleGetItemPattern):
        return [p.tuple]
    if isinstance(p, AltPattern):
        return [p.left, p.right]
    if isinstance(p, TypePattern | DataTypePattern | ShapePattern | AttrPattern):
        return [p.pattern]
    if isinstance(p, DominatorPattern):
        return [p.parent, p.path, p.child]
    if isinstance(p, IfPattern):
        return [p.cond, p.true_branch, p.false_branch]
    if isinstance(p, LetPattern):
        return [p.var, p.value, p.body]
    return []


def _pattern_order(root: DFPattern) -> list[DFPattern]:
    """The pattern's nodes, inputs first (post-order, arguments left to right)."""
    order: list[DFPattern] = []
    seen: set[int] = set()
    stack: list[tuple[DFPattern, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(_pattern_inputs(node)))
    return order


#: Attributes of a function made by partitioning: its body is not searched again.
PARTITION_ATTRS = ("PartitionedFromPattern", "Composite")


def _inside_partitions(graph: Any) -> set[int]:
    """The nodes of the bodies of functions made by partitioning (Relay leaves them whole)."""
    inside: set[int] = set()
    for node in graph.order:
        if isinstance(node, Function) and any(k in node.attrs for k in PARTITION_ATTRS):
            inside.update(id(n) for n in ExprGraph(node.body).order)
    return inside


@dataclass
class Group:
    """One match of a pattern, as a function of its inputs."""

    root: Any
    gid: int
    args: list[Any]
    function: Function
    name: str
    matched: dict[DFPattern, list[Any]] = field(default_factory=dict)


class _Extractor(GraphMutator):
    """The matched sub-graph with its inputs replaced by the group's parameters; names it."""

    def __init__(self, inputs: dict[int, Var]) -> None:
        super().__init__()
        self.inputs = inputs
        self.name = ""

    def stops_at(self, node: Any) -> bool:
        return id(node) in self.inputs or super().stops_at(node)

    def _dispatch(self, expr: Any) -> Any:
        if id(expr) in self.inputs:
            return self.inputs[id(expr)]
        out = super()._dispatch(expr)
        if isinstance(expr, Call):
            self.name += (expr.op.name if not isinstance(expr.op, Expr) else "FunctionCall") + "_"
        elif isinstance(expr, Tuple):
            self.name += "Tuple_"
        elif isinstance(expr, TupleGetItem):
            self.name += f"TupleGetItem{expr.index}_"
        return out


class _Grouper:
    def __init__(self, pattern: DFPattern, expr: Any) -> None:
        self.pattern = pattern
        self.order = _pattern_order(pattern)
        self.matcher = Matcher(expr)
        self.groups: list[Group] = []
        self.gid: dict[int, int] = {}
        self.graph_number = 0

    def run(self) -> None:
        inside = _inside_partitions(self.matcher.graph)
        for node in reversed(self.matcher.graph.order):
            if id(node) in self.gid or id(node) in inside:
                continue
            if self.matcher.match(self.pattern, node):
                self.create(node)

    def _embed(self, expr: Any, p: DFPattern) -> bool:
        """A constant matched by ``is_constant()`` or ``is_expr(const)`` stays in the body."""
        if not isinstance(expr, Constant):
            return False
        if isinstance(p, ConstantPattern):
            return True
        if isinstance(p, ExprPattern):
            return isinstance(p.expr, Constant)
        if isinstance(p, AltPattern):
            side = p.left if Matcher(expr).match(p.left, expr) else p.right
            return self._embed(expr, side)
        return False

    def create(self, root: Any) -> None:
        node_map = self.matcher.node_map()
        fuzzy: set[int] = set()
        keep: list[Any] = []
        for p in self.order:
            if isinstance(p, DominatorPattern):
                for part in (p.parent, p.path):
                    fuzzy.update(id(m) for m in node_map.get(part, []))
            if isinstance(p, FunctionPattern):
                for func in node_map.get(p, []):
                    inner = ExprGraph(func.body)
                    keep.append(inner)
                    fuzzy.update(id(n) for n in inner.order)
        inputs: dict[int, Var] = {}
        args: list[Any] = []
        params: list[Var] = []

        def make_input(value: Any, p: DFPattern) -> None:
            if id(value) in fuzzy or not isinstance(value, Expr) or isinstance(value, Function):
                return
            if self._embed(value, p) or id(value) in inputs:
                return  # an embedded constant, or an input already (one parameter each)
            param = Var(f"FunctionVar_{self.graph_number}_{len(params)}")
            inputs[id(value)] = param
            args.append(value)
            params.append(param)

        for p in self.order:
            matches = node_map.get(p, [])
            if isinstance(p, TuplePattern) and p.fields is None:
                for m in matches:
                    for value in m.fields:
                        make_input(value, p)
            elif isinstance(p, CallPattern) and p.args is None:
                for m in matches:
                    for value in m.args:
                        make_input(value, p)
            elif not _pattern_inputs(p):
                for m in matches:
                    make_input(m, p)
        self.graph_number += 1
        extractor = _Extractor(inputs)
        body = extractor.visit(root)
        graph = self.matcher.graph
        inside = extractor.memo_map
        for key, post in inside.items():
            node = next((n for n in extractor._keep if id(n) == key), None)
            # Leaves (an embedded constant, a variable) may be shared with the rest of the graph.
            if node is None or isinstance(node, Function | Constant | Var) or key in inputs:
                continue
            if key in self.gid:
                return  # overlaps a group found before
            if post is not body and node in graph:
                for user in graph.outputs.get(key, []):
                    if id(user) not in inside and not graph.dominates(root, user):
                        return  # an inner node used outside the match: not a valid fusion
        gid = len(self.groups) + 1
        func = Function(params, body)
        self.groups.append(Group(root, gid, args, func, extractor.name, node_map))
        for key in inside:
            if key not in inputs:
                self.gid[key] = gid


def group_matches(pattern: DFPattern, expr: Any) -> tuple[list[Group], dict[int, int]]:
    """The groups of ``pattern``'s matches in ``expr``, and node id -> group id."""
    grouper = _Grouper(pattern, expr)
    grouper.run()
    return grouper.groups, grouper.gid


class _GroupMutator(GraphMutator):
    """Rewrites the root of each group after its inputs were rewritten."""

    def __init__(self, groups: list[Group], gid: dict[int, int]) -> None:
        super().__init__()
        self.groups = groups
        self.gid = gid

    def replace(self, pre: Any, post: Any, group: Group) -> Any:
        raise NotImplementedError

    def _dispatch(self, expr: Any) -> Any:
        post = super()._dispatch(expr)
        gid = self.gid.get(id(expr))
        if gid is not None and self.groups[gid - 1].root is expr:
            return self.replace(expr, post, self.groups[gid - 1])
        return post

    def post_of(self, value: Any) -> Any:
        """The rewritten form of a matched node (itself when not rewritten: an op)."""
        return self.memo_map.get(id(value), value)


class _Rewriter(_GroupMutator):
    def __init__(self, groups: list[Group], gid: dict[int, int], callback: Any) -> None:
        super().__init__(groups, gid)
        self.callback = callback

    def replace(self, pre: Any, post: Any, group: Group) -> Any:
        node_map = {p: [self.post_of(v) for v in values] for p, values in group.matched.items()}
        out = self.callback.callback(pre, post, node_map)
        if hasattr(out, "astuple") and not isinstance(out, Expr):
            out = out.astuple()
        if not isinstance(out, Expr):
            raise TypeError(
                f"{type(self.callback).__name__}.callback returned {out!r}: a Relay expression "
                "was expected"
            )
        return out


class _Partitioner(_GroupMutator):
    def __init__(
        self,
        groups: list[Group],
        gid: dict[int, int],
        attrs: Mapping[str, Any],
        check: Callable[[Any], Any],
    ) -> None:
        super().__init__(groups, gid)
        self.attrs = attrs
        self.check = check

    def replace(self, pre: Any, post: Any, group: Group) -> Any:
        if not self.check(pre):
            return post
        func = group.function.with_attr("PartitionedFromPattern", group.name)
        for key, value in self.attrs.items():
            func = func.with_attr(key, value)
        return Call(func, [self.post_of(a) for a in group.args])


class DFPatternCallback:
    """A rewrite: ``pattern`` and ``callback(pre, post, node_map)`` (Relay's class).

    Parameters
    ----------
    require_type : bool
        Infer the types of the graph before each round (the callback reads ``checked_type``).
    rewrite_once : bool
        Run one round only (by default rounds repeat until the graph stops changing).
    """

    pattern: DFPattern

    def __init__(self, require_type: bool = False, rewrite_once: bool = False) -> None:
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr: Any) -> Any:
        """``rewrite(self, expr)``."""
        return rewrite(self, expr)

    def callback(self, pre: Any, post: Any, node_map: Mapping[DFPattern, list[Any]]) -> Any:
        """The replacement of a match; ``node_map`` maps each sub-pattern to what it matched
        (rewritten already)."""
        raise NotImplementedError(
            f"{type(self).__name__} must define callback(pre, post, node_map)"
        )


def _typed(expr: Any) -> Any:
    from compile_engine_compat.relay._impl.to_relax import infer

    try:
        infer(expr)
    except (TypeError, ValueError, NotImplementedError):
        pass  # untyped inputs: the types that can be inferred only (Relay's incomplete types)
    return expr


@legacy_api("relay.dataflow_pattern")
def rewrite(
    callbacks: DFPatternCallback | Sequence[DFPatternCallback], expr: Any, mod: Any = None
) -> Any:
    """Rewrite ``expr`` with ``callbacks`` until it stops changing (Relay's ``rewrite``).

    Parameters
    ----------
    callbacks : DFPatternCallback or list of them
        Applied in turn, each to the whole graph, in rounds.
    expr : Expr, or the Relax function of a front-end function (``mod["main"]``)
        The graph (a Relax function is read back as the Relay function it was built from).
    mod : ignored
        Relay's module for type inference (the front end types without one).

    Returns
    -------
    Expr
        The rewritten graph (``expr`` itself when nothing matched).

    Raises
    ------
    TypeError
        For a Relax function with no Relay graph (a Relax pass or TVMScript built it).
    """
    if isinstance(expr, relax.Function):
        found = origin.relay_of(expr)
        if found is None:
            raise TypeError(
                "relay.dataflow_pattern.rewrite works on the Relay graph of the front end; this "
                "Relax function has none (a Relax pass built it, or it was not built by "
                "tvm.relay): rewrite it with tvm.relax.dpl.rewrite_call"
            )
        expr = found
    items = [callbacks] if isinstance(callbacks, DFPatternCallback) else list(callbacks)
    for cb in items:
        if not isinstance(getattr(cb, "pattern", None), DFPattern):
            raise TypeError(f"{type(cb).__name__} has no pattern: set self.pattern in __init__")
    if hasattr(expr, "astuple") and not isinstance(expr, Expr):
        expr = expr.astuple()
    post = expr
    for round_number in range(MAX_ROUNDS):
        last = post
        # A rewrite_once callback runs in the first round only; the others until nothing changes.
        for cb in [c for c in items if round_number == 0 or not c.rewrite_once]:
            if cb.require_type:
                post = _typed(post)
            groups, gid = group_matches(cb.pattern, post)
            post = _Rewriter(groups, gid, cb).visit(post)
        if relay_equal(last, post):
            break
    return post


@legacy_api("relay.dataflow_pattern")
def partition(
    pattern: DFPattern,
    expr: Any,
    attrs: Mapping[str, Any] | None = None,
    check: Callable[[Any], Any] | None = None,
) -> Any:
    """Each match of ``pattern`` in ``expr`` as a call of a new function of its inputs.

    The function carries ``PartitionedFromPattern`` (the ops it holds) and ``attrs``; a match
    that ``check(root)`` rejects, that overlaps another, or whose inner nodes are used outside
    it, stays as it was.
    """
    if hasattr(expr, "astuple") and not isinstance(expr, Expr):
        expr = expr.astuple()
    groups, gid = group_matches(pattern, expr)
    return _Partitioner(groups, gid, dict(attrs or {}), check or (lambda _: True)).visit(expr)
