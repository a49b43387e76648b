"""``relay.transform.Inline`` on the Relay graph."""

from __future__ import annotations

from typing import Any

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def _inline_marked(func: Any, compiler: str | None = None) -> Any:
    marked = func.with_attr("Inline", tvm.tir.IntImm("int32", 1))
    return marked.with_attr("Compiler", compiler) if compiler else marked


def _by_name(mod: tvm.IRModule) -> dict[str, Any]:
    return {str(g.name_hint): f for g, f in relay_definitions(mod).items()}


def test_marked_leaf_is_inlined_and_removed_but_entries_stay():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(2,))
    leaf = relay.GlobalVar("leaf")
    mod[leaf] = _inline_marked(relay.Function([x], x * x))
    y = relay.var("y", shape=(2,))
    entry = relay.GlobalVar("entry")
    mod[entry] = _inline_marked(relay.Function([y], y - y))
    p = relay.var("p", shape=(2,))
    mod["main"] = relay.Function([p], leaf(p) + p)

    out = _by_name(relay.transform.Inline()(mod))

    assert sorted(out) == ["entry", "main"]
    assert relay_equal(out["main"], relay.Function([p], p * p + p))


def test_a_callee_of_an_external_compiler_is_called_as_a_function_literal():
    mod = tvm.IRModule()
    x = relay.var("x", shape=(2,))
    ext = relay.GlobalVar("ext")
    fn = _inline_marked(relay.Function([x], x), compiler="a")
    mod[ext] = fn
    p = relay.var("p", shape=(2,))
    mod["main"] = relay.Function([p], ext(p) + p)

    out = _by_name(relay.transform.Inline()(mod))

    assert sorted(out) == ["main"]
    call = out["main"].body.args[0]
    assert isinstance(call.op, relay.Function) and call.op.attrs["Compiler"] == "a"


def test_a_recursive_function_is_kept_and_its_callees_inlined():
    mod = tvm.IRModule()
    x = relay.var("x", shape=[], dtype="int32")
    ident = relay.GlobalVar("ident")
    mod[ident] = _inline_marked(relay.Function([x], x))
    loop = relay.GlobalVar("loop")
    i = relay.var("i", shape=[], dtype="int32")
    zero = relay.const(0, "int32")
    body = relay.If(relay.equal(i, zero), i, loop(relay.subtract(i, ident(i))))
    mod[loop] = _inline_marked(relay.Function([i], body, relay.TensorType([], "int32")))

    out = _by_name(relay.transform.Inline()(mod))

    assert sorted(out) == ["loop"]
    expected = relay.If(relay.equal(i, zero), i, loop(relay.subtract(i, i)))
    assert relay_equal(out["loop"].body, expected)
