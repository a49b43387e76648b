"""``relay.prelude``: TVM 0.19's lists over the interpreter (``create_executor("debug")``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.interpreter import ConstructorValue
from compile_engine_compat.relay.prelude import Prelude

#: mod[gv] = func, mod.get_type and mod.import_from_std are served by install().
pytestmark = pytest.mark.usefixtures("installed_alias")


@pytest.fixture(scope="module")
def prelude() -> Prelude:
    return Prelude(tvm.IRModule())


def _ints(value: Any) -> list[int]:
    """A List value as Python ints (walking Cons cells)."""
    out = []
    while value.constructor.name_hint == "Cons":
        out.append(int(value.fields[0].numpy()))
        value = value.fields[1]
    assert value.constructor.name_hint == "Nil"
    return out


def _list(prelude: Prelude, values: list[int]) -> Any:
    _, cons, nil = prelude.mod.get_type("List")
    expr = nil()
    for v in reversed(values):
        expr = cons(relay.const(v), expr)
    return expr


def test_map_foldl_and_length_evaluate_as_prelude_rly_defined_them(prelude: Prelude) -> None:
    run = relay.create_executor(mod=prelude.mod).evaluate
    x = relay.var("x", shape=(), dtype="int32")
    acc = relay.var("acc", shape=(), dtype="int32")
    xs = _list(prelude, [1, 2, 3])
    mapped = run(prelude.map(relay.Function([x], x + relay.const(10)), xs))
    assert isinstance(mapped, ConstructorValue) and _ints(mapped) == [11, 12, 13]
    total = run(prelude.foldl(relay.Function([acc, x], acc + x), relay.const(0), xs))
    assert int(total.numpy()) == 6
    assert int(run(prelude.length(xs)).numpy()) == 3
    assert _ints(run(prelude.rev(xs))) == [3, 2, 1]


def test_a_prelude_function_is_refused_by_relay_build_and_run_by_the_vm_executor(
    prelude: Prelude,
) -> None:
    with pytest.raises(NotImplementedError, match=r"create_executor\('debug'"):
        relay.build(prelude.mod, "llvm")
    # TVM 0.19's Relay VM ran ADT programs: create_executor("vm") runs them on the interpreter.
    head = relay.create_executor("vm", mod=prelude.mod).evaluate(prelude.hd(_list(prelude, [7])))
    assert int(head.numpy()) == 7


def test_tensor_arrays_are_declared_and_stack_as_numpy_does(prelude: Prelude) -> None:
    dtype = "float32"
    assert prelude.mod.get_type("tensor_int64_t")[0].name_hint == "tensor_int64_t"
    tensor_array = prelude.get_global_var("tensor_array", dtype)
    write = prelude.get_global_var("tensor_array_write", dtype)
    stack = prelude.get_global_var("tensor_array_stack", dtype)
    tensor1 = prelude.get_tensor_ctor("tensor1", dtype)
    x, y = relay.var("x"), relay.var("y")
    arr = write(
        write(tensor_array(relay.const(2)), relay.const(0), tensor1(x)), relay.const(1), tensor1(y)
    )
    run = relay.create_executor("debug", mod=prelude.mod).evaluate(
        relay.Function([x, y], stack(arr))
    )
    xs, ys = np.arange(3, dtype=dtype), np.arange(3, 6, dtype=dtype)
    result = run(xs, ys)
    assert result.constructor.name_hint == "tensor2_float32"
    np.testing.assert_array_equal(result.fields[0].numpy(), np.stack([xs, ys]))


def test_nat_rly_and_the_nat_helpers(prelude: Prelude) -> None:
    prelude.mod.import_from_std("nat.rly")
    _, z, s = prelude.mod.get_type("nat")
    double = prelude.mod.get_global_var("nat_double")
    value = relay.create_executor(mod=prelude.mod).evaluate(double(s(s(z()))))
    assert relay.testing.count(prelude, value) == 4
    assert relay.testing.count(prelude, relay.testing.make_nat_value(prelude, 3)) == 3
    with pytest.raises(ValueError, match=r"gradient\.rly"):
        prelude.mod.import_from_std("gradient.rly")
    assert np.array_equal(
        relay.testing.run_as_python(relay.const([1, 2])).numpy(), np.array([1, 2], "int32")
    )
