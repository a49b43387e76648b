"""Relay's type inference for programs with no Relax form (relay/_impl/type_infer.py), reached
through relay.transform.InferTypeLocal as in TVM 0.19: higher-order and polymorphic functions,
references, calls of untyped function variables."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay.ty import FuncType, RefType, TensorType, TupleType, TypeVar

INT = TensorType((), "int32")


def _identity():
    a = TypeVar("a")
    x = relay.Var("x", a)
    return relay.Function([x], x, a, [a])


def test_a_polymorphic_function_passed_as_an_argument():
    b = TypeVar("b")
    f, y = relay.Var("f", FuncType([b], b)), relay.Var("y", b)
    apply = relay.Function([f, y], relay.Call(f, [y]), b, [b])
    call = relay.Call(apply, [_identity(), relay.const(0, "int32")])
    assert infer(call).checked_type == INT


def test_let_polymorphism_instantiates_each_use():
    ident = relay.Var("id")
    body = relay.Tuple(
        [relay.Call(ident, [relay.const(1, "int32")]), relay.Call(ident, [relay.Tuple([])])]
    )
    let = relay.Let(ident, _identity(), body)
    assert infer(let).checked_type == TupleType([INT, TupleType([])])


def test_an_untyped_function_variable_gets_its_type_from_the_call():
    x, f = relay.var("x", INT), relay.var("f")
    func = relay.Function([x, f], relay.Call(f, [relay.add(x, x)]), INT)
    assert infer(func).checked_type == FuncType([INT, FuncType([INT], INT)], INT)
    assert f.checked_type == FuncType([INT], INT)


def test_references():
    r = relay.RefCreate(relay.var("x", "float32"))
    assert infer(r).checked_type == RefType(TensorType((), "float32"))
    assert infer(relay.RefWrite(r, relay.var("y", "float32"))).checked_type == TupleType([])


def test_a_mismatch_is_a_diagnostic_error():
    ident = _identity()
    x = relay.var("x", INT)
    bad = relay.Function([x], relay.Call(ident, [x]), TensorType((), "float32"))
    with pytest.raises(tvm.error.DiagnosticError, match="unable to show"):
        infer(relay.Let(relay.var("g"), bad, relay.Tuple([])))


def test_a_construct_without_a_rule_keeps_the_relax_refusal():
    header = relay.GlobalTypeVar("box")
    ctor = relay.Constructor("box", [INT], header)
    relay.TypeData(header, [], [ctor])
    with pytest.raises(NotImplementedError, match="no Relax"):
        infer(relay.Let(relay.var("k"), relay.Function([], ctor(relay.const(1))), relay.Tuple([])))
