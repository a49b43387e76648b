"""``relay.adt`` and the reference nodes: built, printed, visited and walked as Relay's; refused
by name where a program holding them would be lowered to Relax."""

from __future__ import annotations

from typing import Any

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.adt import pattern_vars


def _list_type() -> tuple[Any, Any, Any]:
    """A ``List a = Nil | Cons(a, List a)`` declaration, as Relay's prelude declared it."""
    header = relay.GlobalTypeVar("List")
    a = relay.TypeVar("a")
    nil = relay.Constructor("Nil", [], header)
    cons = relay.Constructor("Cons", [a, relay.TypeCall(header, [a])], header)
    return relay.TypeData(header, [a], [nil, cons]), nil, cons


def _head_or_x() -> tuple[Any, Any, Any]:
    """``fn (%x) { match (Cons(%x, Nil)) { Cons(%y, _) => %y, _ => %x } }``, with ``%y``."""
    _, nil, cons = _list_type()
    x = relay.var("x", shape=(2,))
    y = relay.Var("y")
    head = relay.PatternConstructor(cons, [relay.PatternVar(y), relay.PatternWildcard()])
    match = relay.Match(
        cons(x, nil()), [relay.Clause(head, y), relay.Clause(relay.PatternWildcard(), x)]
    )
    return relay.Function([x], match), x, y


def test_type_data_numbers_its_constructors() -> None:
    data, nil, cons = _list_type()
    # TVM 0.19's tags: the type's name hashed into the high byte, the position below it
    assert (nil.tag & 0xFFFFFF, cons.tag & 0xFFFFFF) == (0, 1) and data.constructors == [nil, cons]
    assert nil.tag >> 24 == cons.tag >> 24 != 0 and 0 < nil.tag < 2**31
    _, other_nil, _ = _list_type()
    assert other_nil.tag == nil.tag  # the same type declared again: the same tags
    assert isinstance(cons(relay.var("h"), nil()), relay.Call) and cons(nil()).op is cons


def test_bad_nodes_are_refused_at_the_call() -> None:
    _, nil, _ = _list_type()
    with pytest.raises(TypeError, match="GlobalTypeVar"):
        relay.Constructor("C", [], relay.TypeVar("a"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"relay\.Pattern"):
        relay.Clause(relay.var("x"), relay.var("y"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"relay\.Clause"):
        relay.Match(relay.var("x"), [nil])


def test_a_match_prints_as_relay_text_and_binds_its_pattern_variables() -> None:
    func, x, y = _head_or_x()
    text = func.astext()
    assert "match (%1) {" in text and "Cons(%y, _) => {" in text and "%0 = Nil();" in text
    assert relay.analysis.free_vars(func.body) == [x]  # %y is bound by its clause
    assert pattern_vars(func.body.clauses[0].lhs) == [y]


def test_references_print_and_rebuild_with_fields() -> None:
    x = relay.var("x", shape=(2,))
    ref = relay.RefCreate(x)
    write = relay.RefWrite(ref, x)
    text = relay.Function([x], relay.Tuple([relay.RefRead(ref), write])).astext()
    assert "ref(%x)" in text and "%0^" in text and "(%0 := %x)" in text
    assert relay.expr.RefWriteWithFields(write) is write
    assert relay.expr.RefReadWithFields(relay.RefRead(ref), ref=x).ref is x


def test_visitors_dispatch_to_the_adt_and_reference_methods() -> None:
    func, _, _ = _head_or_x()
    seen: list[str] = []

    class Recorder(relay.ExprVisitor):
        def visit_match(self, match: Any) -> None:
            seen.append("match")
            super().visit_match(match)

        def visit_constructor(self, con: Any) -> None:
            seen.append(con.name_hint)

    Recorder().visit(func)
    assert seen == ["match", "Cons", "Nil"]
    assert relay.ExprMutator().visit(func) is func  # nothing changed: the same graph

    class NewRef(relay.ExprMutator):
        def visit_var(self, var: Any) -> Any:
            return relay.const(1.0)

    assert isinstance(NewRef().visit(relay.RefCreate(relay.var("v"))).value, relay.Constant)


@pytest.mark.parametrize("kind", ["match", "ref"])
def test_building_an_adt_or_reference_program_is_refused_by_name(kind: str) -> None:
    if kind == "match":
        func, _, _ = _head_or_x()
        name = r"\(relay\.Match\)"
    else:
        x = relay.var("x", shape=(2,))
        func = relay.Function([x], relay.RefRead(relay.RefCreate(x)))
        name = r"\(relay\.RefRead\)"
    # tvm.IRModule.from_expr holds it (the interpreter's stand-in), relay.build refuses it
    with pytest.raises(NotImplementedError, match=name):
        relay.build(tvm.IRModule.from_expr(func), "llvm")


def test_temp_expr_storage_info_and_memory_plan() -> None:
    with pytest.raises(NotImplementedError, match="realize"):
        relay.expr.TempExpr().realize()
    x = relay.var("x", shape=(2,))
    with pytest.raises(NotImplementedError, match="TempExpr"):
        relay.build(
            tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([x, relay.expr.TempExpr()]))),
            "llvm",
        )
    info = relay.expr.StorageInfo([0, 1], [1, 1], [8, 8])
    assert (info.storage_ids, info.device_types, info.storage_sizes) == ([0, 1], [1, 1], [8, 8])
    assert relay.expr.StaticMemoryPlan({x: info}).expr_to_storage_info[x] is info
    with pytest.raises(ValueError, match="one device type and size per storage id"):
        relay.expr.StorageInfo([0], [1, 1], [8])
