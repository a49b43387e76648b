"""``relay.analysis``'s checks on a Relay graph: ``well_formed``, ``check_constant``,
``check_basic_block_normal_form``, ``check_kind``, and ``unmatched_cases`` (the exhaustiveness
of a ``match``)."""

from __future__ import annotations

import itertools
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from ..adt import (
    Match,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    pattern_vars,
)
from ..backend.interpreter import module_types
from ..expr import Constant, Expr, If, Let, Tuple, Var
from ..expr_functor import relay_node
from ..function import Function
from ..ty import (
    FuncType,
    IncompleteType,
    RefType,
    RelayTypeError,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeKind,
    TypeRelation,
    TypeVar,
)
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
    """Relay's ``well_formed``: no variable is bound twice (by two ``let``s, parameters or
    match clauses).

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
        bound: list[tuple[Any, Any]] = [(node.var, node)] if isinstance(node, Let) else []
        bound += [(p, node) for p in node.params] if isinstance(node, Function) else []
        if isinstance(node, Match):  # each clause binds its pattern's variables
            bound += [(v, c) for c in node.clauses for v in pattern_vars(c.lhs)]
        for var, where in bound:
            if binder.setdefault(id(var), id(where)) != id(where):
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


def _kind_of(t: Any, mod: Any) -> TypeKind:
    """The kind of ``t``, its parts checked as TVM 0.19's kind checker did."""

    def expect(part: Any, kind: TypeKind, where: str) -> None:
        found = _kind_of(part, mod)
        if found != kind:
            raise RelayTypeError(
                f"check_kind: {where} of {t!r} must be of kind {kind.name}, but {part!r} is of "
                f"kind {found.name}"
            )

    if isinstance(t, TypeVar | IncompleteType):
        return TypeKind(t.kind)
    if isinstance(t, TensorType):
        return TypeKind.Type
    if isinstance(t, TupleType):
        for field in t.fields:
            expect(field, TypeKind.Type, "a field")
        return TypeKind.Type
    if isinstance(t, FuncType):
        for part in [*t.arg_types, t.ret_type]:
            expect(part, TypeKind.Type, "an argument or the result")
        for constraint in t.type_constraints:
            expect(constraint, TypeKind.Constraint, "a constraint")
        return TypeKind.Type
    if isinstance(t, RefType):
        expect(t.value, TypeKind.Type, "the value")
        return TypeKind.Type
    if isinstance(t, TypeRelation):
        for arg in t.args:
            expect(arg, TypeKind.Type, "an argument")
        return TypeKind.Constraint
    if isinstance(t, TypeCall):
        expect(t.func, TypeKind.AdtHandle, "the callee")
        data = module_types(mod).get(t.func) if mod is not None else None
        if data is None:
            raise RelayTypeError(
                f"check_kind: {t!r} calls {t.func!r}, which the module does not define"
            )
        if len(data.type_vars) != len(t.args):
            raise RelayTypeError(
                f"check_kind: {t!r} gives {len(t.args)} type arguments to {t.func!r}, which "
                f"takes {len(data.type_vars)}"
            )
        for arg in t.args:
            expect(arg, TypeKind.Type, "an argument")
        return TypeKind.Type
    raise RelayTypeError(f"check_kind takes a relay type, got {t!r}")


@legacy_api("relay.analysis")
def check_kind(t: Type, mod: Any = None) -> TypeKind:
    """Relay's ``check_kind``: the kind of a type, its parts checked.

    Parameters
    ----------
    t : relay Type
        A type (tensor, tuple, function, reference, type variable, type call) or a
        ``TypeRelation``.
    mod : tvm.IRModule, optional
        The module declaring the ADTs a ``TypeCall`` calls.

    Returns
    -------
    TypeKind
        ``Type`` for a type, ``Constraint`` for a relation, a variable's own kind.

    Raises
    ------
    RelayTypeError
        A ``TypeError`` and a ``RuntimeError`` (TVM 0.19's ``TVMError``), as Relay raised: a
        part of the wrong kind (a shape variable as a tuple field), a type call of an undefined
        ADT or with the wrong number of arguments, or something that is not a type.
    """
    return _kind_of(t, mod)


