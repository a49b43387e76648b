"""The pattern language on the front end's Relay graph: Relay's matching rules."""

from __future__ import annotations

import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay.dataflow_pattern import (
    DominatorPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    is_constant,
    is_expr,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    wildcard,
)


def test_add_and_multiply_commute_subtract_does_not():
    x, y = relay.var("x"), relay.var("y")
    assert is_op("add")(is_var("x"), is_var("y")).match(y + x)
    assert is_op("multiply")(is_var("x"), is_var("y")).match(y * x)
    assert not is_op("subtract")(is_var("x"), is_var("y")).match(y - x)


def test_a_sub_pattern_used_twice_matches_one_node():
    x, y = relay.var("x"), relay.var("y")
    shared = wildcard()
    pattern = is_op("add")(shared, shared)
    assert pattern.match(x + x)
    assert not pattern.match(x + y)


def test_attributes_of_calls_ops_and_functions():
    x, w = relay.var("x", shape=(1, 3, 8, 8)), relay.var("w", shape=(4, 3, 3, 3))
    conv = relay.nn.conv2d(x, w, kernel_size=(3, 3), padding=(1, 1))
    assert (
        is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"padding": [1, 1, 1, 1]}).match(conv)
    )
    assert (
        not is_op("nn.conv2d")(wildcard(), wildcard()).has_attr({"data_layout": "NHWC"}).match(conv)
    )
    elementwise = wildcard().has_attr({"TOpPattern": 0})(wildcard())
    assert elementwise.match(relay.nn.relu(x))
    assert not elementwise.match(relay.sum(x))
    f = relay.Function([x], relay.nn.relu(x)).with_attr("Composite", "acc.relu")
    assert has_attr({"Composite": "acc.relu"}).match(f)
    assert not has_attr({"Composite": "acc.other"}).match(f)


def test_types_shapes_and_dtypes_are_inferred():
    x = relay.var("x", shape=(2, 3), dtype="float16")
    out = relay.nn.relu(x)
    assert has_dtype("float16").match(out)
    assert has_shape((2, 3)).match(out)
    assert not has_shape((3, 2)).match(out)


def test_constants_tuples_and_fields():
    x = relay.var("x", shape=(2,))
    c = relay.const(1.0)
    assert is_op("add")(wildcard(), is_constant()).match(x + c)
    assert not is_op("add")(wildcard(), is_constant()).match(x + x)
    assert is_expr(relay.const(1.0)).match(c)  # structurally equal, another node
    pair = relay.Tuple([x, c])
    assert is_tuple_get_item(is_tuple([wildcard(), is_constant()]), 1).match(
        relay.TupleGetItem(pair, 1)
    )
    assert not is_tuple_get_item(is_tuple([wildcard(), is_constant()]), 0).match(
        relay.TupleGetItem(pair, 1)
    )


def test_alternatives_and_optional():
    x, w, b = relay.var("x"), relay.var("w"), relay.var("b")
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    pattern = is_op("nn.relu")(conv.optional(lambda p: is_op("nn.bias_add")(p, wildcard())))
    assert pattern.match(relay.nn.relu(relay.nn.conv2d(x, w)))
    assert pattern.match(relay.nn.relu(relay.nn.bias_add(relay.nn.conv2d(x, w), b)))
    assert not pattern.match(relay.nn.relu(relay.nn.dense(x, w)))


def test_dominates_needs_every_path_through_the_path_pattern_to_one_parent():
    inp, weight = relay.var("input"), relay.var("weight")
    parent = is_op("nn.conv2d")(wildcard(), wildcard())
    path = wildcard().has_attr({"TOpPattern": 0})(wildcard())
    pattern = dominates(parent, path, is_op("add")(wildcard(), wildcard()))
    assert isinstance(pattern, DominatorPattern)
    conv = relay.nn.conv2d(inp, weight)
    diamond = relay.nn.relu(relay.nn.relu(conv)) + relay.nn.leaky_relu(conv, alpha=0)
    assert pattern.match(diamond)
    other = relay.nn.conv2d(relay.var("i2"), relay.var("w2"))
    fake = relay.nn.relu(conv) + relay.nn.leaky_relu(other, alpha=0)  # two parents
    assert not pattern.match(fake)
    on_input = relay.nn.relu(inp) + relay.nn.leaky_relu(conv, alpha=0)  # a path misses it
    assert not pattern.match(on_input)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="op name"):
        is_op(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="dict"):
        has_attr(["Composite"])  # type: ignore[arg-type]


def test_an_op_the_table_lacks_makes_a_pattern_matching_nothing():
    x = relay.var("x")
    pattern = is_op("vendor.dequantize")(wildcard(), wildcard(), wildcard())
    assert not pattern.match(relay.add(x, x))
