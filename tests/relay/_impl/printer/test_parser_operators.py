"""The text reader's operators, control flow, sequencing and types (relay/_impl/printer/parser.py),
read as TVM 0.19's parser read them."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.printer.parser import RelayParseError, parse_expr
from compile_engine_compat.relay._impl.structural import structural_equal
from compile_engine_compat.relay.ty import FuncType, TensorType


def _same(text: str, expected) -> bool:
    return structural_equal(parse_expr(text), expected, map_free_vars=True)


def test_binary_operators_with_relays_precedence():
    one = relay.const(1)
    assert _same("1 * 1 + 1", relay.add(relay.multiply(one, one), one))
    assert _same(
        "1 == 1 < 1 + 1 * 1",
        relay.equal(one, relay.less(one, relay.add(one, relay.multiply(one, one)))),
    )
    assert _same("1 - 1 - 1", relay.subtract(relay.subtract(one, one), one))


def test_unary_minus_folds_into_a_constant():
    for text, value in (("---10", -10), ("--10", 10)):
        parsed = parse_expr(text)
        assert isinstance(parsed, relay.Constant)
        assert parsed.data.numpy() == value


def test_if_sequencing_and_nested_comments():
    expected = relay.If(relay.const(True), relay.const(0), relay.const(1))
    assert _same("/* a /* nested */ comment */ if (True) { 0 } else { 1 }", expected)
    assert _same("(); ()", relay.Let(relay.Var("_"), relay.Tuple([]), relay.Tuple([])))


def test_function_and_incomplete_types():
    let = parse_expr("let %f: fn (int32) -> int32 = fn (%x: int32) -> int32 { %x }; %f")
    assert isinstance(let, relay.Let)
    assert let.var.type_annotation == FuncType([TensorType((), "int32")], TensorType((), "int32"))
    untyped = parse_expr("let %_ : _ = (); ()")
    assert isinstance(untyped, relay.Let)
    assert untyped.var.type_annotation is None


def test_bad_text_is_a_diagnostic_error():
    with pytest.raises(tvm.error.DiagnosticError, match="let binds a local variable"):
        parse_expr("let x = 1; ()")
    with pytest.raises(RelayParseError, match="is not defined"):
        parse_expr("if (True) { let %x = (); () } else { %x }")