@legacy_api("relay.analysis")
def unmatched_cases(match: Any, mod: Any = None) -> list[Any]:
    """Relay's ``unmatched_cases(match, mod=None)``: the patterns no clause of ``match`` covers.

    As TVM 0.19's exhaustiveness check: candidates start as one wildcard; a candidate that a
    clause's pattern neither matches nor clashes with is expanded one level (a wildcard into
    each constructor of the ADT with wildcard fields, or a tuple of wildcards) and checked again
    from that clause on; the candidates no clause matches are returned.

    Parameters
    ----------
    match : relay.Match
        The match to check.
    mod : tvm.IRModule, optional
        The module declaring the ADTs (``mod[List] = TypeData(...)``); needed to expand a
        wildcard into constructors.

    Returns
    -------
    list of relay.Pattern
        The cases not covered (empty for an exhaustive match).
    """
    if not isinstance(match, Match):
        raise TypeError(f"unmatched_cases takes a relay.Match, got {type(match).__name__}")
    types = module_types(mod) if mod is not None else {}
    missed: list[Any] = []
    stack: list[tuple[Any, int]] = [(PatternWildcard(), 0)]
    while stack:
        cand, start = stack.pop()
        for index in range(start, len(match.clauses)):
            lhs = match.clauses[index].lhs
            found = _check(lhs, cand)
            if found == _CLASH:
                continue
            if found == _UNSPECIFIED:
                stack.extend((new, index) for new in _expand(lhs, cand, types))
            break
        else:
            missed.append(cand)
    return missed


_MATCH, _CLASH, _UNSPECIFIED = "match", "clash", "unspecified"


def _check(pattern: Any, cand: Any) -> str:
    """Whether ``pattern`` matches every value of ``cand``, none, or it depends."""
    if isinstance(pattern, PatternWildcard | PatternVar):
        return _MATCH
    if isinstance(cand, PatternWildcard | PatternVar):
        return _UNSPECIFIED
    if isinstance(pattern, PatternConstructor):
        if not isinstance(cand, PatternConstructor) or cand.constructor is not pattern.constructor:
            return _CLASH
    elif not isinstance(cand, PatternTuple) or len(cand.patterns) != len(pattern.patterns):
        return _CLASH
    results = [_check(p, c) for p, c in zip(pattern.patterns, cand.patterns)]
    if _CLASH in results:
        return _CLASH
    return _UNSPECIFIED if _UNSPECIFIED in results else _MATCH


def _expand(pattern: Any, cand: Any, types: dict[Any, Any]) -> list[Any]:
    """``cand`` made one level more specific where ``pattern`` looks deeper."""
    if isinstance(pattern, PatternWildcard | PatternVar):
        return [cand]
    if isinstance(cand, PatternWildcard | PatternVar):
        if isinstance(pattern, PatternTuple):
            return [PatternTuple([PatternWildcard() for _ in pattern.patterns])]
        header = pattern.constructor.belong_to
        if header not in types:
            raise ValueError(
                f"unmatched_cases: the ADT {header!r} is not declared in the module given; "
                "pass the module that declares it (mod[header] = relay.TypeData(...))"
            )
        return [
            PatternConstructor(c, [PatternWildcard() for _ in c.inputs])
            for c in types[header].constructors
        ]
    if isinstance(pattern, PatternConstructor) and (
        not isinstance(cand, PatternConstructor) or cand.constructor is not pattern.constructor
    ):
        return [cand]
    fields = [_expand(p, c, types) for p, c in zip(pattern.patterns, cand.patterns)]
    if isinstance(cand, PatternConstructor):
        return [PatternConstructor(cand.constructor, list(f)) for f in itertools.product(*fields)]
    return [PatternTuple(list(f)) for f in itertools.product(*fields)]
