"""TVM 0.19's operator fusion on the Relay graph (``fuse_ops.cc``): groups of ops by their
``TOpPattern``, each group a function marked ``Primitive=1`` called in place.

The algorithm is Relay's: an indexed forward graph of the dataflow (post-order), its
post-dominator tree, and three phases of union-find merging of each node into its immediate
post-dominator where every path between them passes the phase's pattern test: an anchor
(``kOutEWiseFusable``: conv2d, dense) with the elementwise ops after it (phase 0), elementwise
and broadcast ops into injective or reduction consumers (phase 0), injective chains and tuples
(phase 1), injective ops into intermediate tuples (phase 2). ``let``, ``if``, references,
function parameters and bodies are fusion barriers; ``annotation.stop_fusion`` is one too, and
is dropped from the result. No group grows past ``max_depth`` nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tvm

from compile_engine_compat.relay.dataflow_pattern.op_kinds import (
    BROADCAST,
    COMM_REDUCE,
    ELEMWISE,
    INJECTIVE,
    OPAQUE,
    OUT_EWISE_FUSABLE,
    op_pattern,
)
from compile_engine_compat.relay.expr import Call, Constant, Tuple, TupleGetItem, Var
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import TensorType, TupleType

from .graph_walk import GraphVisitor, children, rebuild
from .registry import RelayOp

__all__ = ["TUPLE", "fuse", "is_primitive"]

#: Relay's ``kTuple`` pattern (between ``kOutEWiseFusable`` and ``kOpaque``).
TUPLE = 7
_SIMPLE_CONST = {"int32", "int64", "float32", "float64", "bool"}
_RESHAPE_OPS = {"reshape", "squeeze", "expand_dims", "contrib_reverse_reshape", "dyn.reshape"}


def is_primitive(func: Any) -> bool:
    """Whether ``func`` is a Relay function marked ``Primitive`` (non-zero)."""
    attrs = getattr(func, "attrs", None)
    if not isinstance(func, Function) or not attrs or "Primitive" not in attrs:
        return False
    return bool(int(attrs["Primitive"]))


def _skipped(node: Any) -> bool:
    """A function fusion leaves alone: already primitive, or for an external compiler."""
    attrs = getattr(node, "attrs", None)
    external = bool(attrs and "Compiler" in attrs)
    return isinstance(node, Function) and (is_primitive(node) or external)


def _combine(lhs: int, rhs: int) -> int:
    return max(lhs, rhs)


@dataclass(eq=False)
class _Node:
    ref: Any
    index: int = -1
    pattern: int = OPAQUE
    extern_ref: bool = False
    outputs: list[tuple[_Node, int]] = field(default_factory=list)


class _Graph(GraphVisitor):
    """Relay's ``IndexedForwardGraph``: nodes in post-order, each with its consumers."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[int, _Node] = {}
        self.order: list[_Node] = []

    def stops_at(self, node: Any) -> bool:
        return _skipped(node) or super().stops_at(node)

    def entry(self, expr: Any) -> _Node:
        found = self.nodes.get(id(expr))
        if found is None:
            found = self.nodes[id(expr)] = _Node(expr)
        return found

    def update(self, expr: Any, parent: _Node | None, pattern: int) -> None:
        node = self.entry(expr)
        if parent is None:
            node.extern_ref = True
        else:
            node.outputs.append((parent, pattern))

    def add(self, expr: Any, pattern: int) -> None:
        node = self.entry(expr)
        node.pattern = pattern
        node.index = len(self.order)
        self.order.append(node)

    def visit_function(self, func: Any) -> Any:
        if _skipped(func):
            return
        for item in children(func):
            self.update(item, None, OPAQUE)
            self.visit(item)

    def visit_call(self, call: Any) -> Any:
        kind = op_pattern(call.op) if isinstance(call.op, RelayOp) else OPAQUE
        node = self.entry(call)
        if not isinstance(call.op, RelayOp):
            self.update(call.op, node, OPAQUE)
            self.update(call.op, None, OPAQUE)
        out = _shape(call)
        for arg in call.args:
            edge = kind
            if edge == BROADCAST and out is not None and _shape(arg) == out:
                edge = ELEMWISE
            self.update(arg, node, edge)
        self._visit_children(call)
        self.add(call, kind)

    def visit_tuple(self, tup: Any) -> Any:
        node = self.entry(tup)
        for item in tup.fields:
            if isinstance(_type(item), TensorType):
                self.update(item, node, INJECTIVE)
            else:
                self.update(item, None, OPAQUE)
        self._visit_children(tup)
        self.add(tup, TUPLE)

    def visit_tuple_getitem(self, item: Any) -> Any:
        tuple_type = _type(item.tuple_value)
        tensors = isinstance(tuple_type, TupleType) and all(
            isinstance(f, TensorType) for f in tuple_type.fields
        )
        kind = INJECTIVE if tensors else OPAQUE
        self.update(item.tuple_value, self.entry(item) if tensors else None, kind)
        self._visit_children(item)
        self.add(item, kind)

    def visit_var(self, var: Var) -> Any:
        self.add(var, OPAQUE)

    def visit_constant(self, const: Constant) -> Any:
        data = const.data
        scalar = len(data.shape) == 0 and str(data.dtype) in _SIMPLE_CONST
        self.add(const, ELEMWISE if scalar else OPAQUE)

    def _barrier(self, expr: Any) -> Any:
        for item in children(expr):
            self.update(item, None, OPAQUE)
            self.visit(item)
        self.add(expr, OPAQUE)

    visit_let = visit_if = visit_other = _barrier


