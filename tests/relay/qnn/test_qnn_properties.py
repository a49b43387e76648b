"""Property tests: hypothesis-drawn scales, zero points, roundings and shapes; the shim's
``relay.qnn.op`` result against the NumPy integer reference, bit for bit.

Each example builds a graph (about a second), so these run only when selected:
``pytest -m quantized tests/relay/qnn`` (the ci profile draws a handful per property).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from hypothesis import given, settings
from hypothesis import strategies as st

from compile_engine_compat import relay
from compile_engine_compat.testing import qnn_references as ref
from compile_engine_compat.tvm_legacy import graph_executor

pytestmark = [pytest.mark.property, pytest.mark.quantized]

scales = st.floats(0.0001220703125, 4.0, allow_nan=False, width=32)
zero_points = st.integers(-20, 20)


def examples(factor: float) -> int:
    """The profile's max_examples scaled by the property's cost (a build per example)."""
    return max(2, int(settings().max_examples * factor))


def _run(out: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
    params = relay.analysis.free_vars(out)
    lib = relay.build(tvm.IRModule.from_expr(relay.Function(params, out)), "llvm")
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(**inputs)
    module.run()
    return module.get_output(0).numpy()


def _c(value: Any, dtype: str) -> Any:
    return relay.const(value, dtype)


@settings(max_examples=examples(0.2), deadline=None)
@given(
    in_scale=scales,
    out_scale=scales,
    in_zp=zero_points,
    out_zp=zero_points,
    rounding=st.sampled_from(["UPWARD", "TONEAREST"]),
    compute=st.sampled_from(["int64", "float32", "float64"]),
    out_dtype=st.sampled_from(["int8", "uint8", "int16", "int32"]),
    seed=st.integers(0, 2**16),
)
def test_requantize_is_the_reference(
    in_scale, out_scale, in_zp, out_zp, rounding, compute, out_dtype, seed
):
    data = np.random.default_rng(seed).integers(-3000, 3000, (3, 17)).astype("int32")
    x = relay.var("x", shape=data.shape, dtype="int32")
    out = relay.qnn.op.requantize(
        x, _c(in_scale, "float32"), _c(in_zp, "int32"), _c(out_scale, "float32"),
        _c(out_zp, "int32"), rounding=rounding, compute_dtype=compute, out_dtype=out_dtype,
    )  # fmt: skip
    expected = ref.requantize(
        data, in_scale, in_zp, out_scale, out_zp, rounding=rounding, compute_dtype=compute,
        out_dtype=out_dtype,
    )  # fmt: skip
    np.testing.assert_array_equal(_run(out, {"x": data}), expected)


@settings(max_examples=examples(0.1), deadline=None)
@given(
    scales_=st.lists(scales, min_size=4, max_size=4),
    out_scale=scales,
    rounding=st.sampled_from(["UPWARD", "TONEAREST"]),
    seed=st.integers(0, 2**16),
)
def test_per_channel_requantize_is_the_reference(scales_, out_scale, rounding, seed):
    data = np.random.default_rng(seed).integers(-5000, 5000, (2, 4, 3)).astype("int32")
    x = relay.var("x", shape=data.shape, dtype="int32")
    out = relay.qnn.op.requantize(
        x, relay.const(np.array(scales_, "float32")), _c(0, "int32"), _c(out_scale, "float32"),
        _c(1, "int32"), axis=1, rounding=rounding, compute_dtype="int64",
    )  # fmt: skip
    expected = ref.requantize(
        data, scales_, 0, out_scale, 1, axis=1, rounding=rounding, compute_dtype="int64"
    )
    np.testing.assert_array_equal(_run(out, {"x": data}), expected)


@settings(max_examples=examples(0.1), deadline=None)
@given(
    scale=scales,
    zp=zero_points,
    dtype=st.sampled_from(["int8", "uint8"]),
    seed=st.integers(0, 2**16),
)
def test_quantize_then_dequantize_is_the_reference(scale, zp, dtype, seed):
    data = np.random.default_rng(seed).uniform(-300 * scale, 300 * scale, (5, 7)).astype("float32")
    x = relay.var("x", shape=data.shape)
    q = relay.qnn.op.quantize(x, _c(scale, "float32"), _c(zp, "int32"), out_dtype=dtype)
    out = relay.qnn.op.dequantize(q, _c(scale, "float32"), _c(zp, "int32"))
    expected = ref.dequantize(ref.quantize(data, scale, zp, dtype), scale, zp)
    np.testing.assert_array_equal(_run(out, {"x": data}), expected)


@settings(max_examples=examples(0.1), deadline=None)
@given(
    data_zp=zero_points,
    kernel_zp=zero_points,
    stride=st.integers(1, 2),
    pad=st.integers(0, 2),
    dtype=st.sampled_from(["int8", "uint8"]),
    seed=st.integers(0, 2**16),
)
def test_conv2d_is_the_reference(data_zp, kernel_zp, stride, pad, dtype, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    data = rng.integers(info.min, info.max + 1, (1, 3, 6, 6)).astype(dtype)
    weight = rng.integers(-128, 128, (4, 3, 3, 3)).astype("int8")
    x = relay.var("x", shape=data.shape, dtype=dtype)
    out = relay.qnn.op.conv2d(
        x, relay.const(weight), _c(data_zp, "int32"), _c(kernel_zp, "int32"), _c(0.1, "float32"),
        _c(0.1, "float32"), kernel_size=(3, 3), channels=4, strides=(stride, stride),
        padding=(pad, pad),
    )  # fmt: skip
    expected = ref.conv2d_nchw(data, weight, data_zp, kernel_zp, (stride, stride), (pad, pad))
    np.testing.assert_array_equal(_run(out, {"x": data}), expected)


@settings(max_examples=examples(0.1), deadline=None)
@given(data_zp=zero_points, kernel_zp=zero_points, seed=st.integers(0, 2**16))
def test_dense_is_the_reference(data_zp, kernel_zp, seed):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, (3, 20)).astype("uint8")
    weight = rng.integers(-128, 128, (6, 20)).astype("int8")
    x = relay.var("x", shape=data.shape, dtype="uint8")
    out = relay.qnn.op.dense(
        x, relay.const(weight), _c(data_zp, "int32"), _c(kernel_zp, "int32"), _c(0.1, "float32"),
        _c(0.1, "float32"), units=6,
    )  # fmt: skip
    np.testing.assert_array_equal(
        _run(out, {"x": data}), ref.dense(data, weight, data_zp, kernel_zp)
    )


@settings(max_examples=examples(0.1), deadline=None)
@given(
    data_zp=zero_points,
    kernel_zps=st.lists(zero_points, min_size=3, max_size=3),
    pad=st.integers(0, 1),
    seed=st.integers(0, 2**16),
)
def test_depthwise_conv2d_with_per_channel_kernel_zero_points_is_the_reference(
    data_zp, kernel_zps, pad, seed
):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, (1, 3, 5, 5)).astype("uint8")
    weight = rng.integers(-128, 128, (3, 1, 3, 3)).astype("int8")
    x = relay.var("x", shape=data.shape, dtype="uint8")
    out = relay.qnn.op.conv2d(
        x, relay.const(weight), _c(data_zp, "int32"), relay.const(np.array(kernel_zps, "int32")),
        _c(0.1, "float32"), relay.const(np.full(3, 0.1, "float32")), kernel_size=(3, 3),
        channels=3, groups=3, padding=(pad, pad),
    )  # fmt: skip
    expected = np.concatenate(
        [
            ref.conv2d_nchw(data[:, c : c + 1], weight[c : c + 1], data_zp, zp, (1, 1), (pad, pad))
            for c, zp in enumerate(kernel_zps)
        ],
        axis=1,
    )
    np.testing.assert_array_equal(_run(out, {"x": data}), expected)


@settings(max_examples=examples(0.1), deadline=None)
@given(x_zp=zero_points, y_zp=zero_points, seed=st.integers(0, 2**16))
def test_batch_matmul_is_the_reference(x_zp, y_zp, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-128, 128, (2, 3, 8)).astype("int8")
    b = rng.integers(-128, 128, (2, 5, 8)).astype("int8")
    x, y = relay.var("x", shape=a.shape, dtype="int8"), relay.var("y", shape=b.shape, dtype="int8")
    out = relay.qnn.op.batch_matmul(
        x, y, _c(x_zp, "int32"), _c(y_zp, "int32"), _c(0.1, "float32"), _c(0.1, "float32")
    )
    expected = np.einsum("bmk,bnk->bmn", a.astype("int64") - x_zp, b.astype("int64") - y_zp)
    np.testing.assert_array_equal(_run(out, {"x": a, "y": b}), expected.astype("int32"))
