"""Relay's structural hash (relay/_impl/structural_hash.py): equal graphs and types hash the
same, unequal ones apart, as tvm.ir.structural_hash did in TVM 0.19."""

from __future__ import annotations

import pytest
import tvm_ffi

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import structural_equal
from compile_engine_compat.relay._impl.structural_hash import structural_hash
from compile_engine_compat.relay.ty import FuncType, TensorType, TypeVar


def _consistent(x, y, map_free_vars=False):
    equal = structural_equal(x, y, map_free_vars)
    assert equal == structural_equal(y, x, map_free_vars)
    assert equal == (structural_hash(x, map_free_vars) == structural_hash(y, map_free_vars))
    return equal


def test_let_variables_hash_by_definition_and_annotation():
    v1, v2 = relay.Var("v1"), relay.Var("v2")
    assert _consistent(relay.Let(v1, relay.const(1), v1), relay.Let(v2, relay.const(1), v2))
    assert not _consistent(relay.Let(v1, relay.const(1), v1), relay.Let(v1, relay.const(1), v2))
    typed = relay.Var("v3", TensorType((), "int32"))
    assert not _consistent(
        relay.Let(v1, relay.const(1), v1), relay.Let(typed, relay.const(1), typed)
    )


def test_free_variables_and_sharing():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert not _consistent(relay.add(x, x), relay.add(y, y))
    assert _consistent(relay.add(x, x), relay.add(y, y), map_free_vars=True)
    assert not _consistent(relay.add(x, x), relay.add(x, y), map_free_vars=True)
    shared = relay.exp(x)
    assert not _consistent(relay.add(shared, shared), relay.add(relay.exp(x), relay.exp(x)))


@pytest.mark.parametrize("same", [True, False])
def test_function_types_hash_their_parameters_by_position(same):
    a, b = TypeVar("a"), TypeVar("b")
    other = b if same else TensorType((1,))
    assert _consistent(FuncType([a], a, [a]), FuncType([b], other, [b])) is same


def test_anything_else_is_tvms_hash():
    value = tvm_ffi.convert([1, 2])
    assert structural_hash(value) == tvm_ffi.structural_hash(value)


def test_call_type_args_and_patterns_count():
    x = relay.var("x", shape=(2,))
    with_args = relay.Call(relay.op.get("exp"), [x], type_args=[TensorType((2,))])
    assert not _consistent(with_args, relay.Call(relay.op.get("exp"), [x]))
    assert not _consistent(relay.Var("v"), relay.PatternVar(relay.Var("v")))


def test_a_variable_has_one_identity():
    x = relay.var("x")
    assert x.vid.same_as(x.vid)
    assert not x.vid.same_as(relay.var("x").vid)
    assert x.vid.name_hint == "x"
