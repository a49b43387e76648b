"""relay.frontend.onnx_random: ONNX's random ops on TVM 0.19's Threefry generator."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

from onnx import TensorProto, helper

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import threefry
from compile_engine_compat.relay.frontend.onnx_random import RandomOpError


def _unit_floats(bits):
    """TVM 0.19's float32 in [0, 1) from Threefry bits, in NumPy (the reference)."""
    mantissa = bits.astype("uint32") >> np.uint32(9)
    return (mantissa | np.uint32(127 << 23)).view("float32") - np.float32(1.0)


def _model(nodes, inputs, outputs):
    info = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes,
        "random",
        [info(name, code, shape) for name, code, shape in inputs],
        [info(name, code, None) for name, code in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_random_ops_draw_from_the_seed_as_tvm_019():
    # One model, one build: every converter, checked against its exact or bounded result.
    nodes = [
        helper.make_node("RandomUniform", [], ["u"], shape=[6], low=-2.0, high=2.0, seed=5.0),
        helper.make_node("RandomNormalLike", ["x"], ["n"], mean=3.0, scale=0.5, seed=2.0),
        helper.make_node("Bernoulli", ["p"], ["b"], dtype=TensorProto.INT32),
        helper.make_node("Multinomial", ["logits"], ["m"], sample_size=5, seed=1.0),
    ]
    model = _model(
        nodes,
        [("x", TensorProto.DOUBLE, [400]), ("p", TensorProto.FLOAT, [6]),
         ("logits", TensorProto.FLOAT, [2, 2])],
        [("u", TensorProto.FLOAT), ("n", TensorProto.DOUBLE), ("b", TensorProto.INT32),
         ("m", TensorProto.INT32)],
    )  # fmt: skip
    feeds = {
        "x": np.zeros(400, "float64"),
        "p": np.array([0, 1, 1, 0, 1, 0], "float32"),
        "logits": np.array([[-30.0, 0.0], [0.0, -30.0]], "float32"),
    }
    mod, _ = relay.frontend.from_onnx(model, {name: v.shape for name, v in feeds.items()})
    run = relay.create_executor("vm", mod=mod, target="llvm").evaluate()
    uniform, normal, bernoulli, multinomial = (value.numpy() for value in run(**feeds))

    _, bits = threefry.generate_bits(threefry.key_words(5), (6,))
    np.testing.assert_allclose(uniform, _unit_floats(bits) * 4.0 - 2.0, rtol=1e-6)
    assert normal.dtype == "float64" and normal.shape == (400,)
    assert abs(normal.mean() - 3.0) < 0.15 and abs(normal.std() - 0.5) < 0.1
    np.testing.assert_array_equal(bernoulli, feeds["p"].astype("int32"))  # p of 0 or 1
    # Logits (ONNX's meaning): softmax([-30, 0]) draws index 1, nearly always.
    assert multinomial.dtype == "int32"
    np.testing.assert_array_equal(multinomial, [[1] * 5, [0] * 5])


def test_an_integer_random_dtype_is_refused_by_name():
    node = helper.make_node("RandomUniform", [], ["u"], shape=[2], dtype=TensorProto.INT32)
    model = _model([node], [], [("u", TensorProto.INT32)])
    with pytest.raises(RandomOpError, match="RandomUniform generates float32 or float64"):
        relay.frontend.from_onnx(model, {})
