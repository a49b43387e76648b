"""``relay.backend.interpreter``: recursion, closures, references and matches, evaluated."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.interpreter import MatchError, RefValue

#: mod[gv] = func, mod.get_type and mod.import_from_std are served by install().
pytestmark = pytest.mark.usefixtures("installed_alias")


def test_a_recursive_global_function_and_a_let_bound_closure() -> None:
    mod = tvm.IRModule()
    fact = relay.GlobalVar("fact")
    n = relay.var("n", shape=(), dtype="int32")
    one = relay.const(1)
    body = relay.If(relay.less_equal(n, one), one, n * relay.Call(fact, [n - one]))
    mod[fact] = relay.Function([n], body)
    assert (
        int(relay.create_executor(mod=mod).evaluate(relay.Call(fact, [relay.const(5)])).numpy())
        == 120
    )
    # The same loop as a let-bound closure calling itself (Relay's let rec).
    loop, i = relay.Var("loop"), relay.var("i", shape=(), dtype="int32")
    rec = relay.Function([i], relay.If(relay.less_equal(i, one), one, i * loop(i - one)))
    value = relay.create_executor(mod=mod).evaluate(relay.Let(loop, rec, loop(relay.const(4))))
    assert int(value.numpy()) == 24
    with pytest.raises(NotImplementedError, match="@fact"):
        relay.build(mod, "llvm")


def test_references_are_mutable_cells() -> None:
    r = relay.Var("r")
    write = relay.RefWrite(r, relay.RefRead(r) + relay.const(2))
    prog = relay.Let(r, relay.RefCreate(relay.const(1)), relay.Let(relay.var("_"), write, r))
    value = relay.create_executor().evaluate(prog)
    assert isinstance(value, RefValue) and int(value.value.numpy()) == 3


def test_an_incomplete_match_that_matches_nothing_raises() -> None:
    header = relay.GlobalTypeVar("Opt")
    a = relay.TypeVar("a")
    some = relay.Constructor("Some", [a], header)
    none = relay.Constructor("None", [], header)
    mod = tvm.IRModule()
    mod[header] = relay.TypeData(header, [a], [some, none])
    x = relay.Var("x")
    clause = relay.Clause(relay.PatternConstructor(some, [relay.PatternVar(x)]), x)
    unwrap = relay.Match(none(), [clause], complete=False)
    with pytest.raises(MatchError, match="did not find any match"):
        relay.create_executor(mod=mod).evaluate(unwrap)
    assert (
        relay.create_executor(mod=mod)
        .evaluate(relay.Match(some(relay.const(7)), [clause], complete=False))
        .numpy()
        == 7
    )
