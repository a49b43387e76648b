"""Relay's structural equality on the front end's graph (tvm.ir.structural_equal, installed)."""

from __future__ import annotations

import numpy as np
import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import (
    assert_structural_equal,
    relay_equal,
    structural_equal,
)


def test_bound_variables_map_free_ones_by_identity_unless_mapped():
    x, y = relay.var("x"), relay.var("y")
    a, b = relay.var("a"), relay.var("b")
    assert relay_equal(relay.Function([a], a + x), relay.Function([b], b + x))
    assert not relay_equal(x + x, y + y)
    assert relay_equal(x + x, y + y, map_free_vars=True)
    assert not relay_equal(x + y, y + y, map_free_vars=True)  # x and y cannot both be y


def test_attributes_constants_and_sharing_count():
    x = relay.var("x")
    f = relay.Function([x], x)
    assert not relay_equal(f.with_attr("Composite", "a"), f.with_attr("Composite", "b"))
    assert relay_equal(relay.const(np.ones(2, "float32")), relay.const(np.ones(2, "float32")))
    assert not relay_equal(relay.const(1), relay.const(1.0))
    assert not relay_equal(relay.nn.leaky_relu(x, 0.1), relay.nn.leaky_relu(x, 0.2))
    shared = relay.nn.relu(x)
    assert not relay_equal(shared + shared, relay.nn.relu(x) + relay.nn.relu(x))


def test_a_failed_assertion_shows_both_sides():
    x = relay.var("x", shape=(2,))
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        assert_structural_equal(relay.nn.relu(x), relay.tanh(x))


def test_a_relax_pass_result_compares_with_relay_whatever_its_bindings():
    """FoldConstant (Relax's) returns the folded constant directly; the Relay function the test
    expects binds it in a dataflow block. One graph: equal. A different constant: unequal."""
    import tvm

    data = np.array([[1, 2, 3]], "float32")
    before = relay.Function([], relay.concatenate((relay.const(data), relay.const(data)), 0))
    folded = relay.transform.FoldConstant()(tvm.IRModule.from_expr(before))["main"]
    expected = relay.Function([], relay.const(np.concatenate((data, data))))
    assert structural_equal(folded, expected)
    assert_structural_equal(folded, expected)
    assert not structural_equal(folded, relay.Function([], relay.const(data)))
    with pytest.raises(ValueError, match="StructuralEqual check failed"):
        assert_structural_equal(folded, relay.Function([], relay.const(data + data)))


def test_bodies_of_two_modules_match_their_free_variables_by_name():
    import tvm

    x, y = relay.var("x", shape=(2,)), relay.var("y", shape=(2,))
    # two modules of one Relay variable: their Relax parameters are two variables
    left = tvm.IRModule.from_expr(relay.Function([x, y], relay.add(x, y)))["main"].body
    right = tvm.IRModule.from_expr(relay.Function([x, y], relay.add(x, y) * relay.const(1.0)))
    same = tvm.IRModule.from_expr(relay.Function([y, x], relay.add(x, y)))["main"].body
    swapped = tvm.IRModule.from_expr(relay.Function([x, y], relay.add(y, x)))["main"].body
    assert structural_equal(left, same)
    assert not structural_equal(left, swapped)
    assert not structural_equal(left, right["main"].body)
