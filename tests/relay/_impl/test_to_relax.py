"""``relay.to_relax``: the Relax function of a Relay graph, and the types read back from it."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay, te_compiler
from compile_engine_compat.facade.objects import CCacheKey


def _add3_relay(shape=(10,)) -> relay.Function:
    x = relay.var("x", shape=shape)
    return relay.Function([x], relay.add(relay.add(x, x), x))


def _add3_hand(shape=(10,)) -> relax.Function:
    """The same graph, written by hand with BlockBuilder as the Relax docs do."""
    x = relax.Var("x", relax.TensorType(list(shape), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.op.add(x, x))
            gv = bb.emit_output(relax.op.add(lv, x))
        bb.emit_func_output(gv)
    return bb.get()["main"]


def _run(kernel, *arrays, out_shapes, dtype="float32"):
    outs = [tvm.runtime.empty(s, dtype, tvm.cpu()) for s in out_shapes]
    kernel(*[tvm.runtime.tensor(a) for a in arrays], *outs)
    return [o.numpy() for o in outs]


def test_run_infer_type_fills_checked_type():
    data = relay.var("data", shape=(1, 8, 7, 7))
    weight = relay.var("weight", shape=(32, 8, 3, 3))
    out = relay.nn.conv2d(data, weight, padding=(1, 1))
    with pytest.raises(ValueError, match="InferType"):
        _ = out.checked_type
    assert relay.testing.run_infer_type(out) is out
    assert out.checked_type == relay.TensorType((1, 32, 7, 7))
    assert out.checked_type.concrete_shape == (1, 32, 7, 7)
    assert data.checked_type == relay.TensorType((1, 8, 7, 7))


def test_multi_output_ops_are_tuples_as_in_relay():
    x = relay.var("x", shape=(1, 4, 2, 2))
    stats = [relay.var(n, shape=(4,)) for n in ("g", "b", "m", "v")]
    bn = relay.nn.batch_norm(x, *stats)
    assert isinstance(bn, relay.TupleWrapper) and len(bn) == 3
    relay.testing.run_infer_type(bn)
    assert bn.astuple().checked_type == relay.TupleType(
        [relay.TensorType((1, 4, 2, 2)), relay.TensorType((4,)), relay.TensorType((4,))]
    )
    first = relay.testing.run_infer_type(bn[0])
    assert first.checked_type == relay.TensorType((1, 4, 2, 2))
    parts = relay.split(relay.var("y", shape=(6, 2)), indices_or_sections=[1, 4])
    assert len(parts) == 3
    assert relay.testing.run_infer_type(parts[2]).checked_type == relay.TensorType((2, 2))


def test_let_tuple_and_function_call():
    x = relay.var("x", shape=(3,))
    v = relay.var("v", shape=(3,))
    let = relay.Let(v, relay.exp(x), relay.Tuple([v, relay.log(v)]))
    f = relay.Function([x], relay.TupleGetItem(let, 1))
    inner_p = relay.var("p", shape=(3,))
    inner = relay.Function([inner_p], relay.negative(inner_p))
    g = relay.Function([x], inner(f.body))
    arr = np.array([0.5, 1.0, 2.0], "float32")
    ex = tvm.compile(tvm.IRModule.from_expr(g), "llvm")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(arr)).numpy()
    np.testing.assert_allclose(got, -arr, rtol=1e-6)
    assert relay.testing.run_infer_type(g).checked_type == relay.FuncType(
        [relay.TensorType((3,))], relay.TensorType((3,))
    )


def test_relay_and_hand_written_relax_share_one_cache_entry(engine):
    f = _add3_relay()
    tvm.ir.assert_structural_equal(f.__relax_function__(), _add3_hand())
    assert engine.lower(f, "llvm") is engine.lower(_add3_hand(), "llvm")
    assert engine.lower(CCacheKey(_add3_relay(), "llvm")) is engine.lower(f, "llvm")
    assert len(engine.items()) == 1
    kernel = engine.jit(f, "llvm")
    assert kernel is engine.jit(_add3_hand(), "llvm")
    (got,) = _run(kernel, np.ones(10, "float32"), out_shapes=[(10,)])
    np.testing.assert_array_equal(got, np.full(10, 3.0, "float32"))
    assert len(te_compiler.lower_to_primfunc(f, "llvm").params) == 2


def test_irmodule_from_expr_and_infer_type():
    f = _add3_relay()
    mod = tvm.IRModule.from_expr(f)
    mod = relay.transform.InferType()(mod)
    tvm.ir.assert_structural_equal(mod["main"], _add3_hand())


def test_wrong_arguments_and_types_are_named():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(TypeError, match=r"relay\.nn\.conv2d\(data, weight"):
        relay.nn.conv2d(x)
    with pytest.raises(TypeError, match="has no type, and no use infers it"):
        u = relay.var("u")
        relay.testing.run_infer_type(relay.Function([u], relay.exp(u)))
    with pytest.raises(TypeError, match=r"free variable %x is not a parameter"):
        relay.testing.run_infer_type(relay.Function([relay.var("v", shape=(1,))], x))
    bad = relay.add(x, relay.var("y", shape=(4,)))
    with pytest.raises(relay.RelayTypeError, match=r"relay\.add: Relax rejects"):
        relay.testing.run_infer_type(bad)
    with pytest.raises(ValueError, match="Can't specify both"):
        relay.var("z", relay.TensorType((1,)), shape=(1,))


def test_deep_graphs_do_not_overflow_the_stack():
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(3000):  # far deeper than Python's recursion limit
        y = relay.add(y, x)
    f = relay.Function([x], y)
    assert len(f.__relax_function__().body.blocks[0].bindings) == 3000
    assert relay.testing.run_infer_type(y).checked_type == relay.TensorType((4,))


def test_untyped_weights_are_typed_from_their_uses(engine):
    x = relay.var("x", shape=(1, 3, 6, 6))
    w1, b1, w2 = relay.var("w1"), relay.var("b1"), relay.var("w2")
    gamma, beta = relay.var("gamma"), relay.var("beta")
    y = relay.nn.bias_add(relay.nn.conv2d(x, w1, channels=4, kernel_size=3, padding=1), b1)
    y = relay.nn.conv2d(y, w2, channels=8, kernel_size=(1, 1), groups=2)
    y = relay.nn.layer_norm(relay.nn.batch_flatten(y), gamma, beta)
    dense_w = relay.var("dense_w")
    out = relay.nn.dense(y, dense_w, units=5)
    f = relay.Function(relay.analysis.free_vars(out), out)
    relay.testing.run_infer_type(f)
    shapes = {p.name_hint: cast(relay.TensorType, p.checked_type).concrete_shape for p in f.params}
    assert shapes == {
        "x": (1, 3, 6, 6),
        "w1": (4, 3, 3, 3),
        "b1": (4,),
        "w2": (8, 2, 1, 1),
        "gamma": (288,),
        "beta": (288,),
        "dense_w": (5, 288),
    }
    assert engine.lower(f, "llvm") is not None
    with pytest.raises(TypeError, match="needs channels and kernel_size"):
        relay.testing.run_infer_type(relay.nn.conv2d(x, relay.var("w3")))
    with pytest.raises(TypeError, match="no use infers it"):
        relay.testing.run_infer_type(relay.add(x, relay.var("free")))
    # A first use that cannot type the weight does not stop a later one that can.
    w4 = relay.var("w4")
    both = relay.Tuple([relay.exp(w4), relay.nn.conv2d(x, w4, channels=2, kernel_size=1)])
    relay.testing.run_infer_type(both)
    assert isinstance(w4.checked_type, relay.TensorType)
    assert w4.checked_type.concrete_shape == (2, 3, 1, 1)


def test_a_deep_network_of_untyped_weights_builds_in_one_pass():
    x = relay.var("data", shape=(1, 4, 6, 6))
    y = x
    for i in range(120):  # the old two-pass inference recursed once per layer
        y = relay.nn.conv2d(y, relay.var(f"w{i}"), channels=4, kernel_size=3, padding=1)
        y = relay.nn.relu(relay.nn.bias_add(y, relay.var(f"b{i}")))
    f = relay.Function(relay.analysis.free_vars(y), y)
    assert f.__relax_function__().params[1].ty.shape.values[0] == 4


# -- upstream Relay test files (test_vm): an untyped If condition -----------------------------
def test_an_untyped_if_condition_is_a_boolean_scalar():
    b, v0, v1 = relay.var("b"), relay.var("v0"), relay.var("v1")
    out = relay.Let(v1, relay.const(1), relay.If(b, v1, v0))
    func = relay.Function([b], relay.Let(v0, relay.const(0), out))
    run = relay.create_executor(mod=tvm.IRModule.from_expr(func)).evaluate()
    assert run(True).numpy() == 1 and run(False).numpy() == 0
    assert b.checked_type == relay.scalar_type("bool")


# -- upstream Relay test files (test_vm): closures ---------------------------------------------
def test_a_closure_applied_twice_is_inlined():
    x, y = relay.var("x", shape=()), relay.var("y", shape=())
    adder = relay.Function([y], relay.Function([x], relay.add(x, y)))
    main = adder(relay.const(1.0))(relay.const(2.0))  # Relay's expressions can be applied
    run = relay.create_executor(mod=tvm.IRModule.from_expr(relay.Function([], main))).evaluate()
    assert run().numpy() == np.float32(3.0)
    f, a = relay.var("f"), relay.var("a", shape=())
    with pytest.raises(relay.UnsupportedRelayError, match="higher-order parameter"):
        tvm.IRModule.from_expr(relay.Function([f, a], f(a)))


def _nested_tuples(depth: int) -> relay.Function:
    x = relay.var("x", shape=(2,), dtype="float32")
    t: relay.Expr = x
    for _ in range(depth):
        t = relay.Tuple([t])
    for _ in range(depth):
        t = relay.TupleGetItem(t, 0)
    return relay.Function([x], relay.add(t, t))


def test_tuples_nested_to_the_limit_convert_and_deeper_ones_are_refused():
    from compile_engine_compat.relay._impl.to_relax import MAX_TUPLE_DEPTH

    tvm.IRModule.from_expr(_nested_tuples(MAX_TUPLE_DEPTH))
    # Deeper, TVM fails (FuseTIR) or dies of a stack overflow (from ~10,000 levels): a ValueError.
    for depth in (MAX_TUPLE_DEPTH + 1, 20_000):
        with pytest.raises(ValueError, match=f"nests tuples more than {MAX_TUPLE_DEPTH} deep"):
            tvm.IRModule.from_expr(_nested_tuples(depth))
