"""Relay semantics upstream tests rely on: ops as ``tvm.ir.Op``, spans, converted variables."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi
from tvm import te

from compile_engine_compat import relay
from compile_engine_compat.facade.legacy_strategy import select_implementation
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError


def test_an_op_is_a_tvm_op_to_tvm():
    add = relay.op.get("add")
    assert tvm.runtime.convert(add).same_as(tvm.ir.Op.get("relax.add"))
    back = tvm.ir.load_json(tvm.ir.save_json(add))
    assert tvm_ffi.structural_equal(back, add)


def test_select_implementation_takes_a_front_end_calls_attrs():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    call = relay.testing.run_infer_type(
        relay.nn.conv2d(x, w, padding=(1, 1), channels=4, kernel_size=(3, 3))
    )
    inputs = [te.placeholder((1, 3, 8, 8), name="x"), te.placeholder((4, 3, 3, 3), name="w")]
    impl, outputs = select_implementation(
        relay.op.get("nn.conv2d"), call.attrs, inputs, call.checked_type, "llvm", False
    )
    assert [int(d) for d in outputs[0].shape] == [1, 4, 8, 8]
    assert impl.name.startswith("nn.conv2d")
    # Computed with the front-end call's padding: a 3x3 all-ones filter sums its window.
    func = te.create_prim_func([*inputs, outputs[0]])
    lib = tvm.compile(tvm.IRModule({"main": func}), "llvm")
    data, weight = np.ones((1, 3, 8, 8), "float32"), np.ones((4, 3, 3, 3), "float32")
    out = tvm.runtime.empty((1, 4, 8, 8), "float32")
    lib["main"](tvm.runtime.tensor(data), tvm.runtime.tensor(weight), out)
    assert out.numpy()[0, 0, 0, 0] == 12 and out.numpy()[0, 0, 4, 4] == 27


def test_an_op_that_is_not_one_relax_call_says_so():
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(4, 3))
    call = relay.testing.run_infer_type(relay.nn.dense(x, w))
    inputs = [te.placeholder((2, 3)), te.placeholder((4, 3))]
    with pytest.raises(UnsupportedRelayError, match=r"relax\.matmul"):
        select_implementation(relay.op.get("nn.dense"), call.attrs, inputs, None, "llvm", False)


def test_spans_and_global_vars_are_tvms():
    span = relay.Span(None, 1, 2, 3, 4)
    assert (span.line, span.end_line, span.column, span.end_column) == (1, 2, 3, 4)
    assert isinstance(span, relay.base.Span) and relay.SourceName("a").name == "a"
    assert relay.GlobalVar("g").name_hint == "g"
    for node in (relay.var("x"), relay.const(1.0), relay.Tuple([]), relay.add(relay.var("y"), 1.0)):
        assert node.span is None


def test_converted_variables_still_make_a_function():
    params = tvm.runtime.convert([relay.var(n, shape=(2,)) for n in "ab"])
    a, b = relay.Function(params, relay.Tuple([])).params
    assert (a.name_hint, b.name_hint) == ("a", "b")
    func = relay.Function(params, relay.add(a, b))
    got = relay.create_executor(mod=tvm.IRModule.from_expr(func), target="llvm").evaluate()(
        np.ones(2, "float32"), np.full(2, 2, "float32")
    )
    np.testing.assert_array_equal(got.numpy(), [3, 3])


def test_if_lowers_to_relax_if_and_runs_the_taken_branch():
    c = relay.var("c", shape=(), dtype="bool")
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,))
    body = relay.If(c, relay.add(x, y), relay.multiply(x, y))
    func = relay.Function([c, x, y], body)
    relax_func = tvm.IRModule.from_expr(func)["main"]
    assert "if c:" in relax_func.script()
    assert relay.testing.run_infer_type(func).body.checked_type == relay.TensorType((3,))
    run = relay.create_executor(target="llvm").evaluate(func)
    a, b = np.arange(3, dtype="float32"), np.full(3, 2, "float32")
    np.testing.assert_array_equal(run(np.array(True), a, b).numpy(), a + b)
    np.testing.assert_array_equal(run(np.array(False), a, b).numpy(), a * b)


def test_if_branches_of_two_types_are_a_relay_type_error():
    c = relay.var("c", shape=(), dtype="bool")
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,), dtype="int32")
    with pytest.raises(relay.RelayTypeError):
        relay.testing.run_infer_type(relay.Function([c, x, y], relay.If(c, x, y)))
