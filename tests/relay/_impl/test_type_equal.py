"""Relay's structural equality of types (relay/_impl/type_equal.py), reached through
tvm.ir.structural_equal as TVM 0.19 compared types."""

from __future__ import annotations

import pytest

from compile_engine_compat.relay import FuncType, TensorType, TupleType, TypeVar
from compile_engine_compat.relay._impl.structural import (
    assert_structural_equal,
    structural_equal,
)
from compile_engine_compat.relay.adt import Constructor, TypeData
from compile_engine_compat.relay.ty import (
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TypeCall,
    TypeKind,
)
from compile_engine_compat.relay.type_functor import TypeMutator


def test_function_type_parameters_pair_by_position():
    a, b = TypeVar("a"), TypeVar("b")
    assert structural_equal(FuncType([a], a, [a]), FuncType([b], b, [b]))
    assert not structural_equal(FuncType([a], a, [a]), FuncType([b], a, [b]))


def test_free_type_variables_need_map_free_vars():
    a, b = TypeVar("a"), TypeVar("b")
    assert not structural_equal(TupleType([a]), TupleType([b]))
    assert structural_equal(TupleType([a, a]), TupleType([b, b]), map_free_vars=True)
    assert not structural_equal(TupleType([a, a]), TupleType([a, b]), map_free_vars=True)


@pytest.mark.parametrize(
    "lhs, rhs, equal",
    [
        (TensorType((2, 3)), TensorType((2, 3)), True),
        (TensorType((2, 3)), TensorType((2, 3), "int8"), False),
        (RefType(TupleType([])), RefType(TupleType([])), True),
        (GlobalTypeVar("g"), GlobalTypeVar("g"), True),
        (GlobalTypeVar("g"), GlobalTypeVar("h"), False),
        (IncompleteType(), IncompleteType(), True),
        (TypeCall(GlobalTypeVar("l"), [TensorType(())]), TensorType(()), False),
    ],
)
def test_each_kind_of_type(lhs, rhs, equal):
    assert structural_equal(lhs, rhs, map_free_vars=True) is equal


def test_a_type_data_survives_the_type_mutator():
    header = GlobalTypeVar("box")
    tv = TypeVar("t")
    data = TypeData(header, [tv], [Constructor("box", [tv], header)])
    assert_structural_equal(TypeMutator().visit(data), data, map_free_vars=True)
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        assert_structural_equal(data, TypeData(GlobalTypeVar("other"), [], []))


def test_composite_types_compare_structurally_with_eq():
    a, b = TypeVar("a"), TypeVar("b")
    assert FuncType([], a, [a]) == FuncType([], b, [b])
    assert FuncType([], a, [a]) != FuncType(
        [], TypeVar("s", TypeKind.ShapeVar), [TypeVar("s", TypeKind.ShapeVar)]
    )
    assert TupleType([a]) != TupleType([b])  # free variables: only themselves
    incomplete = IncompleteType()
    assert TupleType([incomplete]) == TupleType([incomplete])
    assert TupleType([incomplete]) != TupleType([IncompleteType()])
