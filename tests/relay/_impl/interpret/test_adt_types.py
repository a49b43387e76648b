"""Types inferred for interpreted functions: constructors instantiated per call, matches unified
with their patterns, and None where an op call is met."""

from __future__ import annotations

from typing import Any

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.interpret.adt_types import function_type


def _box() -> tuple[Any, Any, dict[Any, Any]]:
    box, tv = relay.GlobalTypeVar("box"), relay.TypeVar("tv")
    ctor = relay.Constructor("constructor", [tv], box)
    return box, ctor, {box: relay.TypeData(box, [tv], [ctor])}


def _none(gvar: object) -> None:
    return None


def test_each_constructor_call_is_instantiated_at_its_argument() -> None:
    box, ctor, types = _box()
    body = relay.Tuple([ctor(relay.Tuple([])), ctor(relay.const(0, "float32"))])
    found = function_type(relay.Function([], body), _none, types)
    assert found is not None
    assert found.ret_type == relay.TupleType(
        [box(relay.TupleType([])), box(relay.TensorType((), "float32"))]
    )


def test_a_pattern_variable_annotation_types_the_unannotated_parameter() -> None:
    _, ctor, types = _box()
    tt = relay.TensorType((2, 2), "float32")
    x, mv = relay.Var("x"), relay.Var("mv", tt)
    clause = relay.Clause(relay.PatternConstructor(ctor, [relay.PatternVar(mv)]), relay.Tuple([]))
    found = function_type(relay.Function([x], relay.Match(ctor(x), [clause])), _none, types)
    assert found == relay.FuncType([tt], relay.TupleType([]))


def test_what_it_cannot_type_gives_none() -> None:
    _, ctor, types = _box()
    x = relay.var("x", shape=(2,))
    assert function_type(relay.Function([x], ctor(relay.log(x))), _none, types) is None
    # A constructor of a type no module declared.
    assert function_type(relay.Function([x], ctor(x)), _none, {}) is None
