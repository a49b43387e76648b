"""Matching a pattern against the front end's Relay graph, with Relay's semantics.

* ``add`` and ``multiply`` match with their arguments in either order; a ``divide`` of a
  ``multiply`` matches the same product written ``a * (b / c)``, and back;
* a sub-pattern used twice must match one expression (the memo), so ``x + x`` patterns are
  diamonds;
* ``has_attr`` reads an op's attributes (``TOpPattern``), a call's attributes or a function's;
* ``dominates(parent, path, child)``: every input of ``child`` leads through ``path`` nodes to
  the one ``parent``, which ``child`` dominates in the dataflow graph.

:class:`Matcher` keeps, per pattern, the expressions it matched (the ``node_map`` of rewrite
callbacks and the inputs of partitioned functions).
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.relay._impl.structural import attr_value, structural_equal

from ..expr import Call, Constant, Expr, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..ty import TensorType
from .graph import ExprGraph
from .op_kinds import op_pattern
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
    VarPattern,
    WildcardPattern,
)

__all__ = ["Matcher", "match", "same_value"]


def same_value(expected: Any, actual: Any) -> bool:
    """Whether an attribute value ``actual`` is the pattern's ``expected`` (Relay's
    ``MatchRetValue``: numbers by value, strings by text, arrays element by element)."""
    want, have = attr_value(expected), attr_value(actual)
    if isinstance(want, list) and isinstance(have, list):
        return len(want) == len(have) and all(same_value(a, b) for a, b in zip(want, have))
    if isinstance(want, str) or isinstance(have, str):
        return str(want) == str(have)
    try:
        return bool(want == have)
    except Exception:  # an object with no equality: same object only
        return want is have


def _op_of(pattern: DFPattern | None) -> str | None:
    """The op name of a call pattern written ``is_op(name)(...)``."""
    if isinstance(pattern, CallPattern) and isinstance(pattern.op, ExprPattern):
        return getattr(pattern.op.expr, "name", None)
    return None


def _calls(expr: Any, name: str) -> bool:
    return isinstance(expr, Call) and getattr(expr.op, "name", None) == name


def _type_of(expr: Any) -> Any:
    """``expr``'s inferred type, or None where it has none (untyped inputs)."""
    if not isinstance(expr, Expr):
        return None
    if isinstance(expr, Var):
        return expr.type_annotation or expr._checked_type
    if expr._checked_type is None:
        from compile_engine_compat.relay._impl.to_relax import infer

        try:
            infer(expr)
        except Exception:  # untyped or ill-typed: no type, so no type pattern matches
            return None
    return expr._checked_type


