"""``relay.adt``: Relay's algebraic data types, as nodes of the front end's graph.

``TypeData`` declares a type and its ``Constructor`` s; ``Match`` takes a value apart by
``Clause`` s whose left sides are patterns (``PatternWildcard``, ``PatternVar``,
``PatternConstructor``, ``PatternTuple``). A program is built, printed and visited as in
TVM 0.19, and evaluated by the shim's Relay interpreter (``create_executor("debug")``,
``relay.backend.interpreter``); Relax has no ADTs, so ``relay.build``, ``relay.vm.compile`` and
the other executor kinds refuse a program holding a constructor or a ``match`` by name
(:attr:`.expr.NoRelaxForm.relax_refusal`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any as AnyT

from .expr import Call, Expr, NoRelaxForm, RefCreate, RefRead, RefWrite, Var, as_expr
from .ty import GlobalTypeVar, Type, TypeVar

__all__ = [
    "Clause",
    "Constructor",
    "Match",
    "Pattern",
    "PatternConstructor",
    "PatternTuple",
    "PatternVar",
    "PatternWildcard",
    "TypeData",
    "pattern_vars",
    "ref_adt_children",
    "ref_adt_rebuild",
]

_ADT_REFUSAL = (
    "Relay's algebraic data types (relay.Constructor, relay.Match, the prelude's lists and "
    "options) have no Relax form: Relax has no ADTs; evaluate the program with "
    "relay.create_executor('debug', mod=mod) (the shim's Relay interpreter), or hold the "
    "values in a relax.Tuple and branch with relax.If"
)


class Constructor(NoRelaxForm):
    """``relay.Constructor(name_hint, inputs, belong_to)``: a constructor of an ADT.

    Calling it (``cons(x, xs)``) builds ``relay.Call(cons, [x, xs])``. ``tag`` is its position
    among the constructors of its ``TypeData`` under its type's prefix
    (``_constructor_tag_prefix``; set when the ``TypeData`` is made).
    """

    relax_refusal = _ADT_REFUSAL

    def __init__(self, name_hint: str, inputs: Sequence[Type], belong_to: GlobalTypeVar) -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"Constructor name_hint must be a str, got {name_hint!r}")
        if not isinstance(belong_to, GlobalTypeVar):
            raise TypeError(
                f"Constructor belong_to must be a relay.GlobalTypeVar, got {belong_to!r}"
            )
        bad = [t for t in inputs if not isinstance(t, Type)]
        if bad:
            raise TypeError(f"Constructor inputs must be relay types, got {bad[0]!r}")
        self.name_hint = name_hint
        self.inputs = list(inputs)
        self.belong_to = belong_to
        self.tag = 0

    def __call__(self, *args: AnyT) -> Call:
        return Call(self, list(args))

    def __repr__(self) -> str:
        return self.name_hint


def _constructor_tag_prefix(type_name: str) -> int:
    """The high byte of the tags of ``type_name``'s constructors, as TVM 0.19 made them.

    TVM 0.19 hashed the ADT's name into the tag's most significant byte and put the
    constructor's position in the low bytes, so a constructor has the same tag in every module
    declaring its type, and tags of different types differ. The hash here is CRC-32 (std::hash
    is the C++ library's own), kept in 1..127: never 0 and a positive int32.
    """
    return (zlib.crc32(type_name.encode()) % 127 + 1) << 24


class TypeData:
    """``relay.TypeData(header, type_vars, constructors)``: an ADT's declaration."""

    def __init__(
        self,
        header: GlobalTypeVar,
        type_vars: Sequence[TypeVar],
        constructors: Sequence[Constructor],
    ) -> None:
        if not isinstance(header, GlobalTypeVar):
            raise TypeError(f"TypeData header must be a relay.GlobalTypeVar, got {header!r}")
        for ctor in constructors:
            if not isinstance(ctor, Constructor) or ctor.belong_to is not header:
                raise TypeError(
                    f"TypeData constructors must be relay.Constructor s of {header!r}, got {ctor!r}"
                )
        self.header = header
        self.type_vars = list(type_vars)
        self.constructors = list(constructors)
        prefix = _constructor_tag_prefix(header.name_hint)
        for index, ctor in enumerate(self.constructors):
            ctor.tag = prefix | index

    def __repr__(self) -> str:
        names = " | ".join(c.name_hint for c in self.constructors)
        return f"type {self.header!r} = {names}"


class Pattern:
    """Base of the patterns a ``Clause`` matches."""


class PatternWildcard(Pattern):
    """``relay.PatternWildcard()``: matches anything, binds nothing."""


class PatternVar(Pattern):
    """``relay.PatternVar(var)``: matches anything and binds it to ``var``."""

    def __init__(self, var: Var) -> None:
        if not isinstance(var, Var):
            raise TypeError(f"PatternVar takes a relay.Var, got {var!r}")
        self.var = var


class PatternConstructor(Pattern):
    """``relay.PatternConstructor(constructor, patterns=None)``: a value built by
    ``constructor`` whose fields match ``patterns``."""

    def __init__(self, constructor: Constructor, patterns: Sequence[Pattern] | None = None) -> None:
        if not isinstance(constructor, Constructor):
            raise TypeError(f"PatternConstructor takes a relay.Constructor, got {constructor!r}")
        self.constructor = constructor
        self.patterns = _patterns(patterns)


class PatternTuple(Pattern):
    """``relay.PatternTuple(patterns=None)``: a tuple whose fields match ``patterns``."""

    def __init__(self, patterns: Sequence[Pattern] | None = None) -> None:
        self.patterns = _patterns(patterns)


def _patterns(patterns: Sequence[Pattern] | None) -> list[Pattern]:
    """The sub-patterns, each checked to be a ``relay.Pattern``."""
    checked = list(patterns or [])
    for pattern in checked:
        if not isinstance(pattern, Pattern):
            raise TypeError(f"a sub-pattern must be a relay.Pattern, got {pattern!r}")
    return checked


class Clause:
    """``relay.Clause(lhs, rhs)``: when ``lhs`` (a pattern) matches, the value is ``rhs``."""

    def __init__(self, lhs: Pattern, rhs: AnyT) -> None:
        if not isinstance(lhs, Pattern):
            raise TypeError(f"Clause lhs must be a relay.Pattern, got {lhs!r}")
        self.lhs = lhs
        self.rhs: Expr = as_expr(rhs)


class Match(NoRelaxForm):
    """``relay.Match(data, clauses, complete=True)``: the first clause whose pattern matches
    ``data`` gives the value."""

    relax_refusal = _ADT_REFUSAL

    def __init__(self, data: AnyT, clauses: Sequence[Clause], complete: bool = True) -> None:
        for clause in clauses:
            if not isinstance(clause, Clause):
                raise TypeError(f"Match takes relay.Clause s, got {clause!r}")
        self.data = as_expr(data)
        self.clauses = list(clauses)
        self.complete = bool(complete)


def pattern_vars(pattern: Pattern) -> list[Var]:
    """The variables ``pattern`` binds, left to right."""
    if isinstance(pattern, PatternVar):
        return [pattern.var]
    if isinstance(pattern, PatternConstructor | PatternTuple):
        return [v for sub in pattern.patterns for v in pattern_vars(sub)]
    return []


def ref_adt_children(node: AnyT) -> list[Expr]:
    """The sub-expressions of a reference or ``Match`` node in Relay's visiting order (a
    match's data, then each clause's right side); none for any other node."""
    if isinstance(node, RefCreate):
        return [node.value]
    if isinstance(node, RefRead):
        return [node.ref]
    if isinstance(node, RefWrite):
        return [node.ref, node.value]
    if isinstance(node, Match):
        return [node.data, *(clause.rhs for clause in node.clauses)]
    return []


def ref_adt_rebuild(node: AnyT, new: list[Expr]) -> AnyT:
    """A reference or ``Match`` node with its :func:`ref_adt_children` replaced by ``new``."""
    if isinstance(node, RefCreate):
        return RefCreate(new[0], node.span)
    if isinstance(node, RefRead):
        return RefRead(new[0], node.span)
    if isinstance(node, RefWrite):
        return RefWrite(new[0], new[1], node.span)
    if isinstance(node, Match):
        clauses = [Clause(c.lhs, rhs) for c, rhs in zip(node.clauses, new[1:])]
        return Match(new[0], clauses, node.complete)
    return node
