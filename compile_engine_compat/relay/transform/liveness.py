"""The liveness of a function's ``let`` variables on the Relay graph, as TVM 0.19's VM backend
computed it (``ManifestLifetimes``, ``AnnotateUsedMemory``).

The function is in A-normal form. Its control-flow graph has a node per ``let`` binding and one
per block result; a binding whose value is an ``If`` or a ``match`` ends its block, each branch
(clause) is a block of its own and the bindings after it start a new one. A node uses the
variables of its value (an ``If``'s condition, a ``match``'s data; a function literal uses
none) and defines its ``let`` variable; ``live_in``/``live_out`` are the classic backward
data-flow solution, iterated from the post order until nothing changes.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..adt import Match
from ..expr import Call, If, Let, Tuple, TupleGetItem, Var
from ..function import Function

__all__ = ["Liveness", "on_device_body", "used_vars"]


def on_device_body(expr: Any) -> Any:
    """``expr`` without the ``on_device`` annotations around it."""
    while isinstance(expr, Call) and getattr(expr.op, "name", None) == "on_device":
        expr = expr.args[0]
    return expr


def used_vars(expr: Any) -> dict[int, Var]:
    """The variables a binding's value reads (id -> variable), as TVM 0.19's ``VarUseCollector``:
    a call's operator and arguments, tuple fields, a projection's tuple, an ``If``'s condition,
    a ``match``'s data; nothing inside a function literal."""
    if isinstance(expr, Var):
        return {id(expr): expr}
    if isinstance(expr, Call):
        found = used_vars(expr.op)
        for arg in expr.args:
            found.update(used_vars(arg))
        return found
    if isinstance(expr, Tuple):
        out: dict[int, Var] = {}
        for field in expr.fields:
            out.update(used_vars(field))
        return out
    if isinstance(expr, TupleGetItem):
        return used_vars(expr.tuple_value)
    if isinstance(expr, If):
        return used_vars(expr.cond)
    if isinstance(expr, Match):
        return used_vars(expr.data)
    return {}


class _Block:
    def __init__(self) -> None:
        self.nodes: list[_Node] = []
        self.succ: list[_Block] = []
        self.pred: list[_Block] = []


class _Node:
    def __init__(self, block: _Block, expr: Any) -> None:
        self.block = block
        self.index = len(block.nodes)
        self.expr = expr
        block.nodes.append(self)
        value = on_device_body(expr.value) if isinstance(expr, Let) else expr
        self.use = used_vars(value)
        self.define = id(expr.var) if isinstance(expr, Let) else None
        self.live_in: dict[int, Var] = {}
        self.live_out: dict[int, Var] = {}

    def successors(self) -> list[_Node]:
        if self.index + 1 < len(self.block.nodes):
            return [self.block.nodes[self.index + 1]]
        return [b.nodes[0] for b in self.block.succ]

    def predecessors(self) -> list[_Node]:
        if self.index > 0:
            return [self.block.nodes[self.index - 1]]
        return [b.nodes[-1] for b in self.block.pred]


def _link(src: _Block, dst: _Block) -> None:
    src.succ.append(dst)
    dst.pred.append(src)


class Liveness:
    """The control-flow graph of ``func`` and the variables live around each ``let``.

    Parameters
    ----------
    func : relay.Function
        In A-normal form; a function literal nested in it is a value (its body is not entered),
        except a ``Closure`` function's inner function, whose body is the one analysed.

    Raises
    ------
    ValueError
        For an ``If`` or ``match`` that is not the value of a ``let`` (A-normal form binds them).
    """

    def __init__(self, func: Function) -> None:
        body: Any = func.body
        if int(func.attrs.get("Closure", 0) or 0):
            body = body.body
        self.order: list[_Node] = []
        self.lets: dict[int, _Node] = {}
        self._visit(body, _Block())
        self._solve()

    def _visit(self, expr: Any, block: _Block) -> None:
        while isinstance(expr, Let):
            node = _Node(block, expr)
            self.lets[id(expr)] = node
            self.order.append(node)
            value = on_device_body(expr.value)
            branches: list[Any] = []
            if isinstance(value, If):
                branches = [value.true_branch, value.false_branch]
            elif isinstance(value, Match):
                branches = [clause.rhs for clause in value.clauses]
            if branches:
                after = _Block()
                for branch in branches:
                    inner = _Block()
                    _link(block, inner)
                    self._visit(branch, inner)
                    _link(inner, after)
                block = after
            expr = expr.body
        if isinstance(on_device_body(expr), If | Match):
            raise ValueError(
                "relay liveness: an If or match must be bound by a let (run "
                "relay.transform.ToANormalForm first)"
            )
        self.order.append(_Node(block, expr))

    def _solve(self) -> None:
        work = deque(reversed(self.order))
        while work:
            node = work.popleft()
            live_in = dict(node.use)
            live_in.update({k: v for k, v in node.live_out.items() if k != node.define})
            live_out: dict[int, Var] = {}
            for succ in node.successors():
                live_out.update(succ.live_in)
            if live_in.keys() != node.live_in.keys() or live_out.keys() != node.live_out.keys():
                node.live_in, node.live_out = live_in, live_out
                work.extend(node.predecessors())

    def __contains__(self, let: Any) -> bool:
        return id(let) in self.lets

    def bindings(self) -> list[Let]:
        """The analysed ``let`` bindings, in program order (a branch's before what follows)."""
        return [node.expr for node in self.order if isinstance(node.expr, Let)]

    def live_in(self, let: Let) -> list[Var]:
        """The variables live before the binding ``let`` (of the analysed function)."""
        return list(self.lets[id(let)].live_in.values())

    def live_out(self, let: Let) -> list[Var]:
        """The variables live after the binding ``let``."""
        return list(self.lets[id(let)].live_out.values())
