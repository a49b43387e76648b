"""The Relay front end: expressions, types, inference, attributes, errors, and the engine."""

from __future__ import annotations

import inspect
from typing import cast

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay, te_compiler
from compile_engine_compat.facade.objects import CCacheKey
from compile_engine_compat.relay import UnsupportedRelayError


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


# -- signatures and attributes ------------------------------------------------------------------


def test_builders_have_relays_signatures():
    assert str(inspect.signature(relay.var)) == (
        "(name_hint: 'str', type_annotation: 'Type | str | None' = None, "
        "shape: 'Sequence[AnyT] | None' = None, dtype: 'str' = 'float32') -> 'Var'"
    )
    sig = inspect.signature(relay.nn.conv2d)
    assert list(sig.parameters) == [
        "data",
        "weight",
        "strides",
        "padding",
        "dilation",
        "groups",
        "channels",
        "kernel_size",
        "data_layout",
        "kernel_layout",
        "out_layout",
        "out_dtype",
    ]
    assert sig.parameters["padding"].default == (0, 0)
    assert inspect.signature(relay.take).parameters["mode"].default == "clip"
    assert list(inspect.signature(relay.Function).parameters)[:5] == [
        "params",
        "body",
        "ret_type",
        "type_params",
        "attrs",
    ]


def test_call_attrs_read_like_relays():
    data = relay.var("data", shape=(1, 8, 7, 7))
    weight = relay.var("weight", shape=(16, 8, 3, 3))
    conv = relay.nn.conv2d(data, weight, padding=1, channels=16, kernel_size=3)
    assert conv.attrs.padding == (1, 1, 1, 1)
    assert conv.attrs.kernel_size == (3, 3)
    assert conv.attrs.channels == 16
    assert conv.attrs.strides == (1, 1)
    assert conv.attrs.get_int_tuple("dilation") == (1, 1)
    assert "data_layout" in conv.attrs.keys()
    assert relay.sum(data, axis=1, keepdims=True).attrs.axis == 1
    assert conv.op is relay.op.get("nn.conv2d")
    assert conv.op.name == "nn.conv2d" and conv.op.relax_op_name == "relax.nn.conv2d"
    with pytest.raises(AttributeError, match="Conv2DAttrs has no attribute 'nope'"):
        _ = conv.attrs.nope


def test_call_with_default_attrs_and_operator_overloads():
    x = relay.var("x", shape=(2, 3))
    call = relay.Call(relay.op.get("nn.softmax"), [x])
    assert call.attrs is not None
    assert call.attrs.axis == -1
    expr = (x * relay.const(2.0) + relay.const(1.0)) / x - x
    f = relay.Function([x], (-expr).astype("float16"))
    out = relay.testing.run_infer_type(f)
    assert out.body.checked_type == relay.TensorType((2, 3), "float16")
    assert isinstance(x < x, relay.Call)
    greater_equal = (x >= x).op
    assert isinstance(greater_equal, relay.op.Op) and greater_equal.name == "greater_equal"
    with pytest.raises(TypeError, match=r'convert "2\.0" with `const` first'):
        _ = x * 2.0


# -- inference ----------------------------------------------------------------------------------


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


def test_any_is_a_symbolic_dimension(engine):
    n = relay.Any()
    x = relay.var("x", shape=(n, 3))
    f = relay.Function([x], relay.nn.relu(x))
    assert "?" in repr(relay.testing.run_infer_type(f).body.checked_type)
    kernel = engine.jit(f, "llvm")
    arr = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    (got,) = _run(kernel, arr, out_shapes=[(2, 3)])
    np.testing.assert_array_equal(got, np.maximum(arr, 0))
    try:
        assert engine.lower_shape_func(f, "llvm") is not None
    finally:
        # clear() keeps shape functions (as legacy did); other tests count them.
        with engine._lock:
            engine._shape_cache.clear()


def test_reshape_special_codes():
    x = relay.var("x", shape=(2, 3, 4, 5))
    cases = {
        (0, -1): (2, 60),
        (-2,): (2, 3, 4, 5),
        (0, -3, 5): (2, 12, 5),
        (-4, 1, 2, -2): (1, 2, 3, 4, 5),
        (-4, -1, 1, 3, 20): (2, 1, 3, 20),
    }
    for newshape, shape in cases.items():
        out = relay.testing.run_infer_type(relay.reshape(x, newshape))
        assert out.checked_type.concrete_shape == shape, newshape
    assert relay.reshape(x, [0, 0, 0, 0], allowzero=True).attrs.allowzero


