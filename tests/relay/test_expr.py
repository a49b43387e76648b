"""``relay.expr``: calls and their attributes, operators, constants, TVM's view of an expression."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay


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


def test_astext_with_attr_free_vars():
    x = relay.var("x", shape=(10,))
    f = relay.Function([x], relay.add(relay.add(x, x), x))
    assert "%0 = add(%x, %x);" in f.astext() and "R.add" in f.script()
    g = f.with_attr("Primitive", 1)
    assert g.attrs["Primitive"] == 1 and "Primitive" not in f.attrs
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    assert relay.analysis.free_vars(relay.add(y, relay.add(x, y))) == [y, x]


def test_const_dtypes_follow_relay():
    def dtype(value, given=None):
        return relay.testing.run_infer_type(relay.const(value, given)).checked_type.dtype

    assert dtype(1) == "int32" and dtype(1.5) == "float32" and dtype(True) == "bool"
    assert dtype(np.arange(3)) == "int32" and dtype(np.ones(2)) == "float32"
    assert dtype(np.ones(2, "float16")) == "float16" and dtype(1, "int64") == "int64"
    assert relay.testing.run_infer_type(relay.const(0, "int32")).checked_type.shape == ()


def test_irmodule_from_an_expression_wraps_its_free_variables():
    x = relay.var("x", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.exp(x))
    assert [p.name for p in mod["main"].params] == ["x"]
    ex = tvm.compile(mod, "llvm")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(np.zeros(3, "float32")))
    np.testing.assert_array_equal(got.numpy(), np.ones(3, "float32"))


def test_an_expression_through_tvm_runtime_convert_comes_back_as_itself():
    # Relay's tests write relay.Tuple(tvm.runtime.convert([call])).
    x = relay.var("x", shape=(2,))
    call = relay.exp(x)
    converted = tvm.runtime.convert([call, x])
    tup = relay.Tuple(converted)
    assert tup.fields[0] is call and tup.fields[1] is x
    assert relay.Function(tvm.runtime.convert([x]), call).params == [x]


def test_with_fields_copy_only_what_changes_and_bind_substitutes():
    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    call = relay.add(x, y)
    assert relay.expr.CallWithFields(call) is call
    swapped = relay.expr.CallWithFields(call, args=[y, x])
    assert swapped is not call and swapped.args == [y, x] and swapped.op is call.op
    item = relay.expr.TupleGetItemWithFields(relay.TupleGetItem(relay.Tuple([x, y]), 0), index=1)
    assert item.index == 1
    assert relay.expr.VarWithFields(x, "z").name_hint == "z"
    with pytest.raises(TypeError, match=r"CallWithFields takes a relay\.Call"):
        relay.expr.CallWithFields(x)  # type: ignore[arg-type]
    func = relay.bind(relay.Function([x, y], call), {y: relay.const(np.ones(2, "float32"))})
    assert [p.name_hint for p in func.params] == ["x"]
    assert "meta[relay.Constant][0]" in relay.astext(func)
    assert relay.pretty_print(relay.bind(call, {x: y})).endswith("add(%y, %y)")


def test_var_const_and_with_fields_take_a_span_where_tvm_019_put_it():
    # TVM 0.19's signatures: var(..., span=), const(..., span=), and *WithFields(...,
    # virtual_device, span) -- upstream's tag_span helper passes both positionally.
    span = tvm.ir.Span(tvm.ir.SourceName("conv"), 0, 0, 0, 0)
    x = relay.var("x", shape=(2,), span=span)
    c = relay.const(np.ones(2, "float32"), span=span)
    assert x.span is span and c.span is span
    call = relay.add(x, c)
    tagged = relay.expr.CallWithFields(call, call.op, call.args, call.attrs, None, None, span)
    assert tagged.span is span and tagged.args == call.args
    item = relay.TupleGetItem(relay.Tuple([x, c]), 0)
    assert relay.expr.TupleGetItemWithFields(item, None, None, None, span).span is span
    assert relay.expr.VarWithFields(x, None, None, None, span).span is span
    assert relay.expr.ConstantWithFields(c, None, None, span).span is span


def test_an_op_call_reads_its_type_args_from_inference_and_stays_equal():
    from compile_engine_compat.relay._impl.structural import relay_equal
    from compile_engine_compat.relay._impl.to_relax import infer

    x = relay.var("x", shape=(2, 3))
    typed, fresh = relay.nn.relu(x), relay.nn.relu(x)
    assert typed.type_args == []
    infer(typed)
    assert [str(t) for t in typed.type_args] == ["Tensor[(2, 3), float32]"] * 2
    assert relay_equal(typed, fresh)  # types found by inference are no part of identity
    rebuilt = relay.Call(typed.op, typed.args, typed.attrs, typed.type_args)
    assert rebuilt.given_type_args == []
    given = relay.Call(typed.op, typed.args, typed.attrs, [relay.TensorType((2, 3))])
    assert not relay_equal(given, fresh)
