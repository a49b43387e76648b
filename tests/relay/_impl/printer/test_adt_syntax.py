"""Relay text's ADT syntax read back: declarations, generic functions, ``match`` and ``if``."""

from __future__ import annotations

import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.printer import VERSION_HEADER
from compile_engine_compat.relay.backend.interpreter import module_types

_LIST = VERSION_HEADER + "\ntype List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n"


def test_a_generic_recursive_function_over_a_declared_list_is_evaluated() -> None:
    text = _LIST + (
        "def @len[A](%l: List[A]) -> int32 {\n"
        "  match (%l) {\n    Cons(_, %rest) => add(1, @len(%rest)),\n    Nil => 0,\n  }\n}\n"
        "def @main(%c: bool) -> int32 {\n"
        "  if (%c) { @len(Cons(1, Cons(2, Nil))) } else { 0 }\n}\n"
    )
    mod = relay.fromtext(text)
    run = relay.create_executor("debug", mod=mod).evaluate()
    assert int(run(True).numpy()) == 2
    assert int(run(False).numpy()) == 0
    (data,) = module_types(mod).values()
    assert data.header.name_hint == "List"
    assert [c.name_hint for c in data.constructors] == ["Cons", "Nil"]


def test_a_match_missing_a_case_is_refused_and_match_question_mark_is_not() -> None:
    body = "def @f(%x: List[int32]) -> int32 {{\n  match{} (%x) {{ Nil => 1 }}\n}}\n"
    with pytest.raises(SyntaxError, match=r"@f is not exhaustive: Cons\(_, _\) is not covered"):
        relay.fromtext(_LIST + body.format(""))
    relay.fromtext(_LIST + body.format("?"))


def test_an_unknown_constructor_in_a_pattern_names_it() -> None:
    body = "def @f(%x: List[int32]) -> int32 {\n  match (%x) { Bogus => 1, _ => 2 }\n}\n"
    with pytest.raises(SyntaxError, match="bad pattern 'Bogus'"):
        relay.fromtext(_LIST + body)


def test_an_extern_type_declares_no_constructors() -> None:
    mod = relay.parse(VERSION_HEADER + "\nextern type T[A]\n")
    ((header, data),) = module_types(mod).items()
    assert header.name_hint == "T" and [str(v.name_hint) for v in data.type_vars] == ["A"]
    assert list(data.constructors) == []


def test_pattern_variables_print_with_the_names_their_uses_print() -> None:
    text = (
        VERSION_HEADER
        + """
type List[A] { Cons(A, List[A]), Nil, }
def @id[A](%x: A) -> A { %x }
def @hd[A](%xs: List[A]) -> A {
  match? (%xs) {
    Cons(%x, _) => { @id(%x) },
  }
}
"""
    )
    printed = relay.astext(relay.parse(text))
    assert "Cons(%x, _) => {\n      @id(%x)" in printed and "def @id[A](%x1: A)" in printed
    assert relay.astext(relay.parse(printed)) == printed