def _type(expr: Any) -> Any:
    return getattr(expr, "_checked_type", None)


def _shape(expr: Any) -> tuple[str, ...] | None:
    ty = _type(expr)
    return tuple(str(d) for d in ty.shape) if isinstance(ty, TensorType) else None


class _Group:
    def __init__(self, node: _Node) -> None:
        self.parent: _Group | None = None
        self.pattern = node.pattern
        self.root_ref = node.ref
        self.anchor = node.ref if node.pattern == OUT_EWISE_FUSABLE else None
        self.num_nodes = 1
        self.params: list[Var] = []
        self.arguments: list[Any] = []

    def root(self) -> _Group:
        group = self
        while group.parent is not None:
            group = group.parent
        walk = self
        while walk.parent is not None and walk.parent is not group:
            walk.parent, walk = group, walk.parent
        return group


@dataclass(eq=False)
class _Dom:
    depth: int
    parent: _Dom | None
    pattern: int


def _post_dominators(order: list[_Node]) -> list[_Dom]:
    tree: list[_Dom | None] = [None] * len(order)
    for index in range(len(order) - 1, -1, -1):
        node = order[index]
        if node.extern_ref or not node.outputs:
            tree[index] = _Dom(1, None, OPAQUE if node.extern_ref else ELEMWISE)
            continue
        pattern = ELEMWISE
        parent: _Dom | None = None
        for number, (out, edge) in enumerate(node.outputs):
            dom = tree[out.index]
            assert dom is not None
            if number == 0:
                parent = dom
            else:
                parent, pattern = _lca(parent, dom, pattern)
            pattern = _combine(pattern, edge)
        tree[index] = _Dom(parent.depth + 1 if parent else 1, parent, pattern)
    return [d for d in tree if d is not None]


def _lca(lhs: _Dom | None, rhs: _Dom | None, pattern: int) -> tuple[_Dom | None, int]:
    while lhs is not rhs:
        if lhs is None or rhs is None:
            return None, pattern
        if lhs.depth < rhs.depth:
            pattern, rhs = _combine(pattern, rhs.pattern), rhs.parent
        elif rhs.depth < lhs.depth:
            pattern, lhs = _combine(pattern, lhs.pattern), lhs.parent
        else:
            pattern = _combine(_combine(pattern, lhs.pattern), rhs.pattern)
            lhs, rhs = lhs.parent, rhs.parent
    return lhs, pattern


