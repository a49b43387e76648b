"""The dyn.* ops whose result shape the run-time values decide (relay/_impl/dyn_shapes.py):
topk with a tensor k, pad with a tensor pad_width, strided_slice with tensor bounds, squeeze and
expand_dims with a tensor axis, upsampling with tensor scales; one build, each result against
NumPy."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay

RNG = np.random.default_rng(37)
DATA = RNG.standard_normal((3, 4, 3)).astype("float32")
IMAGE = RNG.standard_normal((1, 2, 3, 2)).astype("float32")


@pytest.fixture(scope="module")
def results():
    x = relay.var("x", shape=DATA.shape)
    image = relay.var("image", shape=IMAGE.shape)
    k = relay.var("k", shape=(1,), dtype="float32")  # Relay cast a float k to an int
    widths = relay.var("widths", shape=(3, 2), dtype="int64")
    fill = relay.var("fill", shape=(), dtype="float32")
    begin, end, strides = (relay.var(n, shape=(3,), dtype="int32") for n in "bes")
    axis = relay.var("axis", shape=(1,), dtype="int64")
    scale_h = relay.var("scale_h", shape=(), dtype="float32")
    where = relay.var("where", shape=(), dtype="int64")
    flat = relay.reshape(x, (12, 3))
    outs = [
        relay.topk(flat, k, axis=0, ret_type="both", is_ascend=False, dtype="int64").astuple(),
        relay.topk(flat, k, axis=0, ret_type="indices", is_ascend=True, dtype="int32"),
        relay.nn.pad(x, widths, fill),
        relay.strided_slice(x, begin, end, strides),
        relay.strided_slice(x, begin, end, slice_mode="size"),
        relay.squeeze(relay.expand_dims(x, 1), axis),
        relay.nn.upsampling(image, scale_h, 2.0),
        relay.expand_dims(x, where, num_newaxis=2),
    ]
    params = [x, image, k, widths, fill, begin, end, strides, axis, scale_h, where]
    func = relay.Function(params, relay.Tuple(outs))
    mod = tvm.IRModule.from_expr(func)
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    values = [
        np.array([2], "float32"),
        np.array([[1, 0], [0, 2], [2, 1]], "int64"),
        np.array(7.5, "float32"),
        np.array([2, -1, 0], "int32"),
        np.array([0, -5, 3], "int32"),
        np.array([-1, -2, 1], "int32"),
        np.array([1], "int64"),
        np.array(3.0, "float32"),
        np.array(-1, "int64"),
    ]
    return run(DATA, IMAGE, *values)


def test_topk_reads_k_when_the_function_runs(results):
    flat = DATA.reshape(12, 3)
    order = np.argsort(-flat, axis=0)[:2]
    np.testing.assert_array_equal(results[0][1].numpy(), order)
    np.testing.assert_allclose(results[0][0].numpy(), np.take_along_axis(flat, order, 0))
    np.testing.assert_array_equal(results[1].numpy(), np.argsort(flat, axis=0)[:2])


def test_pad_reads_its_widths_and_value(results):
    expected = np.pad(DATA, [[1, 0], [0, 2], [2, 1]], constant_values=7.5)
    np.testing.assert_array_equal(results[2].numpy(), expected)


def test_strided_slice_follows_pythons_slicing(results):
    np.testing.assert_array_equal(results[3].numpy(), DATA[2:0:-1, -1:-5:-2, 0:3:1])
    # slice_mode="size": end holds lengths, -1 to the end, strides ignored
    np.testing.assert_array_equal(results[4].numpy(), DATA[2:2, 3:, 0:3])


def test_squeeze_expand_dims_and_upsampling_shapes_come_from_the_values(results):
    np.testing.assert_array_equal(results[5].numpy(), DATA)
    np.testing.assert_array_equal(results[7].numpy(), DATA.reshape(3, 4, 3, 1, 1))
    np.testing.assert_array_equal(results[6].numpy(), IMAGE.repeat(3, 2).repeat(2, 3))


def test_the_results_are_typed_with_any_dimensions():
    k = relay.var("k", shape=(), dtype="int32")
    out = relay.topk(relay.var("x", shape=(5, 6)), k, axis=1, ret_type="values")
    assert out.op.name == "dyn.topk"
    typed = relay.testing.run_infer_type(out).checked_type
    assert typed == relay.TensorType((5, relay.Any()), "float32")


def test_axes_with_tensor_bounds_are_refused_when_typed():
    bound = relay.var("b", shape=(1,), dtype="int64")
    with pytest.raises(NotImplementedError, match="axes with tensor-valued bounds"):
        sliced = relay.strided_slice(relay.var("x", shape=(4, 4)), bound, bound, axes=[1])
        relay.testing.run_infer_type(sliced)
