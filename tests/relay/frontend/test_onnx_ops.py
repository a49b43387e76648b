"""relay.frontend.onnx_ops: the float ONNX ops converted unlike (or missing from) Relax's
importer, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime
from _relay_models import onnxruntime_output
from onnx import TensorProto, helper

from compile_engine_compat import relay


def _model(node, inputs, output, opset):
    graph = helper.make_graph(
        [node],
        node.op_type.lower(),
        [helper.make_tensor_value_info(name, code, shape) for name, code, shape in inputs],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, output)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(model, feeds):
    shapes = {name: value.shape for name, value in feeds.items()}
    mod, params = relay.frontend.from_onnx(model, shapes, freeze_params=False)
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    return run(**feeds, **params).numpy()


def test_scatter_wraps_negative_indices_as_tvm_019():
    # Unwrapped, -1 and -3 were written before the output's first element (heap corruption).
    node = helper.make_node("Scatter", ["x", "i", "u"], ["y"], axis=-1)
    model = _model(
        node,
        [("x", TensorProto.FLOAT, [3, 3, 3]), ("i", TensorProto.INT32, [1, 1, 2]),
         ("u", TensorProto.FLOAT, [1, 1, 2])],
        [3, 3, 3],
        opset=9,
    )  # fmt: skip
    rng = np.random.default_rng(7)
    feeds = {
        "x": rng.random((3, 3, 3), dtype="float32"),
        "i": np.array([[[-1, -3]]], "int32"),
        "u": np.array([[[10.0, 20.0]]], "float32"),
    }
    result = _run(model, feeds)
    np.testing.assert_array_equal(result, onnxruntime_output(model, feeds))
    assert result[0, 0, 2] == 10.0 and result[0, 0, 0] == 20.0


def test_celu_is_converted():
    model = _model(
        helper.make_node("Celu", ["x"], ["y"], alpha=0.3), [("x", TensorProto.FLOAT, [5])], [5], 13
    )
    feeds = {"x": np.array([-2.0, -0.1, 0.0, 0.4, 1.5], "float32")}
    np.testing.assert_allclose(_run(model, feeds), onnxruntime_output(model, feeds), rtol=1e-6)


def test_reshape_to_a_shape_given_at_run_time_follows_onnx_zero_and_minus_one():
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    model = _model(
        node, [("x", TensorProto.FLOAT, [2, 3, 4]), ("shape", TensorProto.INT64, [3])], None, 13
    )
    feeds = {
        "x": np.arange(24, dtype="float32").reshape(2, 3, 4),
        "shape": np.array([0, -1, 2], "int64"),  # 0: the input's dim, -1: the rest
    }
    result = _run(model, feeds)
    assert result.shape == (2, 6, 2)
    np.testing.assert_array_equal(result, onnxruntime_output(model, feeds))


def test_reverse_sequence_linear_regressor_and_topk_of_a_run_time_k_are_converted():
    # One model, one build: ReverseSequence (time axis 1), ai.onnx.ml's LinearRegressor, and
    # TopK (smallest first) with K a graph input.
    nodes = [
        helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=1, batch_axis=0),
        helper.make_node("LinearRegressor", ["f"], ["z"], domain="ai.onnx.ml", targets=2,
                         coefficients=[1.0, -2.0, 0.5, 3.0, 0.25, -1.0], intercepts=[0.5, -0.5]),
        helper.make_node("TopK", ["t", "k"], ["values", "indices"], axis=0, largest=0),
        helper.make_node("Resize", ["t4", "", "no_scales", "sizes"], ["r"], mode="nearest"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes,
        "reverse_and_regress",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3]),
         helper.make_tensor_value_info("lens", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("f", TensorProto.FLOAT, [5, 3]),
         helper.make_tensor_value_info("t", TensorProto.FLOAT, [6, 2]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("t4", TensorProto.FLOAT, [1, 1, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 3]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [5, 2]),
         helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 1, 4, 6])],
        initializer=[helper.make_tensor("no_scales", TensorProto.FLOAT, [0], []),
                     helper.make_tensor("sizes", TensorProto.INT64, [4], [1, 1, 4, 6])],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("ai.onnx.ml", 1)]
    )
    rng = np.random.default_rng(5)
    feeds = {
        "x": rng.random((2, 4, 3), dtype="float32"),
        "lens": np.array([3, 1], "int64"),
        "f": rng.random((5, 3), dtype="float32"),
        "t": rng.permutation(12).astype("float32").reshape(6, 2),
        "k": np.array([4], "int64"),
        "t4": rng.random((1, 1, 2, 2), dtype="float32"),
    }
    mod, _ = relay.frontend.from_onnx(model, {name: v.shape for name, v in feeds.items()})
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(**feeds)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    want = session.run(None, feeds)
    np.testing.assert_array_equal(got[0].numpy(), want[0])
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=1e-6)
    assert got[2].numpy().shape == (4, 2)  # K = 4, known only when it runs
    np.testing.assert_array_equal(got[2].numpy(), want[2])
    np.testing.assert_array_equal(got[3].numpy(), want[3])
    np.testing.assert_array_equal(got[4].numpy(), want[4])  # Resize: empty scales, sizes given


def test_opset_10_resize_takes_its_scales_as_second_input():
    node = helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest")
    model = _model(node, [("x", TensorProto.FLOAT, [1, 1, 2, 3])], [1, 1, 4, 6], opset=10)
    model.graph.initializer.append(
        helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])
    )
    feeds = {"x": np.arange(6, dtype="float32").reshape(1, 1, 2, 3)}
    np.testing.assert_array_equal(_run(model, feeds), onnxruntime_output(model, feeds))


def test_unidirectional_attention_with_past_matches_onnxruntime():
    # com.microsoft Attention: Relax's converter refuses unidirectional (even 0) and past.
    batch, seq, hidden, heads, past = 1, 3, 4, 2, 2
    node = helper.make_node("Attention", ["x", "w", "b", "", "past"], ["y", "present"],
                            domain="com.microsoft", num_heads=heads, unidirectional=1)  # fmt: skip
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node],
        "attention",
        [info("x", TensorProto.FLOAT, [batch, seq, hidden]),
         info("w", TensorProto.FLOAT, [hidden, 3 * hidden]),
         info("b", TensorProto.FLOAT, [3 * hidden]),
         info("past", TensorProto.FLOAT, [2, batch, heads, past, hidden // heads])],
        [helper.make_empty_tensor_value_info("y"), helper.make_empty_tensor_value_info("present")],
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]
    )
    rng = np.random.default_rng(2)
    feeds = {
        "x": rng.standard_normal((batch, seq, hidden), dtype="float32"),
        "w": rng.standard_normal((hidden, 3 * hidden), dtype="float32"),
        "b": rng.standard_normal(3 * hidden, dtype="float32"),
        "past": rng.standard_normal((2, batch, heads, past, hidden // heads), dtype="float32"),
    }
    mod, _ = relay.frontend.from_onnx(model, {name: v.shape for name, v in feeds.items()})
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(**feeds)
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    for result, want in zip(got, session.run(None, feeds), strict=True):
        np.testing.assert_allclose(result.numpy(), want, rtol=1e-5, atol=1e-5)