class _Partitioner:
    """Relay's ``GraphPartitioner``: the union-find of groups, merged in three phases."""

    def __init__(self, order: list[_Node], max_depth: int) -> None:
        self.order = order
        self.groups = [_Group(node) for node in order]
        self.max_depth = max_depth
        self.visited: set[int] = set()
        self.dom_nodes: dict[int, _Node] = {}

    def run(self, opt_level: int) -> list[_Group]:
        if opt_level == 0:
            return self.groups
        tree = _post_dominators(self.order)
        self.dom_nodes = {id(d): n for d, n in zip(tree, self.order, strict=True)}
        for phase in range(3):
            for nid, node in enumerate(self.order):
                self._fuse_one(node, tree[nid], self.groups[nid], phase)
        return self.groups

    def _fuse_one(self, node: _Node, dom: _Dom, group: _Group, phase: int) -> None:
        if group.pattern == OPAQUE or dom.parent is None:
            return
        sink = self.dom_nodes[id(dom.parent)]
        if self._count(node, sink) > self.max_depth:
            return
        sink_group = self.groups[sink.index]
        if phase == 2:
            root = sink_group.root()
            if group.pattern > INJECTIVE or root.pattern == TUPLE:
                return
            if sink_group.pattern == TUPLE and root.pattern <= INJECTIVE:
                self._fuse_if(node, sink, lambda kind, _sink: kind <= INJECTIVE)
            return
        if group.root() is sink_group.root() or sink_group.pattern == TUPLE:
            return
        if group.pattern == OUT_EWISE_FUSABLE:
            if phase == 0 and dom.pattern == ELEMWISE:
                self._fuse_if(node, sink, lambda kind, _sink: kind <= BROADCAST)
        elif group.pattern <= BROADCAST:
            if dom.pattern <= INJECTIVE or dom.pattern == COMM_REDUCE:
                self._fuse_if(node, sink, _into_consumer)
        elif group.pattern in (INJECTIVE, TUPLE) and phase == 1:
            self._fuse_if(node, sink, lambda kind, _sink: kind <= INJECTIVE)

    def _check(self, src: _Node, sink: _Node, cond: Any) -> bool:
        stack = [out for out, _ in src.outputs]
        while stack:
            node = stack.pop()
            if id(node) in self.visited:
                continue
            self.visited.add(id(node))
            if not cond(self.groups[node.index].root().pattern, node is sink):
                return False
            if node is not sink:
                stack.extend(out for out, _ in node.outputs)
        return True

    def _fuse_if(self, src: _Node, sink: _Node, cond: Any) -> None:
        self.visited = set()
        if not self._check(src, sink, cond):
            return
        target = self.groups[sink.index]
        self.visited = set()
        stack = [src]
        while stack:
            node = stack.pop()
            if node is sink or id(node) in self.visited:
                continue
            self.visited.add(id(node))
            self._merge(self.groups[node.index], target)
            stack.extend(out for out, _ in node.outputs)

    def _merge(self, child: _Group, parent: _Group) -> None:
        child, parent = child.root(), parent.root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor is not None:
            parent.anchor = child.anchor
            parent.pattern = _combine(child.pattern, parent.pattern)

    def _count(self, child: _Node, sink: _Node) -> int:
        self.visited = set()
        total = self.groups[sink.index].root().num_nodes
        stack = [child]
        while stack:
            node = stack.pop()
            if node is sink or id(node) in self.visited:
                continue
            self.visited.add(id(node))
            total += self.groups[node.index].num_nodes
            stack.extend(out for out, _ in node.outputs)
        return total


def _into_consumer(kind: int, is_sink: bool) -> bool:
    if not is_sink:
        return kind <= INJECTIVE
    return kind <= INJECTIVE or kind in (COMM_REDUCE, OUT_EWISE_FUSABLE)


