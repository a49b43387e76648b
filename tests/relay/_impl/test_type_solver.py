"""Relay's type solver (relay/_impl/type_solver.py) and its relations, as TVM 0.19 behaved:
unification, relations run in order and again when a type they read is decided, errors raised
as Relay raised them."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat.relay import FuncType, TensorType, TupleType, TypeVar
from compile_engine_compat.relay._impl.relation_functions import (
    GLOBAL_PREFIX,
    register_globals,
    relation_of,
)
from compile_engine_compat.relay._impl.type_solver import TypeSolver, unify_dim
from compile_engine_compat.relay.analysis import _ffi_api
from compile_engine_compat.relay.ty import (
    GlobalTypeVar,
    IncompleteType,
    TypeCall,
    TypeRelation,
)


def _rel(name: str, *args) -> TypeRelation:
    register_globals()
    return TypeRelation(tvm.ir.EnvFunc.get(GLOBAL_PREFIX + name), args, len(args) - 1)


def test_relations_solve_in_order_and_again_when_an_input_is_decided():
    solver = TypeSolver(relation_of)
    a, b, c = IncompleteType(), IncompleteType(), IncompleteType()
    # Added before its input is known: runs first, cannot decide, runs again later.
    solver.add_constraint(_rel("Broadcast", b, TensorType((10, 1, 1)), c))
    solver.add_constraint(_rel("Broadcast", TensorType((10, 20)), TensorType((10, 1)), a))
    solver.add_constraint(_rel("Identity", a, b))
    assert solver.solve()
    assert solver.resolve(c) == TensorType((10, 10, 20))
    assert solver.resolve(a) == TensorType((10, 20))


def test_solve_is_false_while_a_relation_cannot_decide():
    solver = TypeSolver(relation_of)
    solver.add_constraint(_rel("Broadcast", IncompleteType(), TensorType((3,)), IncompleteType()))
    assert not solver.solve()


def test_broadcast_comp_gives_bool():
    solver = TypeSolver(relation_of)
    out = IncompleteType()
    solver.add_constraint(_rel("BroadcastComp", TensorType((2, 1)), TensorType((3,)), out))
    assert solver.solve()
    assert solver.resolve(out) == TensorType((2, 3), "bool")


def test_unify_decides_unknowns_inside_tuples_and_functions():
    solver = TypeSolver(relation_of)
    t1, t2 = IncompleteType(), IncompleteType()
    x, y = TensorType((10, 20)), TensorType((10,))
    unified = solver.unify(FuncType([TupleType([t1, t2])], t2), FuncType([TupleType([x, y])], y))
    assert unified == FuncType([TupleType([x, y])], y)
    assert solver.resolve(t1) == x


def test_quantified_functions_unify_by_parameter_position():
    solver = TypeSolver(relation_of)
    a, b, c = TypeVar("a"), TypeVar("b"), TypeVar("c")
    ft = FuncType([a, a], a, [a])
    assert solver.unify(FuncType([a, b], c, [a, b, c]), ft) == ft


@pytest.mark.parametrize(
    "lhs, rhs, error",
    [
        (TensorType((1, 2)), TensorType((2,)), "has 2 dimensions"),
        (TensorType((2, 3)), TensorType((2, 4)), "dimension 1 conflicts: 3 does not match 4"),
        (GlobalTypeVar("g1"), GlobalTypeVar("g2"), "unable to show the following types match"),
        (
            TypeCall(GlobalTypeVar("g"), [TensorType(())]),
            TypeCall(GlobalTypeVar("h"), [TensorType(())]),
            "unable to show",
        ),
    ],
)
def test_a_mismatch_is_a_diagnostic_error(lhs, rhs, error):
    solver = _ffi_api._test_type_solver()
    with pytest.raises(tvm.error.DiagnosticError, match=error):
        solver("Unify")(lhs, rhs)


def test_a_type_holding_itself_is_refused():
    t = IncompleteType()
    with pytest.raises(tvm.error.InternalError, match="occurs in"):
        TypeSolver(relation_of).unify(t, TupleType([t, t]))


def test_the_test_hook_names_its_methods():
    solver = _ffi_api._test_type_solver()
    with pytest.raises(AttributeError, match="AddConstraint, Resolve, Solve, Unify"):
        solver("Nope")
    with pytest.raises(AttributeError, match=r"relay\.analysis\.free_vars"):
        _ffi_api._free_vars  # noqa: B018 (the access is the test)


def test_a_relation_with_no_function_is_refused():
    solver = TypeSolver(relation_of)
    solver.add_constraint(TypeRelation(None, [TensorType(()), IncompleteType()], 1))
    with pytest.raises(TypeError, match="needs a relation function"):
        solver.solve()


def test_relations_are_tvm_globals_after_the_first_env_func_get():
    register_globals()
    for name in ("Broadcast", "BroadcastComp", "Identity"):
        assert tvm.get_global_func(GLOBAL_PREFIX + name, allow_missing=True) is not None


def test_dimensions_unify_as_relay_did():
    n = tvm.tirx.Var("n", "int64")
    four = tvm.tirx.IntImm("int64", 4)
    assert unify_dim(n, four) is four  # a shape variable takes the constant
    assert unify_dim(n * 2, n * 2) is not None  # one expression built twice
    assert unify_dim(n * 2, n * 3) is None
