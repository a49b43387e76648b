"""Relay's text format: ``astext()`` prints what Relay printed, and ``fromtext`` reads it back."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
import tvm_ffi

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.printer import VERSION_HEADER


def _conv_function() -> relay.Function:
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(64, 3, 3, 3))
    y = relay.nn.conv2d(x, w, padding=(1, 1), channels=64, kernel_size=(3, 3))
    return relay.Function([x, w], relay.log(relay.nn.relu(y + relay.const(1.0))))


def test_function_prints_relay_text_with_non_default_attrs() -> None:
    assert _conv_function().astext() == "\n".join(
        [
            VERSION_HEADER,
            "fn (%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(64, 3, 3, 3), float32]) {",
            "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]);",
            "  %1 = add(%0, 1f);",
            "  %2 = nn.relu(%1);",
            "  log(%2)",
            "}",  # an expression's text ends on it (no newline), as Relay's did
        ]
    )


def test_expression_prints_its_free_vars_and_str_is_astext() -> None:
    x = relay.var("x", shape=(10, 4), dtype="float16")
    z = relay.log(x)
    assert "log(%x)" in z.astext()
    assert "free_var %x: Tensor[(10, 4), float16];" in str(z)
    assert "R.log" in z.script()  # the Relax view is still there


@pytest.mark.parametrize(
    ("build", "present", "absent"),
    [
        (lambda x: relay.sum(x, axis=1, keepdims=True), ["axis=1", "keepdims=True"], ["exclude"]),
        (lambda x: relay.sum(x), [], ["axis="]),
        (lambda x: relay.cast(x, "int32"), ['dtype="int32"'], []),
        (lambda x: relay.nn.leaky_relu(x, alpha=0.1), ["alpha=0.1f"], []),
        (lambda x: relay.image.resize2d(x, (4, 4)), ["size=[4, 4]"], ["layout="]),
        (lambda x: relay.reshape(x, (2, -1)), ["newshape=[2, -1]"], []),
    ],
)
def test_attributes_print_as_relay_did(build, present: list[str], absent: list[str]) -> None:
    text = build(relay.var("x", shape=(2, 3, 4, 4))).astext()
    for part in present:
        assert part in text
    for part in absent:
        assert part not in text


def test_tuples_and_tensor_constants() -> None:
    x = relay.var("x", shape=(2, 6))
    parts = relay.split(x, 3, axis=1)
    text = relay.Tuple([parts[0], parts[2] + relay.const(np.ones((2, 2), "float32"))]).astext()
    assert "%0 = split(%x, indices_or_sections=3, axis=1);" in text
    assert "%1 = %0.0;" in text and "meta[relay.Constant][0]" in text


def test_fromtext_reads_the_text_back_to_the_same_relax_function() -> None:
    func = _conv_function()
    mod = relay.fromtext(func.astext())
    assert isinstance(mod, tvm.IRModule)
    assert tvm_ffi.structural_equal(mod["main"], tvm.IRModule.from_expr(func)["main"])


def test_parse_expr_round_trips_an_expression() -> None:
    x = relay.var("x", shape=(2, 6))
    parts = relay.split(x, 2, axis=1)
    text = relay.Tuple([parts[0], relay.exp(parts[1])]).astext()
    assert relay.parse_expr(text).astext() == text


def test_parse_reads_global_functions_and_calls() -> None:
    mod = relay.parse(
        VERSION_HEADER + "\ndef @f(%a: Tensor[(2,), float32]) { exp(%a) }\n"
        "def @main(%b: Tensor[(2,), float32]) -> Tensor[(2,), float32] { @f(%b) }"
    )
    out = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(
        np.array([0.0, 1.0], "float32")
    )
    np.testing.assert_allclose(out.numpy(), np.exp([0.0, 1.0]), rtol=1e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("foo.bar(%x)", "not in the front end's op table"),
        ("free_var %x: Tensor[(2,), float32];\nlog(%y)", "%y is not defined"),
        ("meta[relay.Constant][0]", "meta"),
        ("free_var %x: Tensor[(2,), float32];\nnn.conv2d(%x, %x, bogus=1)", "nn.conv2d"),
    ],
)
def test_unreadable_text_is_a_syntax_error_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(SyntaxError, match=message):
        relay.parse_expr(text)


def test_relay_printed_inputs_that_are_attributes_here_are_read() -> None:
    # Relay took nn.pad's pad_value as an input and printed it positionally.
    text = (
        VERSION_HEADER + "\ndef @main(%p: Tensor[(1, 3), float16]) {\n"
        "  %0 = nn.pad(%p, 0, pad_width=[[0, 0], [0, 1]]);\n"
        '  %1 = cast(%0, dtype="float32");\n'
        "  reshape(%1, newshape=[-1])\n}"
    )
    mod = relay.fromtext(text)
    out = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(
        np.array([[1, 2, 3]], "float16")
    )
    np.testing.assert_array_equal(out.numpy(), [1, 2, 3, 0])


def test_an_if_prints_its_branches_as_scopes():
    c = relay.var("c", shape=(), dtype="bool")
    x = relay.var("x", shape=(2,))
    text = relay.Function([c, x], relay.If(c, relay.exp(x), relay.negative(x))).astext()
    assert "if (%c) {\n" in text and "} else {\n" in text
    assert text.index("exp(%x)") < text.index("} else {") < text.index("negative(%x)")


def test_a_module_of_named_functions_reads_back_and_prints_its_types() -> None:
    from compile_engine_compat.relay._impl.printer import module_astext

    x = relay.var("x", shape=(), dtype="float32")
    y = relay.var("y", shape=(), dtype="float32")
    z = relay.add(x, y)
    func = relay.Function([x, y], relay.add(z, z))
    func.__relax_function__()  # typed, as a function of a module is
    text = module_astext([("myf", func)])
    assert "def @myf(" in text and "add(%0, %0) /* ty=float32 */" in text
    mod = relay.fromtext(text)
    assert [g.name_hint for g in mod.functions] == ["myf"]


def test_parse_reads_recursive_lets_parenthesized_lets_references_and_global_vars() -> None:
    mod = relay.parse(
        VERSION_HEADER
        + """
        def @id(%x: int32) -> int32 { %x }
        def @main(%r) {
            let %f = fn (%n: int32) -> int32 { if (%n == 0) { %n } else { %f(%n - 1) } };
            let %u = ref_write(%r, ref_read(%r));
            (let %a = @id(1); %a) + %f(2)
        }
        """
    )
    assert {g.name_hint for g in mod.functions} == {"id", "main"}
    from compile_engine_compat.relay._impl.interpret.definitions import relay_definition

    main: Any = relay_definition(mod["main"])
    f_let = main.body
    recursive_call = f_let.value.body.false_branch
    assert recursive_call.op is f_let.var  # the let-bound function calls itself
    assert isinstance(f_let.body.value, relay.RefWrite)
    inner = f_let.body.body.args[0]
    assert isinstance(inner, relay.Let)
    value: Any = inner.value
    assert value.op.name_hint == "id"


def test_module_text_declares_its_adts_and_reads_back() -> None:
    from compile_engine_compat.relay._impl.printer.parser import RelayParseError, parse

    decl = "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}"
    main = "def @main[A]() -> fn (A, List[A]) -> List[A] {\n  Cons\n}"
    mod = parse(f"{VERSION_HEADER}\n{decl}\n{main}")
    text = relay.astext(mod)
    assert decl in text and main in text
    tvm.ir.assert_structural_equal(parse(text), mod, map_free_vars=True)
    with pytest.raises(RelayParseError, match="declared twice"):
        parse(f"{VERSION_HEADER}\n{decl}\n{decl}")


def test_same_named_variables_print_apart_and_called_functions_are_bound() -> None:
    x = relay.var("x", "float32")
    v1, v2 = relay.var("v"), relay.var("v")
    body = relay.Let(v1, relay.const(1.0), relay.Let(v2, x, relay.subtract(v1, v2)))
    text = relay.Function([x], body).astext()
    assert "let %v = 1f;" in text and "let %v1 = %x;" in text and "subtract(%v, %v1)" in text
    assert "%x: float32" in text
    y = relay.var("y")
    call = relay.Call(relay.Function([y], y), [relay.const(1)])
    assert call.astext().endswith("%0 = fn (%y) {\n  %y\n};\n%0(1)")


def test_a_shared_let_value_is_bound_first_and_a_let_operand_is_parenthesized() -> None:
    from compile_engine_compat.relay._impl.printer.parser import parse_expr

    tup = relay.Tuple([relay.const(0), relay.const(0)])
    x = relay.var("x")
    assert relay.Let(x, tup, tup).astext().endswith("%0 = (0, 0);\nlet %x = %0;\n%0")
    y, v = relay.var("y", "float32"), relay.var("v")
    shared = relay.Let(v, y, v)
    func = relay.Function([y], relay.add(shared, shared))
    text = func.astext()
    assert "%0 = (\n    let %v = %y;\n    %v\n  );" in text
    tvm.ir.assert_structural_equal(parse_expr(text), func, map_free_vars=True)
