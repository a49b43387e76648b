"""rewrite/DFPatternCallback and partition on the front end's Relay graph."""

from __future__ import annotations

import numpy as np
import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.dataflow_pattern import (
    DFPatternCallback,
    is_constant,
    is_op,
    partition,
    rewrite,
    wildcard,
)


class _DoubleNegative(DFPatternCallback):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.x = wildcard()
        self.pattern = is_op("negative")(is_op("negative")(self.x))

    def callback(self, pre, post, node_map):
        return node_map[self.x][0]


class _DropLastField(DFPatternCallback):
    """One field less per round: concatenate((a, b, c)) -> concatenate((a, b)) -> ... -> a."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.pattern = is_op("concatenate")(wildcard())

    def callback(self, pre, post, node_map):
        fields = post.args[0].fields[:-1]
        return relay.concatenate(fields, axis=0) if len(fields) > 1 else fields[0]


def test_rewrite_runs_to_a_fixed_point_unless_rewrite_once():
    x, y, z = (relay.var(n, shape=(2,)) for n in "xyz")
    graph = relay.concatenate([x, y, z], axis=0)
    assert rewrite(_DropLastField(), graph) is x
    once = rewrite(_DropLastField(rewrite_once=True), graph)
    assert relay_equal(once, relay.concatenate([x, y], axis=0))


def test_one_round_rewrites_every_match():
    x = relay.var("x", shape=(3,))
    four = relay.negative(relay.negative(relay.negative(relay.negative(x))))
    assert rewrite(_DoubleNegative(rewrite_once=True), four) is x


def test_nothing_matched_returns_the_same_graph():
    x = relay.var("x", shape=(3,))
    graph = relay.nn.relu(x)
    assert rewrite(_DoubleNegative(), graph) is graph


def test_require_type_gives_the_callback_checked_types():
    seen = []

    class Typed(DFPatternCallback):
        def __init__(self):
            super().__init__(require_type=True)
            self.pattern = is_op("nn.relu")(wildcard())

        def callback(self, pre, post, node_map):
            seen.append(pre.checked_type.dtype)
            return post

    rewrite(Typed(), relay.nn.relu(relay.var("x", shape=(2,), dtype="float16")))
    assert seen == ["float16"]


def test_a_callback_returning_no_expression_is_refused():
    class Broken(DFPatternCallback):
        def __init__(self):
            super().__init__()
            self.pattern = is_op("nn.relu")(wildcard())

        def callback(self, pre, post, node_map):
            return 42

    with pytest.raises(TypeError, match=r"Broken\.callback returned 42"):
        rewrite(Broken(), relay.nn.relu(relay.var("x")))


def test_the_relax_form_of_a_relay_function_is_rewritten_as_its_relay_graph():
    import tvm
    from tvm import relax

    x = relay.var("x", shape=(3,))
    main = tvm.IRModule.from_expr(relay.Function([x], relay.negative(relay.negative(x))))["main"]
    assert isinstance(main, relax.Function)  # mod["main"]: Relax, built from a Relay function
    out = rewrite(_DoubleNegative(), main)
    assert isinstance(out, relay.Function) and out.body is out.params[0]
    bb_x = relax.Var("x", relax.TensorType([3], "float32"))
    with pytest.raises(TypeError, match=r"relax\.dpl\.rewrite_call"):
        rewrite(_DoubleNegative(), relax.Function([bb_x], bb_x))


def test_a_callback_without_pattern_is_refused():
    with pytest.raises(TypeError, match="no pattern"):
        rewrite(DFPatternCallback(), relay.var("x"))


def test_partition_makes_functions_of_the_inputs_constants_stay_inside():
    x = relay.var("x", shape=(2,))
    graph = relay.nn.relu(x + relay.const(np.ones(2, "float32")))
    pattern = is_op("nn.relu")(is_op("add")(wildcard(), is_constant()))
    out = partition(pattern, graph, {"Composite": "acc.add_relu"})
    assert out.args == [x]
    func = out.op
    assert func.attrs["Composite"] == "acc.add_relu"
    assert func.attrs["PartitionedFromPattern"] == "add_nn.relu_"
    assert len(func.params) == 1


def test_partition_leaves_a_match_whose_inner_node_is_used_outside():
    x, w = relay.var("x"), relay.var("w")
    conv = relay.nn.conv2d(x, w)
    graph = relay.nn.relu(conv) + conv
    assert partition(is_op("nn.relu")(is_op("nn.conv2d")(wildcard(), wildcard())), graph) is graph


def test_partition_check_can_reject_a_match():
    x = relay.var("x")
    graph = relay.nn.relu(x)
    pattern = is_op("nn.relu")(wildcard())
    assert partition(pattern, graph, check=lambda pre: False) is graph
