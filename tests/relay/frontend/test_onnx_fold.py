"""relay.frontend.onnx_fold: constant ONNX subgraphs folded before Relax's importer, as TVM
0.19's importer folded them while converting."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend.onnx_fold import fold_constant_nodes


def _const(name, array):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(array, name))


def _computed_pad_model():
    """``F.pad`` as the TorchScript exporter spells it: the pads computed from constants and
    the input's shape (``Shape``, ``Sub``, ``ConstantOfShape``, ``Concat``)."""
    zero = numpy_helper.from_array(np.array([0], "int64"))
    nodes = [
        _const("one", np.array([1], "int64")),
        _const("two", np.array([2], "int64")),
        helper.make_node("Shape", ["x"], ["last"], start=2),  # [3]
        helper.make_node("Sub", ["last", "one"], ["zeros_len"]),  # [2]
        helper.make_node("ConstantOfShape", ["zeros_len"], ["zeros"], value=zero),
        helper.make_node("Concat", ["zeros", "two", "zeros", "two"], ["pads"], axis=0),
        helper.make_node("Pad", ["x", "pads"], ["y"], mode="constant"),
    ]
    graph = helper.make_graph(
        nodes,
        "computed_pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 7])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_pads_computed_from_constants_fold_and_the_model_runs():
    model = _computed_pad_model()
    folded = fold_constant_nodes(model, {"x": (1, 2, 3)})
    assert [node.op_type for node in folded.graph.node] == ["Constant"] * 6 + ["Pad"]
    assert model.graph.node[2].op_type == "Shape"  # the caller's model is not changed

    mod, params = relay.frontend.from_onnx(model, {"x": (1, 2, 3)})
    data = np.arange(6, dtype="float32").reshape(1, 2, 3)
    result = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(data, **params)
    np.testing.assert_array_equal(result.numpy(), np.pad(data, [(0, 0), (0, 0), (2, 2)]))


def test_initializers_are_weights_and_are_never_folded_into():
    weight = numpy_helper.from_array(np.ones((3, 2), "float32"), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["w"], ["wt"]),
            helper.make_node("MatMul", ["x", "wt"], ["y"]),
        ],
        "weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert fold_constant_nodes(model, {"x": (1, 2)}) is model


def test_the_shape_of_a_dynamic_input_stays_computed():
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["y"])],
        "dynamic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert fold_constant_nodes(model, None) is model
    folded = fold_constant_nodes(model, {"x": (4, 2)})
    value = numpy_helper.to_array(folded.graph.node[0].attribute[0].t)
    np.testing.assert_array_equal(value, [4, 2])
