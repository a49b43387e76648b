"""Relay text's ADT syntax, read for :mod:`.parser`: ``type List[A] { Cons(A, List[A]), Nil }``
declarations, ``def @f[A](...)`` type parameters, ``List[A]`` types, constructors as values and
calls, ``match (e) { pattern => e, ... }`` (``match?`` for an incomplete match) and
``if (c) { ... } else { ... }``.

A module with a declaration is built as TVM 0.19's parser built it: its functions stored by
name (the ones Relax cannot express as the interpreter's stand-ins), its types declared, and
each complete ``match`` checked exhaustive as TVM 0.19's type checker did at ``fromtext``.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import tvm
from tvm import relax

from compile_engine_compat.boundary import give_type
from compile_engine_compat.relay._impl.interpret.definitions import (
    declare_type,
    interpreted_function,
    needs_interpreter,
)
from compile_engine_compat.relay.adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from compile_engine_compat.relay.expr import Expr, Var
from compile_engine_compat.relay.function import Function, named_relax_function
from compile_engine_compat.relay.ty import GlobalTypeVar, Type, TypeCall, TypeVar

__all__ = ["AdtSyntax", "adt_module"]

T = typing.TypeVar("T")


class AdtSyntax:
    """The ADT half of the reader; mixed into ``parser._Parser`` (which supplies the tokens)."""

    i: int
    toks: list[Any]
    scope: dict[str, Expr]
    #: ADT name -> (header, its type variables); constructor name -> constructor.
    adts: dict[str, tuple[GlobalTypeVar, list[TypeVar]]]
    ctors: dict[str, Constructor]
    #: Type variables in scope (a declaration's or a function's parameters).
    tvars: dict[str, TypeVar]

    if TYPE_CHECKING:

        @property
        def tok(self) -> Any: ...

        def take(self, text: str | None = None, kind: str | None = None) -> Any: ...
        def accept(self, text: str) -> bool: ...
        def error(self, what: str) -> SyntaxError: ...
        def expr(self) -> Expr: ...
        def body(self) -> Expr: ...
        def type_(self) -> Type: ...

    def listed(self, item: Callable[[], T], close: str) -> list[T]:
        """Comma-separated ``item()``s up to ``close`` (the opening bracket already taken)."""
        out: list[T] = []
        while not self.accept(close):
            out.append(item())
            if not self.accept(","):
                self.take(close)
                break
        return out

    def type_param(self) -> TypeVar:
        made = TypeVar(self.take(kind="name").text)
        self.tvars[made.name_hint] = made
        return made

    def type_params(self) -> list[TypeVar]:
        """``[A, B]`` after a name (none when absent); each enters :attr:`tvars`."""
        return self.listed(self.type_param, "]") if self.accept("[") else []

    def type_definition(self, extern: bool = False) -> TypeData:
        """``type Name[A...] { Ctor(T, ...), Ctor, ... }`` (after ``type``); ``extern type
        Name[A...]`` declares a type of no constructors."""
        name = self.take(kind="name").text
        if name in self.adts:
            raise self.error(f"type {name} is declared twice")
        header = GlobalTypeVar(name)
        saved = dict(self.tvars)
        tvars = self.type_params()
        self.adts[name] = (header, tvars)
        made: list[Constructor] = []
        if extern:
            self.tvars = saved
            return TypeData(header, tvars, made)
        self.take("{")
        while not self.accept("}"):
            ctor = self.take(kind="name").text
            if ctor in self.ctors:
                raise self.error(f"constructor {ctor} is declared twice")
            fields = self.type_list("(", ")") if self.tok.text == "(" else []
            made.append(Constructor(ctor, fields, header))
            self.ctors[ctor] = made[-1]
            if not self.accept(","):
                self.take("}")
                break
        self.tvars = saved
        return TypeData(header, tvars, made)

    def type_list(self, open_: str, close: str) -> list[Type]:
        self.take(open_)
        return self.listed(self.type_, close)

    def named_type(self, name: str) -> Type | None:
        """A type variable, or an ADT applied to its ``[...]`` arguments; None otherwise."""
        if name in self.tvars:
            return self.tvars[name]
        if name in self.adts:
            header = self.adts[name][0]
            return TypeCall(header, self.type_list("[", "]") if self.tok.text == "[" else [])
        return None

    def constructor_use(self, name: str) -> Expr | Constructor:
        """A constructor as a value, or its call ``Ctor(args)`` (a bare ``Nil``, of no fields, is
        its value: TVM 0.19 evaluated such a constructor to ``Nil()``)."""
        ctor = self.ctors[name]
        if self.tok.text != "(":
            return ctor if ctor.inputs else ctor()
        self.take("(")
        return ctor(*self.listed(self.expr, ")"))

    def match_rest(self) -> Match:
        """``match (e) { p => e, ... }`` after ``match`` (``match?``: incomplete)."""
        complete = not self.accept("?")
        self.take("(")
        data = self.expr()
        self.take(")")
        self.take("{")
        clauses = []
        while not self.accept("}"):
            saved = dict(self.scope)
            lhs = self.pattern()
            self.take("=>")
            if self.accept("{"):
                rhs = self.body()
                self.take("}")
            else:
                rhs = self.expr()
            self.scope = saved
            clauses.append(Clause(lhs, rhs))
            if not self.accept(","):
                self.take("}")
                break
        return Match(data, clauses, complete)

    def pattern(self) -> Pattern:
        tok = self.take()
        if tok.text == "_":
            return PatternWildcard()
        if tok.kind == "local":
            var = Var(tok.text[1:], self.type_() if self.accept(":") else None)
            self.scope[var.name_hint] = var
            return PatternVar(var)
        if tok.text == "(":
            return PatternTuple(self.listed(self.pattern, ")"))
        if tok.text in self.ctors:
            subs = self.listed(self.pattern, ")") if self.accept("(") else []
            return PatternConstructor(self.ctors[tok.text], subs)
        raise SyntaxError(f"relay text: bad pattern {tok.text!r} at offset {tok.pos}")


def adt_module(
    types: list[TypeData],
    functions: dict[str, Function],
    gvars: dict[str, Any],
    base: tvm.IRModule | None = None,
) -> Any:
    """The module TVM 0.19's parser built from declarations and ``def``s (see the docstring),
    joining ``base`` (``relay.parse``'s ``init_module``) when one is given.

    Raises
    ------
    SyntaxError
        For a complete ``match`` that misses a case (TVM 0.19 refused the text so).
    """
    from compile_engine_compat.deprecations import INTERNAL
    from compile_engine_compat.relay.analysis.checks import unmatched_cases

    mod = merged_module(base, tvm.IRModule()) if base is not None else tvm.IRModule()
    for data in types:
        declare_type(mod, data.header, data)
    for name, func in functions.items():
        reason = needs_interpreter(func, mod)
        stored = (
            interpreted_function(func, name, reason)
            if reason is not None
            else named_relax_function(func, name)
        )
        mod[gvars[name]] = stored
        if not isinstance(gvars[name].ty, relax.FuncType):  # its callers type from it
            give_type(gvars[name], stored.ty)
    for name, func in functions.items():
        for node in _matches(func):
            missed = unmatched_cases(node, mod, **INTERNAL)
            if node.complete and missed:
                raise SyntaxError(
                    f"relay text: a match in @{name} is not exhaustive: {_text(missed[0])} is "
                    "not covered (write `match?` for an incomplete match)"
                )
    return mod


def merged_module(base: tvm.IRModule, mod: tvm.IRModule) -> tvm.IRModule:
    """``mod``'s functions and ADT declarations over ``base``'s (``relay.parse``'s
    ``init_module``), in a new module: a name of both is ``mod``'s."""
    from compile_engine_compat.relay._impl.interpret.definitions import module_types

    out = tvm.IRModule({**dict(base.functions.items()), **dict(mod.functions.items())})
    for source in (base, mod):
        for header, data in module_types(source).items():
            declare_type(out, header, data)
    return out


def _text(pattern: Pattern) -> str:
    """A pattern as Relay's text writes it (``Cons(_, Nil)``)."""
    if isinstance(pattern, PatternConstructor):
        subs = ", ".join(_text(p) for p in pattern.patterns)
        return pattern.constructor.name_hint + (f"({subs})" if subs else "")
    if isinstance(pattern, PatternTuple):
        return "(" + ", ".join(_text(p) for p in pattern.patterns) + ")"
    if isinstance(pattern, PatternVar):
        return f"%{pattern.var.name_hint}"
    return "_"


def _matches(func: Function) -> list[Match]:
    from compile_engine_compat.relay._impl.graph_walk import children

    found: list[Match] = []
    stack: list[Any] = [func]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Match):
            found.append(node)
        stack.extend(children(node))
    return found