class Matcher:
    """Matches patterns against expressions of the graph below ``root``."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self._graph: ExprGraph | None = None
        self.memo: dict[int, list[Any]] = {}
        self.patterns: dict[int, DFPattern] = {}
        self.matched: list[DFPattern] = []
        self.memoize = True

    @property
    def graph(self) -> ExprGraph:
        """The dataflow graph of ``root`` (built on first use)."""
        if self._graph is None:
            self._graph = ExprGraph(self.root)
        return self._graph

    def match(self, pattern: DFPattern, expr: Any) -> bool:
        """Whether ``expr`` matches ``pattern`` (the memo starts afresh)."""
        self.memo.clear()
        self.matched.clear()
        self.memoize = True
        return self.visit(pattern, expr)

    def node_map(self) -> dict[DFPattern, list[Any]]:
        """Pattern -> the expressions it matched, for the last :meth:`match`."""
        return {self.patterns[k]: list(v) for k, v in self.memo.items()}

    def clear(self, watermark: int) -> None:
        """Forget the matches recorded after ``watermark``."""
        for pattern in self.matched[watermark:]:
            self.memo.pop(id(pattern), None)
        del self.matched[watermark:]

    def visit(self, pattern: DFPattern, expr: Any) -> bool:
        """Match with the memo: a pattern matched before matches that expression only."""
        if not isinstance(pattern, DFPattern):
            raise TypeError(f"a pattern was expected (is_op, wildcard, ...), got {pattern!r}")
        if self.memoize and id(pattern) in self.memo:
            return self.memo[id(pattern)][0] is expr
        watermark = len(self.matched)
        found = self._dispatch(pattern, expr)
        if found:
            self.memo.setdefault(id(pattern), []).append(expr)
            self.patterns[id(pattern)] = pattern
            self.matched.append(pattern)
        else:
            self.clear(watermark)
        return found

    def _dispatch(self, p: DFPattern, e: Any) -> bool:
        handler = getattr(self, "_" + type(p).__name__, None)
        if handler is None:
            raise TypeError(f"unknown pattern kind {type(p).__name__}")
        return bool(handler(p, e))

    # -- leaves ----------------------------------------------------------------------------------

    def _WildcardPattern(self, p: WildcardPattern, e: Any) -> bool:
        redirect = getattr(p, "redirect", None)
        return True if redirect is None else self.visit(redirect, e)

    def _ExprPattern(self, p: ExprPattern, e: Any) -> bool:
        if p.expr is e:
            return True
        if isinstance(p.expr, Expr) and isinstance(e, Expr):
            return structural_equal(p.expr, e)
        return False

    def _VarPattern(self, p: VarPattern, e: Any) -> bool:
        return isinstance(e, Var) and (not p.name or p.name == e.name_hint)

    def _ConstantPattern(self, p: ConstantPattern, e: Any) -> bool:
        return isinstance(e, Constant)

    # -- compound nodes --------------------------------------------------------------------------

    def _args(self, patterns: list[DFPattern] | None, exprs: list[Any]) -> bool:
        watermark = len(self.matched)
        ok = True
        if patterns is not None:
            ok = len(patterns) == len(exprs) and all(
                self.visit(p, a) for p, a in zip(patterns, exprs)
            )
        if not ok:
            self.clear(watermark)
        return ok

    def _CallPattern(self, p: CallPattern, e: Any) -> bool:
        if not isinstance(e, Call):
            return False
        watermark = len(self.matched)
        if self.visit(p.op, e.op):
            if self._args(p.args, e.args):
                return True
            if _op_of(p) in ("add", "multiply") and p.args is not None and len(p.args) == 2:
                return self._args([p.args[1], p.args[0]], e.args)
            return False
        self.clear(watermark)
        return self._associated(p, e, watermark)

    def _associated(self, p: CallPattern, e: Call, watermark: int) -> bool:
        """``(a * b) / c`` matches ``a * (b / c)`` and the other way round (Relay's rule)."""
        first = p.args[0] if p.args else None
        if _op_of(p) == "divide" and _op_of(first) == "multiply" and _calls(e, "multiply"):
            assert isinstance(first, CallPattern) and first.args and p.args
            if any(_calls(a, "divide") for a in e.args):
                for i in range(2):
                    div = CallPattern(p.op, [first.args[i], p.args[1]])
                    mul = CallPattern(first.op, [first.args[(i + 1) % 2], div])
                    if self.visit(mul, e):
                        return True
                    self.clear(watermark)
                return False
        if _op_of(p) == "multiply" and p.args and _calls(e, "divide"):
            for i in range(2):
                inner = p.args[i]
                if _op_of(inner) == "divide" and any(_calls(a, "multiply") for a in e.args):
                    assert isinstance(inner, CallPattern) and inner.args
                    mul = CallPattern(p.op, [inner.args[0], p.args[(i + 1) % 2]])
                    return self.visit(CallPattern(inner.op, [mul, inner.args[1]]), e)
        return False

    def _FunctionPattern(self, p: FunctionPattern, e: Any) -> bool:
        if not isinstance(e, Function):
            return False
        return self._args(p.params, list(e.params)) and self.visit(p.body, e.body)

    def _TuplePattern(self, p: TuplePattern, e: Any) -> bool:
        return isinstance(e, Tuple) and self._args(p.fields, list(e.fields))

    def _TupleGetItemPattern(self, p: TupleGetItemPattern, e: Any) -> bool:
        return (
            isinstance(e, TupleGetItem)
            and (p.index == -1 or p.index == e.index)
            and self.visit(p.tuple, e.tuple_value)
        )

    def _IfPattern(self, p: IfPattern, e: Any) -> bool:
        return (
            isinstance(e, If)
            and self.visit(p.cond, e.cond)
            and self.visit(p.true_branch, e.true_branch)
            and self.visit(p.false_branch, e.false_branch)
        )

    def _LetPattern(self, p: LetPattern, e: Any) -> bool:
        return (
            isinstance(e, Let)
            and self.visit(p.var, e.var)
            and self.visit(p.value, e.value)
            and self.visit(p.body, e.body)
        )

    def _AltPattern(self, p: AltPattern, e: Any) -> bool:
        return self.visit(p.left, e) or self.visit(p.right, e)

    # -- properties ------------------------------------------------------------------------------

    def _TypePattern(self, p: TypePattern, e: Any) -> bool:
        ty = _type_of(e)
        return ty is not None and ty == p.type and self.visit(p.pattern, e)

    def _DataTypePattern(self, p: DataTypePattern, e: Any) -> bool:
        ty = _type_of(e)
        return isinstance(ty, TensorType) and ty.dtype == p.dtype and self.visit(p.pattern, e)

    def _ShapePattern(self, p: ShapePattern, e: Any) -> bool:
        ty = _type_of(e)
        if not isinstance(ty, TensorType) or len(ty.shape) != len(p.shape):
            return False
        same = all(same_value(want, have) for want, have in zip(p.shape, ty.shape))
        return same and self.visit(p.pattern, e)

    def _AttrPattern(self, p: AttrPattern, e: Any) -> bool:
        if not self.visit(p.pattern, e):
            return False
        if isinstance(e, Function):
            return all(k in e.attrs and same_value(v, e.attrs[k]) for k, v in p.attrs.items())
        if isinstance(e, Call):
            attrs: Any = e.attrs
            names = set(attrs.keys()) if attrs is not None and hasattr(attrs, "keys") else set()
            return all(k in names and same_value(v, attrs[k]) for k, v in p.attrs.items())
        if hasattr(e, "name") and not isinstance(e, Expr):  # an op
            return all(self._op_attr(e, k, v) for k, v in p.attrs.items())
        return False

    @staticmethod
    def _op_attr(op: Any, key: str, value: Any) -> bool:
        if key == "TOpPattern":
            return same_value(value, op_pattern(op))
        getter = getattr(op, "get_attr", None)
        actual = getter(key) if getter is not None else None
        return actual is not None and same_value(value, actual)

    # -- dominators ------------------------------------------------------------------------------

    def _DominatorPattern(self, p: DominatorPattern, e: Any) -> bool:
        if self.visit(p.child, e):
            on_path = self._matches_path(p, e)
            self.memoize = True
            if on_path:
                return self._dominates_parent(p, e)
        return False

    def _matches_path(self, p: DominatorPattern, e: Any) -> bool:
        """Every input of ``e`` that is not a leaf is the one parent, or a path node whose own
        inputs are the same; at least one such input (Relay's ``MatchesPath``).

        Leaves (variables, constants: a bias, a weight) lead nowhere and are not checked.
        """
        if e not in self.graph:
            return False
        inputs = [
            i
            for i in self.graph.inputs[id(e)]
            if not (isinstance(e, Call) and i is e.op) and not isinstance(i, Var | Constant)
        ]
        for node in inputs:
            self.memoize = True
            if not self.visit(p.parent, node):
                self.memoize = False
                if not self.visit(p.path, node) or not self._matches_path(p, node):
                    return False
        return bool(inputs)

    def _dominates_parent(self, p: DominatorPattern, e: Any) -> bool:
        """Some node that ``e`` dominates matches the parent."""
        stack, seen = [e], set()
        while stack:
            current = stack.pop()
            for node in self.graph.dominator_children(current):
                if id(node) in seen:
                    continue
                if self.visit(p.parent, node):
                    return True
                stack.append(node)
                seen.add(id(node))
        return False


def match(pattern: DFPattern, expr: Any) -> bool:
    """Whether ``expr`` matches ``pattern`` (Relay's ``dataflow_pattern.match``)."""
    if not isinstance(pattern, DFPattern):
        raise TypeError(f"match takes a pattern first, got {pattern!r}")
    return Matcher(expr).match(pattern, expr)
