"""``relay.analysis``'s variable queries: ``free_vars``, ``bound_vars``, ``all_vars``, the type
variable queries (always empty: the front end has no type variables) and ``all_dtypes``."""

from __future__ import annotations

from typing import Any

from tvm import relax

from compile_engine_compat.deprecations import legacy_api

from ..adt import Match, pattern_vars, ref_adt_children
from ..expr import UPPER, Call, Expr, If, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..ty import FuncType, TensorType, TupleType, Type, TypeVar
from ..type_functor import TypeVisitor
from .graph import post_order

__all__ = [
    "all_dtypes",
    "all_type_vars",
    "all_vars",
    "bound_type_vars",
    "bound_vars",
    "free_type_vars",
    "free_vars",
]


def free_vars(expr: Any) -> list[Any]:
    """The free variables of ``expr`` in post-order of first use (Relay's ``free_vars``).

    Parameters
    ----------
    expr : Expr or relax.Expr
        A Relay expression, or a Relax one.

    Returns
    -------
    list of Var
        Its unbound variables. A Relax expression (``mod["main"].body`` of a front-end
        module, which holds Relax) gives its free Relax variables
        (``relax.analysis.free_vars``).
    """
    if isinstance(expr, relax.Expr):
        return list(relax.analysis.free_vars(expr))
    return _vars(expr, free_only=True)


def all_vars(expr: Expr) -> list[Var]:
    """Every variable of ``expr``, free and bound (Relay's ``all_vars``), in order of first use.

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    list of Var
        Function parameters and ``Let`` variables included.
    """
    return _vars(expr, free_only=False)


@legacy_api("relay.analysis")
def bound_vars(expr: Expr) -> list[Var]:
    """The variables ``expr`` binds (function parameters, ``let`` variables), Relay's
    ``bound_vars``, in order of first use.

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    list of Var
    """
    free = {id(v) for v in _vars(expr, free_only=True)}
    return [v for v in _vars(expr, free_only=False) if id(v) not in free]


@legacy_api("relay.analysis")
def all_dtypes(expr: Expr) -> set[str]:
    """Every dtype of ``expr``'s values (Relay's ``all_dtypes``), e.g. ``{"int8", "int32"}``.

    The graph is typed first (its free variables need types).

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    set of str
    """
    if hasattr(expr, "astuple") and not isinstance(expr, Expr):
        expr = expr.astuple()
    UPPER.to_relax(expr)  # types every node (the emitter sits above the analyses)
    out: set[str] = set()
    for node in post_order(expr):
        if not isinstance(node, Expr):
            continue
        ty = node.type_annotation if isinstance(node, Var) else None
        out.update(_dtypes(ty or node._checked_type))
    return out


def _dtypes(ty: Type | None) -> set[str]:
    if isinstance(ty, TensorType):
        return {str(ty.dtype)}
    if isinstance(ty, TupleType):
        return set().union(*(_dtypes(f) for f in ty.fields)) if ty.fields else set()
    return set()


class _TypeVars(TypeVisitor):
    """Every ``TypeVar`` of the types visited, in order of first use, and those bound (a
    ``FuncType``'s ``type_params``)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[TypeVar] = []
        self.bound: list[TypeVar] = []

    def visit_type_var(self, typ: TypeVar) -> None:
        self.found.append(typ)

    visit_global_type_var = visit_type_var

    def visit_func_type(self, typ: FuncType) -> None:
        self.bound.extend(p for p in typ.type_params if isinstance(p, TypeVar))
        super().visit_func_type(typ)


def _type_vars(expr: Any) -> _TypeVars:
    """The type variables of a type, or of an expression's annotations (its variables' types,
    its functions' return types and type parameters)."""
    walk = _TypeVars()
    if isinstance(expr, Type):
        walk.visit(expr)
        return walk
    for node in post_order(expr):
        if isinstance(node, Var) and node.type_annotation is not None:
            walk.visit(node.type_annotation)
        elif isinstance(node, Function):
            walk.bound.extend(p for p in node.type_params if isinstance(p, TypeVar))
            for typ in (*node.type_params, node.ret_type):
                if isinstance(typ, Type):
                    walk.visit(typ)
    return walk


def _unique(items: list[TypeVar]) -> list[TypeVar]:
    return list({id(t): t for t in items}.values())


@legacy_api("relay.analysis")
def bound_type_vars(expr: Any, mod: Any = None) -> list[Any]:
    """Relay's ``bound_type_vars``: the type variables bound by a ``FuncType``'s or a
    function's ``type_params``, in order."""
    return _unique(_type_vars(expr).bound)


@legacy_api("relay.analysis")
def all_type_vars(expr: Any, mod: Any = None) -> list[Any]:
    """Relay's ``all_type_vars``: every type variable of ``expr`` (a type or an expression's
    annotations), in order of first use."""
    walk = _type_vars(expr)
    return _unique(walk.found + walk.bound)


def free_type_vars(expr: Any, mod: Any = None) -> list[Any]:
    """Relay's ``free_type_vars``: the type variables of ``expr`` no ``type_params`` binds.

    Parameters
    ----------
    expr : Expr or Type
        A Relay expression (its annotations are read) or type.
    mod : ignored
        Relay's module argument.

    Returns
    -------
    list of relay.TypeVar
        In order of first use.
    """
    walk = _type_vars(expr)
    bound = {id(t) for t in walk.bound}
    return [t for t in _unique(walk.found) if id(t) not in bound]


def _vars(expr: Expr, free_only: bool) -> list[Var]:
    """The variables of ``expr`` in order of first use: only unbound ones with ``free_only``."""
    seen: set[int] = set()
    bound: set[int] = set()
    out: list[Var] = []
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Var):
            if not (free_only and id(node) in bound):
                out.append(node)
            continue
        children: list[Any] = []
        if isinstance(node, Call):
            children = list(node.args)
            if isinstance(node.op, Var | Let | Function | Call | If | TupleGetItem):
                children.insert(0, node.op)  # a computed callee (a closure) has variables too
        elif isinstance(node, Tuple):
            children = list(node.fields)
        elif isinstance(node, TupleGetItem):
            children = [node.tuple_value]
        elif isinstance(node, If):
            children = [node.cond, node.true_branch, node.false_branch]
        elif isinstance(node, Let):
            bound.add(id(node.var))
            children = [node.var, node.value, node.body]
        elif isinstance(node, Function):
            bound.update(id(p) for p in node.params)
            children = [*node.params, node.body]
        else:
            if isinstance(node, Match):
                bound.update(id(v) for c in node.clauses for v in pattern_vars(c.lhs))
            children = ref_adt_children(node)
        stack.extend((c, False) for c in reversed(children))
    return out