class _Rewriter:
    """Relay's ``FuseMutator``: each group's root becomes a call of its ``Primitive``
    function, in the order Relay's recursive mutator allocated the parameters."""

    def __init__(self, gmap: dict[int, _Group], link_params: bool = False) -> None:
        self.gmap = gmap
        self.link_params = link_params
        self.memo: dict[int, Any] = {}
        self.keep: list[Any] = []

    def rewrite(self, expr: Any) -> Any:
        stack: list[list[Any]] = [[expr, 0, []]]
        while stack:
            frame = stack[-1]
            node, done, new = frame
            kids = [] if _skipped(node) else children(node)
            if done < len(kids):
                kid = kids[done]
                if id(kid) not in self.memo:
                    stack.append([kid, 0, []])
                    continue
                new.append(self._argument(node, kid))
                frame[1] = done + 1
                continue
            stack.pop()
            self.keep.append(node)
            self.memo[id(node)] = self._finish(node, new)
        return self.memo[id(expr)]

    def _fused(self, node: Any) -> bool:
        """Whether ``node``'s arguments become parameters of its group's function."""
        if isinstance(node, Call):
            return isinstance(node.op, RelayOp) and node.op.name != "annotation.stop_fusion"
        if isinstance(node, Tuple):
            return self.gmap[id(node)].root().root_ref is not node
        return isinstance(node, TupleGetItem) and id(node) in self.gmap

    def _argument(self, node: Any, kid: Any) -> Any:
        mutated = self.memo[id(kid)]
        if not self._fused(node) or (isinstance(node, Call) and kid is node.op):
            return mutated
        group = self.gmap[id(node)].root()
        if self.gmap[id(kid)].root() is group:
            return mutated
        if self.link_params and isinstance(mutated, Constant):
            return mutated  # relay.FuseOps.link_params: a constant stays in the function
        for param, argument in zip(group.params, group.arguments, strict=True):
            if argument is mutated:
                return param
        # A parameter fed by an unannotated variable is left to inference, as the variable is
        # (Relay's InferType wrote both annotations in; the shim's keeps the ones written).
        untyped = isinstance(kid, Var) and kid.type_annotation is None
        param = Var(f"p{len(group.params)}", None if untyped else _type(kid))
        param._checked_type = _type(kid)
        group.params.append(param)
        group.arguments.append(mutated)
        return param

    def _finish(self, node: Any, new: list[Any]) -> Any:
        if _skipped(node):
            return node  # an already-fused function is kept whole (its body was not walked)
        if isinstance(node, Call) and isinstance(node.op, RelayOp):
            if node.op.name == "annotation.stop_fusion":
                return self.memo[id(node.args[0])]
        if isinstance(node, TupleGetItem) and id(node) in self.gmap:
            group = self.gmap[id(node)].root()
            if group.root_ref is node and self.gmap[id(node.tuple_value)].root() is not group:
                return rebuild(node, [self.memo[id(node.tuple_value)]])
        rebuilt = rebuild(node, new)
        if not self._fused(node) or self.gmap[id(node)].root().root_ref is not node:
            return rebuilt
        return _primitive_call(self.gmap[id(node)].root(), rebuilt, _type(node))


def _primitive_call(group: _Group, body: Any, ret_type: Any) -> Any:
    calls = _calls(body)
    func = Function(list(group.params), body, ret_type, [])
    func = func.with_attr("Primitive", tvm.tirx.IntImm("int32", int(bool(calls))))
    if calls and all(name in _RESHAPE_OPS for name in calls):
        func = func.with_attr("relay.reshape_only", tvm.tirx.IntImm("int32", 1))
    return Call(func, list(group.arguments))


def _calls(body: Any) -> list[str]:
    """The op names called in a fused body (a non-op call counts as ``""``)."""
    names: list[str] = []
    stack, seen = [body], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Call):
            names.append(str(node.op.name) if isinstance(node.op, RelayOp) else "")
        stack.extend(children(node))
    return names


def fuse(func: Function, opt_level: int, max_depth: int, link_params: bool = False) -> Function:
    """``func`` (typed) with its ops fused into ``Primitive`` functions, as TVM 0.19 did.

    Parameters
    ----------
    func : relay.Function
        A Relay function whose nodes carry their types (``infer`` ran on it).
    opt_level : int
        Relay's fusion level: 0 makes each op its own function.
    max_depth : int
        The most nodes of one fused function (``relay.FuseOps.max_depth``).
    link_params : bool
        Keep the constants a fused function reads in its body (``relay.FuseOps.link_params``)
        instead of passing them as parameters.

    Returns
    -------
    relay.Function
    """
    graph = _Graph()
    graph.update(func, None, OPAQUE)
    graph.visit(func)
    groups = _Partitioner(graph.order, max_depth).run(opt_level)
    gmap = {id(node.ref): group for node, group in zip(graph.order, groups, strict=True)}
    out: Function = _Rewriter(gmap, link_params).rewrite(func)
    return out
