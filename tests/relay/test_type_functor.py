"""``relay.type_functor`` over Relay's types, and the type nodes it visits (``TypeVar``,
``IncompleteType``, ``TypeCall``, ``TypeRelation``, ``RefType``) with the analyses that read
them."""

from __future__ import annotations

import pytest

from compile_engine_compat import relay


def test_the_visitor_sees_every_type_and_the_mutator_rebuilds_only_what_changes():
    a, n = relay.TypeVar("a"), relay.ShapeVar("n")
    list_of_a = relay.TypeCall(relay.GlobalTypeVar("List"), [a])
    func = relay.FuncType(
        [a, relay.RefType(relay.TensorType((2,)))], relay.TupleType([list_of_a]), [a]
    )

    class Collect(relay.TypeVisitor):
        def __init__(self):
            super().__init__()
            self.seen = []

        def visit_type_var(self, typ):
            self.seen.append(typ)

    collect = Collect()
    collect.visit(func)
    assert collect.seen == [a]  # once: memoized per object
    assert (
        n.kind == relay.TypeKind.ShapeVar
        and relay.GlobalTypeVar("L").kind == relay.TypeKind.AdtHandle
    )

    class Concrete(relay.TypeMutator):
        def visit_type_var(self, typ):
            return relay.scalar_type("int32") if typ is a else typ

    concrete = Concrete().visit(func)
    assert concrete.arg_types[0] == relay.scalar_type("int32")
    assert concrete.arg_types[1] is func.arg_types[1]  # unchanged: the same object
    assert relay.TypeMutator().visit(func) is func
    with pytest.raises(NotImplementedError, match="does not visit TensorType"):
        relay.TypeFunctor().visit(relay.TensorType((1,)))


def test_type_variables_reach_the_analyses_and_have_no_relax_form():
    a, b = relay.TypeVar("a"), relay.TypeVar("b")
    func_type = relay.FuncType([a, b], a, [a])
    assert relay.analysis.free_type_vars(func_type) == [b]
    assert relay.analysis.bound_type_vars(func_type) == [a]
    assert relay.analysis.all_type_vars(func_type) == [a, b]
    assert relay.analysis.check_kind(relay.ShapeVar("n")) == relay.TypeKind.ShapeVar
    assert relay.var("x", relay.IncompleteType()).type_annotation is None
    with pytest.raises(relay.RelayTypeError, match="has no Relax form"):
        relay.TypeRelation(print, [a], 1).struct_info()
