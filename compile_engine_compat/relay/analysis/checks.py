"""``relay.analysis``'s checks on a Relay graph: ``well_formed``, ``check_constant``,
``check_basic_block_normal_form``, ``check_kind``, and ``unmatched_cases`` (refused: no ADTs)."""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from ..expr import Constant, Expr, If, Let, Tuple, Var
from ..expr_functor import relay_node
from ..function import Function
from ..ty import FuncType, TensorType, TupleType, Type, TypeKind, TypeVar
from .graph import children, post_order

__all__ = [
    "TypeKind",
    "check_basic_block_normal_form",
    "check_constant",
    "check_kind",
    "unmatched_cases",
    "well_formed",
]


@legacy_api("relay.analysis")
def well_formed(expr: Any) -> bool:
    """Relay's ``well_formed``: no variable is bound twice (by two ``let``s or parameters).

    Parameters
    ----------
    expr : Expr, or the Relax function of a front-end function
        The graph (a node shared by several parents is one binding).

    Returns
    -------
    bool
    """
    binder: dict[int, int] = {}
    for node in post_order(expr):
        bound = [node.var] if isinstance(node, Let) else []
        bound += list(node.params) if isinstance(node, Function) else []
        for var in bound:
            if binder.setdefault(id(var), id(node)) != id(node):
                return False
    return True


@legacy_api("relay.analysis")
def check_constant(expr: Expr) -> bool:
    """Relay's ``check_constant``: whether ``expr`` is a constant, or a tuple of constants.

    Parameters
    ----------
    expr : Expr
        A Relay expression.

    Returns
    -------
    bool
    """
    expr = relay_node(expr)
    if isinstance(expr, Constant):
        return True
    if isinstance(expr, Tuple):
        return all(check_constant(f) for f in expr.fields)
    return False


#: The nodes basic block normal form allows to be shared between scopes (atoms, bound names).
_ATOMS = (Var, Constant, Function, tvm.ir.GlobalVar)


@legacy_api("relay.analysis")
def check_basic_block_normal_form(expr: Any) -> bool:
    """Relay's ``check_basic_block_normal_form``: no computed value is shared between scopes.

    A scope is a function body or a branch of an ``if``. A value used in two scopes must be
    ``let``-bound (then the scopes share a variable), as Relay required.

    Parameters
    ----------
    expr : Expr, or the Relax function of a front-end function
        The graph.

    Returns
    -------
    bool
        True.

    Raises
    ------
    tvm.error.DiagnosticError
        Naming a value computed outside the scope that uses it (a ``RuntimeError``, so
        ``tvm.error.TVMError`` catches it, as in TVM 0.19).
    """
    root = relay_node(expr)
    scopes: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    fresh = 0
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack:
        node, scope = stack.pop()
        if (id(node), scope) in seen:
            continue
        seen.add((id(node), scope))
        if isinstance(node, Expr) and not isinstance(node, _ATOMS):
            if scopes.setdefault(id(node), scope) != scope:
                raise tvm.error.DiagnosticError(
                    f"check_basic_block_normal_form: {node!r} is used in two scopes without "
                    "being let-bound (bind it with relay.Let above both)"
                )
        if isinstance(node, If):
            stack.append((node.cond, scope))
            for branch in (node.true_branch, node.false_branch):
                fresh += 1
                stack.append((branch, fresh))
        elif isinstance(node, Function):
            fresh += 1
            stack.append((node.body, fresh))
        else:
            stack.extend((c, scope) for c in children(node) if isinstance(c, Expr))
    return True


@legacy_api("relay.analysis")
def check_kind(t: Type, mod: Any = None) -> TypeKind:
    """Relay's ``check_kind``: the kind of a type.

    Parameters
    ----------
    t : relay Type
        A ``TensorType``, ``TupleType`` or ``FuncType`` (the front end has no type variables,
        relations or ADT handles).
    mod : ignored
        Relay's module of type definitions.

    Returns
    -------
    TypeKind
        ``TypeKind.Type``.

    Raises
    ------
    TypeError
        For anything that is not a type of the front end.
    """
    if isinstance(t, TypeVar):
        return t.kind
    if isinstance(t, TupleType):
        for field in t.fields:
            check_kind(field)
        return TypeKind.Type
    if isinstance(t, FuncType):
        for arg in [*t.arg_types, t.ret_type]:
            check_kind(arg)
        return TypeKind.Type
    if isinstance(t, TensorType):
        return TypeKind.Type
    raise TypeError(f"check_kind takes a relay type (TensorType, TupleType, FuncType), got {t!r}")


def unmatched_cases(match: Any, mod: Any = None) -> list[Any]:
    """Relay's ``unmatched_cases``: refused, as ``relay.Match`` is (no ADTs in the front end).

    Raises
    ------
    TypeError
        Always, naming the replacement (``relax.If`` over tuples has no patterns to check).
    """
    raise TypeError(
        "relay.analysis.unmatched_cases: ADT pattern matching (relay.Match) is not mapped; "
        "Relax has no match expression (use relax.If with tuples), so there are no patterns "
        "to check"
    )
