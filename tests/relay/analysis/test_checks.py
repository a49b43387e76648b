"""``relay.analysis``'s checks (``analysis/checks.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.interpreter import declare_type

A = relay.analysis


def test_well_formed_refuses_a_variable_bound_twice():
    x = relay.var("x")
    v = relay.const(np.array(10, "int32"))
    let = relay.Let(x, v, x)
    assert A.well_formed(x) and A.well_formed(let)
    assert not A.well_formed(relay.Let(x, v, let))
    f = relay.Function([x], x)
    assert A.well_formed(relay.Let(relay.var("y"), f, relay.Let(relay.var("z"), f, v)))
    assert not A.well_formed(relay.Tuple([let, relay.Let(x, v, x)]))


def test_check_constant():
    c = relay.const(1.0)
    assert A.check_constant(c) and A.check_constant(relay.Tuple([c, c]))
    assert not A.check_constant(relay.var("x")) and not A.check_constant(c + c)


def test_basic_block_normal_form_refuses_a_value_shared_by_two_branches():
    x = relay.var("x", shape=(), dtype="float32")
    one, two = relay.const(1.0), relay.const(2.0)
    shared = relay.add(x, one)
    body = relay.If(relay.equal(x, two), relay.multiply(shared, two), relay.multiply(shared, one))
    with pytest.raises(tvm.error.DiagnosticError, match="let-bound"):
        A.check_basic_block_normal_form(relay.Function([x], body))
    v = relay.var("v")
    bound = relay.If(relay.equal(x, two), relay.multiply(v, two), relay.multiply(v, one))
    assert A.check_basic_block_normal_form(relay.Function([x], relay.Let(v, shared, bound)))


def test_check_kind_and_unmatched_cases():
    t = relay.TensorType((1,), "float32")
    assert A.check_kind(relay.TupleType([t, relay.FuncType([t], t)])) == A.TypeKind.Type
    with pytest.raises(TypeError, match="relay type"):
        A.check_kind("float32")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"relay\.Match"):
        A.unmatched_cases(None)
    # A match on a list with a Cons clause only misses Nil.
    header, a = relay.GlobalTypeVar("List"), relay.TypeVar("a")
    cons = relay.Constructor("Cons", [a, relay.TypeCall(header, [a])], header)
    nil = relay.Constructor("Nil", [], header)
    mod = tvm.IRModule()
    declare_type(mod, header, relay.TypeData(header, [a], [cons, nil]))
    wild = relay.PatternWildcard()
    match = relay.Match(
        relay.Var("v"), [relay.Clause(relay.PatternConstructor(cons, [wild, wild]), relay.const(1))]
    )
    (missed,) = A.unmatched_cases(match, mod)
    assert isinstance(missed, relay.PatternConstructor) and missed.constructor is nil


def test_partitioning_names_are_refused_at_the_call_not_at_the_import():
    from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError

    calibration = A.get_calibration_data  # importing it works
    with pytest.raises(RelayRemovedCallError, match="FuseOpsByPattern"):
        calibration(None, None)
    with pytest.raises(TypeError, match=r"tvm\.IRModule"):
        A.list_fake_quantized_op_freqs(None)


def test_check_kind_checks_references_relations_and_type_calls():
    t = relay.TensorType((2,), "float32")
    shape = relay.TypeVar("n", relay.TypeKind.ShapeVar)
    assert A.check_kind(relay.RefType(t)) == A.TypeKind.Type
    relation = relay.TypeRelation(None, [t, relay.TypeVar("a")], 1, None)
    assert A.check_kind(relation) == A.TypeKind.Constraint
    with pytest.raises(RuntimeError, match="must be of kind Type"):
        A.check_kind(relay.RefType(shape))
    header = relay.GlobalTypeVar("Box")
    mod = tvm.IRModule()
    declare_type(mod, header, relay.TypeData(header, [relay.TypeVar("a")], []))
    assert A.check_kind(relay.TypeCall(header, [t]), mod) == A.TypeKind.Type
    with pytest.raises(TypeError, match="gives 0 type arguments"):
        A.check_kind(relay.TypeCall(header, []), mod)


def test_well_formed_counts_a_variable_bound_by_two_match_clauses():
    header = relay.GlobalTypeVar("Opt")
    none = relay.Constructor("None_", [], header)
    x = relay.Var("x")
    clause = relay.Clause(relay.PatternVar(x), x)
    other = relay.Clause(relay.PatternConstructor(none, []), relay.const(0))
    assert A.well_formed(relay.Match(none(), [other, clause]))
    assert not A.well_formed(relay.Match(none(), [clause, relay.Clause(relay.PatternVar(x), x)]))
