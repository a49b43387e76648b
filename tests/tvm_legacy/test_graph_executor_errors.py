"""GraphModule and create_executor errors, with TVM 0.19's behaviour where it had one."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy import graph_executor

X = np.ones((2, 3), "float32")
W = np.full((2, 3), 2.0, "float32")


def _module():
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 3))
    return tvm.IRModule.from_expr(relay.Function([x, w], relay.multiply(x, w)))


@pytest.fixture
def bound():
    """A graph module whose "w" relay.build bound (so it is not a graph input)."""
    lib = relay.build(_module(), target="llvm", params={"w": W})
    return graph_executor.GraphModule(lib["default"](tvm.cpu()))


def test_set_input_of_a_bound_param_raises_as_tvm_019(bound):
    with pytest.raises(RuntimeError, match=r"^Could not find 'w' in graph's inputs"):
        bound.set_input("w", W)


def test_set_input_keywords_skip_names_the_graph_lacks(bound):
    bound.set_input(x=X, w=W, unknown=X)
    bound.run()
    np.testing.assert_array_equal(bound.get_output(0).numpy(), X * W)


def test_set_input_copies_into_the_graph_input_as_tvm_019(bound):
    source = X.copy()
    bound.set_input("x", source)
    source[:] = 5.0  # the graph holds a copy, not the caller's array
    bound.run()
    np.testing.assert_array_equal(bound.get_output(0).numpy(), X * W)
    first = bound.get_input("x")
    given = tvm.runtime.tensor(X * 3)
    bound.set_input("x", given)  # the same buffer again: copied in, neither replaced nor aliased
    assert bound.get_input("x") is first and bound.get_input("x") is not given
    bound.run()
    np.testing.assert_array_equal(bound.get_output(0).numpy(), X * 3 * W)
    with pytest.raises(ValueError, match=r"shape do not match .*\(4, 3\) vs \(2, 3\)"):
        bound.set_input("x", np.ones((4, 3), "float32"))  # TVM 0.19's copyfrom refused it too


def test_set_input_unknown_name_or_index(bound):
    with pytest.raises(RuntimeError, match="Could not find 'nope'"):
        bound.set_input("nope", X)
    with pytest.raises(RuntimeError, match="Could not find '5'"):
        bound.set_input(5, X)
    with pytest.raises(TypeError, match="name or an int index"):
        bound.set_input(1.5, X)


def test_get_output_before_run_out_of_range_and_negative(bound):
    with pytest.raises(RuntimeError, match=r"before run\(\)"):
        bound.get_output(0)
    with pytest.raises(RuntimeError, match=r"before run\(\)"):
        bound.get_num_outputs()
    bound.set_input("x", X)
    bound.run()
    with pytest.raises(IndexError, match="1 output"):
        bound.get_output(1)
    with pytest.raises(IndexError, match=r"get_output\(-1\)"):
        bound.get_output(-1)


def test_an_input_never_set_is_the_buffer_allocated_up_front_as_tvm_019():
    lib = relay.build(_module(), target="llvm")
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("x", X)
    module.run()  # "w" was never set: its buffer (zeros here) is read, as TVM 0.19 read it
    np.testing.assert_array_equal(module.get_output(0).numpy(), np.zeros_like(X))
    assert module.get_input("w").shape == (2, 3)


def test_create_executor_missing_or_extra_argument():
    run = relay.create_executor("graph", mod=_module(), device=tvm.cpu(), target="llvm").evaluate()
    with pytest.raises(TypeError, match=r"missing argument\(s\) \['w'\]"):
        run(X)
    with pytest.raises(TypeError, match="takes 2 arguments, got 3"):
        run(X, W, W)
    np.testing.assert_array_equal(run(X, w=W).numpy(), X * W)


@pytest.mark.parametrize("shape", [(-1, 3), (2, -5)])
def test_relay_var_refuses_a_negative_dimension(shape):
    with pytest.raises(ValueError, match=r"relay\.Any\(\)"):
        relay.var("x", shape=shape)


@pytest.mark.parametrize("shape", [(2.5, 3), ("2", 3), (True, 3)])
def test_relay_var_refuses_a_non_integer_dimension(shape):
    with pytest.raises(TypeError, match="shape entry"):
        relay.var("x", shape=shape)
