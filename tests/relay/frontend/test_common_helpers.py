"""TVM 0.19's relay.frontend.common helpers over the front end's Relay graph."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend import common


def test_infer_type_shape_channels_and_name():
    x = relay.var("x", shape=(4, 3, 2), dtype="float32")
    y = relay.nn.relu(x)
    assert common.infer_type(y).checked_type.dtype == "float32"
    assert common.infer_shape(y) == (4, 3, 2)
    assert common.infer_channels(x) == 4 and common.infer_channels(x, transpose=True) == 3
    assert common.get_name(x) == "x" and common.get_name(y) == ""


def test_infer_value_fold_constant_and_try_infer_value():
    x = relay.var("x", shape=(2,))
    value = common.infer_value(relay.add(x, relay.const(1.0)), {"x": np.array([1.0, 2.0], "f4")})
    np.testing.assert_array_equal(value.numpy(), [2.0, 3.0])
    folded = common.fold_constant(relay.multiply(relay.const(2.0), relay.const(3.0)))
    assert isinstance(folded, relay.Constant) and folded.data.numpy() == 6.0
    assert common.try_infer_value(x) == (x, False)
    assert common.try_infer_value(relay.const(np.arange(3)), on_success=list)[1]
    with pytest.raises(ValueError, match=r"\['x'\]"):
        common.infer_value(x, {})


def test_infer_value_simulated_draws_the_missing_inputs_only():
    x, y = relay.var("x", shape=(2, 3)), relay.var("y", shape=(3,))
    params = {"y": np.array([1.0, 2.0, 3.0], "f4")}
    value = common.infer_value_simulated(relay.multiply(x, relay.const(0.0)) + y, params)
    np.testing.assert_array_equal(value.numpy(), [[1.0, 2.0, 3.0]] * 2)
    assert list(params) == ["y"]  # the simulated x is not left behind
    with pytest.raises(ValueError, match="static TensorType"):
        common.infer_value_simulated(relay.var("z"), {})


def test_shape_of_is_a_constant_for_static_shapes():
    x = relay.var("x", shape=(2, 5, 7))
    shape = common.shape_of(x, start=1)
    assert isinstance(shape, relay.Constant)
    np.testing.assert_array_equal(shape.data.numpy(), [5, 7])


def test_get_relay_op_attrcvt_and_renamer_build_ops():
    assert common.get_relay_op("nn.conv2d") is relay.nn.conv2d
    assert common.get_relay_op("relu") is relay.nn.relu
    with pytest.raises(tvm.error.OpNotImplemented, match="no_such_op"):
        common.get_relay_op("no_such_op")
    x = relay.var("x", shape=(1, 6))
    cvt = common.AttrCvt("clip", transforms={"lo": "a_min", "hi": ("a_max", 6.0)}, ignores=["T"])
    out = cvt([x], {"lo": 0.0, "T": "float"})
    got = common.infer_value(out, {"x": np.arange(-2, 10, 2, dtype="float32").reshape(1, 6)})
    np.testing.assert_array_equal(got.numpy(), [[0, 0, 2, 4, 6, 6]])
    with pytest.raises(tvm.error.OpAttributeUnImplemented, match="bad"):
        common.AttrCvt("clip", excludes=["bad"])([x], {"bad": 1})
    assert common.infer_shape(common.Renamer("nn.relu")([x], {})) == (1, 6)


def test_str_attrs_dict_expr_table_and_small_helpers():
    attrs = common.StrAttrsDict({"k": "(3, 3)", "n": "4", "f": "True", "p": "((1, 2), (3, 4))"})
    assert attrs.get_int_tuple("k") == (3, 3) and attrs.get_int("n") == 4
    assert attrs.get_bool("f") and attrs.get_tuple_tuple_int("p") == ((1, 2), (3, 4))
    assert attrs.get_float("missing", 0.5) == 0.5
    with pytest.raises(AttributeError, match="missing"):
        attrs.get_int("missing")
    table = common.ExprTable()
    weight = table.new_const(np.ones((2, 2)))
    table.set_expr("w", weight)
    assert table.get_expr("w") is weight and "_param_1" in table.params
    assert common.to_int_list(np.array([[1, 2], [3, 4]])) == [1, 2, 3, 4]
    parts = common.unbind(relay.var("t", shape=(3, 4)), axis=0)
    assert len(parts) == 3 and common.infer_shape(parts[0]) == (4,)
    assert common.infer_shape(common.ensure_scalar_shape(relay.var("s", shape=(1,)))) == ()
    resolved = common.try_resolve_var_to_const(relay.var("p"), {"p": np.zeros(2)})
    assert isinstance(resolved, relay.Constant)


def test_autopad_pads_for_a_same_convolution():
    from compile_engine_compat.relay.frontend import common

    x = relay.var("x", shape=(1, 1, 5, 6))
    upper = common.autopad(x, (2, 2), (3, 3))
    assert [tuple(p) for p in upper.attrs.pad_width] == [(0, 0), (0, 0), (1, 1), (0, 1)]
    lower = common.autopad(x, (1, 1), (4, 4), mode="SAME_LOWER", pad_type="edge")
    assert [tuple(p) for p in lower.attrs.pad_width][2:] == [(2, 1), (2, 1)]
    assert lower.attrs.pad_mode == "edge"
    with pytest.raises(ValueError, match="known spatial sizes"):
        common.autopad(relay.var("y", shape=(1, 1, relay.Any(), 4)), (1, 1), (3, 3))
