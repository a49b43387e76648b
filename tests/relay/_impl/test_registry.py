"""``relay.op.registry``: a row's builder has Relay's signature, and refuses at the call."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import tvm
from _relay_strategies import wide_strategy

from compile_engine_compat import relay
from compile_engine_compat.relay import UnsupportedRelayError
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr


def test_builders_have_relays_signatures():
    assert str(inspect.signature(relay.var)) == (
        "(name_hint: 'str', type_annotation: 'Type | str | None' = None, "
        "shape: 'Sequence[AnyT] | None' = None, dtype: 'str' = 'float32', "
        "span: 'AnyT' = None) -> 'Var'"
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


def test_attribute_without_relax_equivalent_raises_at_the_builder():
    x = relay.var("x", shape=(2, 3))
    with pytest.raises(UnsupportedRelayError, match=r"exclude.*one axis"):
        relay.argmax(x, axis=1, exclude=True)
    with pytest.raises(UnsupportedRelayError, match=r"batch_dims.*gather_nd"):
        relay.take(x, relay.var("i", shape=(2,), dtype="int32"), axis=1, batch_dims=1)
    # A tensor-valued shape builds the op's dyn.* twin (run by tests/relay/_impl/test_dyn_*).
    begin = relay.var("b", shape=(2,), dtype="int64")
    assert relay.strided_slice(x, begin, end=(1, 1)).op.name == "dyn.strided_slice"
    image = relay.var("image", shape=(1, 2, 4, 4))
    scaled = relay.nn.upsampling(image, relay.var("scale", shape=()), 2.0)
    assert scaled.op.name == "dyn.nn.upsampling"
    assert len(scaled.args) == 3  # data, scale_h, scale_w: Relay's dyn.nn.upsampling inputs
    pads = relay.var("pads", shape=(4, 2), dtype="int64")
    assert relay.nn.pad(image, pads).op.name == "dyn.nn.pad"


def test_relay_parameter_order_and_refused_attributes():
    data = relay.var("d", shape=(3, 4))
    idx = relay.var("i", shape=(3, 2), dtype="int32")
    call = relay.gather(data, 1, idx)  # Relay's order: data, axis, indices
    assert call.attrs.axis == 1 and call.args[1] is idx
    with pytest.raises(UnsupportedRelayError, match="lhs_begin"):
        relay.reshape_like(data, data, lhs_begin=1)


def test_strategies_that_cannot_apply_are_refused():
    from compile_engine_compat.relay import UnsupportedRelayError

    with pytest.raises(UnsupportedRelayError, match=r"relax\.matmul.*register_implementation"):
        with TempOpAttr("nn.dense", "FTVMStrategy", wide_strategy):
            pass
    with pytest.raises(UnsupportedRelayError, match=r"FTVMConvertOpLayout.*FLegalize"):
        with TempOpAttr("nn.conv2d", "FTVMConvertOpLayout", lambda *a: None):
            pass
    with TempOpAttr("nn.conv2d", "TOpPattern", 4):  # described Relay's fusion only
        assert relay.op.get("nn.conv2d").get_attr("TOpPattern") == 4
    assert relay.op.get("nn.conv2d").get_attr("TOpPattern") is None


def test_a_tensor_valued_attribute_is_refused_naming_the_op_and_attribute():
    x = relay.var("x", shape=(1, 5, 6))
    counts = relay.var("c", shape=(1,), dtype="int32")
    indices = relay.var("i", shape=(1, 5), dtype="int32")
    limit = relay.var("m", shape=(), dtype="int32")
    with pytest.raises(
        UnsupportedRelayError, match=r"vision\.non_max_suppression, max_output_size: .*%m"
    ):
        relay.vision.non_max_suppression(x, counts, indices, limit)


def test_blocked_layout_transforms_are_relax_layout_transforms_and_invert():
    x = relay.var("x", shape=(1, 8, 2, 2))
    blocked = relay.layout_transform(x, "NCHW", "NCHW4c")
    back = relay.layout_transform(blocked, "NCHW4c", "NCHW")
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([blocked, back])))
    data = np.arange(32, dtype="float32").reshape(1, 8, 2, 2)
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(data)
    want = data.reshape(1, 2, 4, 2, 2).transpose(0, 1, 3, 4, 2)
    np.testing.assert_array_equal(got[0].numpy(), want)
    np.testing.assert_array_equal(got[1].numpy(), data)