def test_astext_with_attr_free_vars():
    f = _add3_relay()
    assert "R.add" in f.astext()
    g = f.with_attr("Primitive", 1)
    assert g.attrs["Primitive"] == 1 and "Primitive" not in f.attrs
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert relay.analysis.free_vars(relay.add(y, relay.add(x, y))) == [y, x]


# -- the engine and TVM take Relay functions ----------------------------------------------------


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


# -- bad input fails at the builder call --------------------------------------------------------


def test_attribute_without_relax_equivalent_raises_at_the_builder():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(UnsupportedRelayError, match=r"select_last_index.*relax\.op\.flip"):
        relay.argmax(x, axis=1, select_last_index=True)
    with pytest.raises(UnsupportedRelayError, match=r"batch_dims.*gather_nd"):
        relay.take(x, relay.var("i", shape=(2,), dtype="int32"), axis=1, batch_dims=1)
    with pytest.raises(UnsupportedRelayError, match=r"dyn\.\*"):
        relay.reshape(x, newshape=(3, 2)) and relay.broadcast_to(x, relay.var("s", shape=(2,)))
    with pytest.raises(UnsupportedRelayError, match="adaptive max pool"):
        relay.nn.adaptive_max_pool2d(relay.var("d", shape=(1, 1, 4, 4)))


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


def test_irmodule_from_an_expression_wraps_its_free_variables():
    x = relay.var("x", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.exp(x))
    assert [p.name for p in mod["main"].params] == ["x"]
    ex = tvm.compile(mod, "llvm")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(np.zeros(3, "float32")))
    np.testing.assert_array_equal(got.numpy(), np.ones(3, "float32"))


def test_const_dtypes_follow_relay():
    def dtype(value, given=None):
        return relay.testing.run_infer_type(relay.const(value, given)).checked_type.dtype

    assert dtype(1) == "int32" and dtype(1.5) == "float32" and dtype(True) == "bool"
    assert dtype(np.arange(3)) == "int32" and dtype(np.ones(2)) == "float32"
    assert dtype(np.ones(2, "float16")) == "float16" and dtype(1, "int64") == "int64"
    assert relay.testing.run_infer_type(relay.const(0, "int32")).checked_type.shape == ()


def test_deep_graphs_do_not_overflow_the_stack():
    x = relay.var("x", shape=(4,))
    y = x
    for _ in range(3000):  # far deeper than Python's recursion limit
        y = relay.add(y, x)
    f = relay.Function([x], y)
    assert len(f.__relax_function__().body.blocks[0].bindings) == 3000
    assert relay.testing.run_infer_type(y).checked_type == relay.TensorType((4,))


def test_other_relay_passes_name_their_relax_counterpart():
    from compile_engine_compat.surfaces.import_alias import RelayRemovedError

    with pytest.raises(RelayRemovedError, match=r"tvm\.relax\.transform\.FoldConstant"):
        relay.transform.FoldConstant()
    with pytest.raises(RelayRemovedError, match="drop the pass"):
        relay.transform.PartialEvaluate()
    mod = tvm.IRModule.from_expr(_add3_relay())
    assert relay.transform.SimplifyInference()(mod) is mod
    assert relay.transform.InferType()(relay.exp(relay.var("v", shape=(1,)))).checked_type


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


def test_relay_parameter_order_and_refused_layouts():
    data = relay.var("d", shape=(3, 4))
    idx = relay.var("i", shape=(3, 2), dtype="int32")
    call = relay.gather(data, 1, idx)  # Relay's order: data, axis, indices
    assert call.attrs.axis == 1 and call.args[1] is idx
    with pytest.raises(UnsupportedRelayError, match=r"relax\.op\.layout_transform"):
        relay.layout_transform(relay.var("x", shape=(1, 8, 2, 2)), "NCHW", "NCHW4c")
    with pytest.raises(UnsupportedRelayError, match="lhs_begin"):
        relay.reshape_like(data, data, lhs_begin=1)


def test_bilinear_upsampling_is_relax_linear_resize(engine):
    x = relay.var("x", shape=(1, 2, 3, 3))
    f = relay.Function([x], relay.nn.upsampling(x, 2, 2, method="bilinear", align_corners=True))
    rx = relax.Var("x", relax.TensorType([1, 2, 3, 3], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [rx]):
        with bb.dataflow():
            gv = bb.emit_output(
                relax.op.image.resize2d(
                    rx, (6, 6), method="linear", coordinate_transformation_mode="align_corners"
                )
            )
        bb.emit_func_output(gv)
    tvm.ir.assert_structural_equal(f.__relax_function__(), bb.get()["main"])
    with pytest.raises(UnsupportedRelayError, match="bilinear"):
        relay.nn.upsampling(x, method="area")
