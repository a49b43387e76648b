"""The pattern nodes of Relay's pattern language (``tvm.relay.dataflow_pattern``) and their
builders (``is_op``, ``wildcard``, ``has_attr``, ``dominates``, ...).

Patterns are plain Python objects compared by identity, as Relay's were keys of the callback's
``node_map``. Matching, rewriting and partitioning live in :mod:`.matcher` and :mod:`.rewrite`;
the methods here (``match``, ``partition``) reach them through :data:`ENGINE`, which the
package fills when it is imported (those modules import this one, never the other way round).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..expr import Expr
from ..op.op import get as get_op

#: ``"match"`` and ``"partition"``: set by the package's ``__init__`` from :mod:`.matcher` and
#: :mod:`.rewrite`.
ENGINE: dict[str, Callable[..., Any]] = {}

__all__ = [
    "AltPattern",
    "AttrPattern",
    "CallPattern",
    "ConstantPattern",
    "DFPattern",
    "DataTypePattern",
    "DominatorPattern",
    "ExprPattern",
    "FunctionPattern",
    "IfPattern",
    "LetPattern",
    "NamedOp",
    "ShapePattern",
    "TupleGetItemPattern",
    "TuplePattern",
    "TypePattern",
    "VarPattern",
    "WildcardPattern",
    "dominates",
    "has_attr",
    "has_dtype",
    "has_shape",
    "has_type",
    "is_constant",
    "is_expr",
    "is_if",
    "is_let",
    "is_op",
    "is_tuple",
    "is_tuple_get_item",
    "is_var",
    "wildcard",
]


class DFPattern:
    """Base of the patterns: ``p(args)`` is a call pattern, ``p | q`` an alternative, ``p + q``
    (``-``, ``*``, ``/``) a call of ``add`` (``subtract``, ...)."""

    def __call__(self, *args: Any) -> CallPattern:
        if len(args) == 1 and args[0] is None:
            return CallPattern(self, None)  # any number of arguments
        return CallPattern(self, list(args))

    def __or__(self, other: DFPattern) -> AltPattern:
        return AltPattern(self, other)

    def __add__(self, other: DFPattern) -> CallPattern:
        return is_op("add")(self, other)

    def __sub__(self, other: DFPattern) -> CallPattern:
        return is_op("subtract")(self, other)

    def __mul__(self, other: DFPattern) -> CallPattern:
        return is_op("multiply")(self, other)

    def __truediv__(self, other: DFPattern) -> CallPattern:
        return is_op("divide")(self, other)

    def has_attr(self, attrs: Mapping[str, Any]) -> AttrPattern:
        """This pattern, on an expression (an op, a call, a function) with these attributes."""
        return has_attr(attrs, self)

    def has_type(self, ttype: Any) -> TypePattern:
        """This pattern, on an expression of type ``ttype``."""
        return has_type(ttype, self)

    def has_dtype(self, dtype: str) -> DataTypePattern:
        """This pattern, on an expression of dtype ``dtype``."""
        return has_dtype(dtype, self)

    def has_shape(self, shape: Sequence[Any]) -> ShapePattern:
        """This pattern, on an expression of shape ``shape``."""
        return has_shape(shape, self)

    def match(self, expr: Any) -> bool:
        """Whether ``expr`` matches this pattern (Relay's matching semantics)."""
        return ENGINE["match"](self, expr)

    def partition(
        self,
        expr: Any,
        attrs: Mapping[str, Any] | None = None,
        check: Callable[[Any], bool] | None = None,
    ) -> Any:
        """Each match of this pattern in ``expr`` as a call of a function of its inputs.

        Parameters
        ----------
        expr : Expr
            The graph.
        attrs : dict, optional
            Attributes of each new function (``{"Composite": name}``), beside
            ``PartitionedFromPattern``.
        check : callable, optional
            ``check(matched_root) -> bool``: a match is partitioned only where it says True.
        """
        return ENGINE["partition"](self, expr, attrs, check)

    def dominates(self, parent: DFPattern, path: DFPattern | None = None) -> DominatorPattern:
        """This pattern (the child), whose inputs all lead through ``path`` to ``parent``."""
        return dominates(parent, path if path is not None else wildcard(), self)

    def optional(self, option_constructor: Any) -> AltPattern:
        """This pattern, or ``option_constructor(self)`` (a callable, or a pattern called)."""
        return self | option_constructor(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class NamedOp:
    """An op the front end's table does not hold (``"qnn.conv2d"``), named in a pattern.

    Patterns can be written for it; no expression of the front end calls it, so it matches
    nothing.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Op({self.name})"


class ExprPattern(DFPattern):
    """Matches an expression structurally equal to ``expr`` (an op: that op)."""

    def __init__(self, expr: Any) -> None:
        self.expr = expr


class VarPattern(DFPattern):
    """Matches a variable, named ``name`` unless ``name`` is empty."""

    def __init__(self, name_hint: str = "") -> None:
        self.name = name_hint

    @property
    def name_hint(self) -> str:
        """The name it matches ("" for any)."""
        return self.name


class ConstantPattern(DFPattern):
    """Matches a constant."""


class WildcardPattern(DFPattern):
    """Matches anything."""

    def redirect_to(self, pat: DFPattern) -> None:
        """Make this wildcard match as ``pat`` does (Relay's recursive patterns)."""
        self.redirect = pat


class CallPattern(DFPattern):
    """Matches a call of ``op`` on ``args`` (``args=None``: any arguments)."""

    def __init__(self, op: DFPattern, args: Sequence[DFPattern] | None) -> None:
        self.op = op
        self.args = None if args is None else list(args)


class FunctionPattern(DFPattern):
    """Matches a function with parameters ``params`` (None: any) and body ``body``."""

    def __init__(self, params: Sequence[DFPattern] | None, body: DFPattern) -> None:
        self.params = None if params is None else list(params)
        self.body = body


class IfPattern(DFPattern):
    """Matches ``if (cond) {true_branch} else {false_branch}``."""

    def __init__(self, cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern) -> None:
        self.cond = cond
        self.true_branch = true_branch
        self.false_branch = false_branch


class LetPattern(DFPattern):
    """Matches ``let var = value; body``."""

    def __init__(self, var: DFPattern, value: DFPattern, body: DFPattern) -> None:
        self.var = var
        self.value = value
        self.body = body


class TuplePattern(DFPattern):
    """Matches a tuple of ``fields`` (None: any fields)."""

    def __init__(self, fields: Sequence[DFPattern] | None) -> None:
        self.fields = None if fields is None else list(fields)

    def __getitem__(self, index: int) -> TupleGetItemPattern:
        return TupleGetItemPattern(self, index)

    def __len__(self) -> int:
        return len(self.fields or [])


class TupleGetItemPattern(DFPattern):
    """Matches field ``index`` (None or -1: any) of a tuple matching ``tuple_value``."""

    def __init__(self, tuple_value: DFPattern, index: int | None = None) -> None:
        self.tuple = tuple_value
        self.index = -1 if index is None else index


class AltPattern(DFPattern):
    """Matches ``left`` or else ``right``."""

    def __init__(self, left: DFPattern, right: DFPattern) -> None:
        self.left = left
        self.right = right


class TypePattern(DFPattern):
    """Matches ``pattern`` on an expression of type ``type``."""

    def __init__(self, pattern: DFPattern, ttype: Any) -> None:
        self.pattern = pattern
        self.type = ttype


class DataTypePattern(DFPattern):
    """Matches ``pattern`` on an expression of dtype ``dtype``."""

    def __init__(self, pattern: DFPattern, dtype: str) -> None:
        self.pattern = pattern
        self.dtype = str(dtype)


class ShapePattern(DFPattern):
    """Matches ``pattern`` on an expression of shape ``shape``."""

    def __init__(self, pattern: DFPattern, shape: Sequence[Any]) -> None:
        self.pattern = pattern
        self.shape = list(shape)


class AttrPattern(DFPattern):
    """Matches ``pattern`` on an op, call or function with the attributes ``attrs``."""

    def __init__(self, pattern: DFPattern, attrs: Mapping[str, Any]) -> None:
        self.pattern = pattern
        self.attrs = dict(attrs)


class DominatorPattern(DFPattern):
    """Matches ``child`` where every input of it leads through ``path`` nodes to ``parent``."""

    def __init__(self, parent: DFPattern, path: DFPattern, child: DFPattern) -> None:
        self.parent = parent
        self.path = path
        self.child = child


def is_var(name: str = "") -> VarPattern:
    """A variable pattern, of name ``name`` unless empty."""
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    """A constant pattern."""
    return ConstantPattern()


def is_expr(expr: Expr) -> ExprPattern:
    """A pattern of an expression, matched by structural equality."""
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """A pattern of the op ``op_name`` (Relay's name: ``"nn.conv2d"``).

    An op the front end does not serve still makes a pattern (a vendor's table may name QNN
    ops); it matches nothing the front end builds.
    """
    if not isinstance(op_name, str):
        raise TypeError(f"is_op takes an op name (str), got {op_name!r}")
    try:
        return ExprPattern(get_op(op_name))
    except (ValueError, NotImplementedError):
        return ExprPattern(NamedOp(op_name))


def is_tuple(fields: Sequence[DFPattern] | None) -> TuplePattern:
    """A tuple pattern (``fields=None``: a tuple of any fields)."""
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value: DFPattern, index: int | None = None) -> TupleGetItemPattern:
    """A tuple-field pattern (``index=None``: any field)."""
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern) -> IfPattern:
    """An ``If`` pattern."""
    return IfPattern(cond, true_branch, false_branch)


def is_let(var: DFPattern, value: DFPattern, body: DFPattern) -> LetPattern:
    """A ``Let`` pattern."""
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    """A pattern matching anything."""
    return WildcardPattern()


def has_type(ttype: Any, pattern: DFPattern | None = None) -> TypePattern:
    """``pattern`` (default: anything) of type ``ttype``."""
    return TypePattern(pattern if pattern is not None else wildcard(), ttype)


def has_dtype(dtype: str, pattern: DFPattern | None = None) -> DataTypePattern:
    """``pattern`` (default: anything) of dtype ``dtype``."""
    return DataTypePattern(pattern if pattern is not None else wildcard(), dtype)


def has_shape(shape: Sequence[Any], pattern: DFPattern | None = None) -> ShapePattern:
    """``pattern`` (default: anything) of shape ``shape``."""
    return ShapePattern(pattern if pattern is not None else wildcard(), shape)


def has_attr(attrs: Mapping[str, Any], pattern: DFPattern | None = None) -> AttrPattern:
    """``pattern`` (default: anything) with the attributes ``attrs``."""
    if not isinstance(attrs, Mapping):
        raise TypeError(f"has_attr takes a dict of attribute name to value, got {attrs!r}")
    return AttrPattern(pattern if pattern is not None else wildcard(), attrs)


def dominates(parent: DFPattern, path: DFPattern, child: DFPattern) -> DominatorPattern:
    """``child``, whose inputs all lead through ``path`` nodes to one ``parent``."""
    return DominatorPattern(parent, path, child)
