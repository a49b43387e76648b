"""onnxruntime's QAttention through relay.frontend.from_onnx -> relay.build -> GraphModule,
against onnxruntime on the same graph (two nodes, one build shared by the module)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from compile_engine_compat import relay  # noqa: E402
from compile_engine_compat.relay.frontend.onnx_integer import QuantizedOpError  # noqa: E402
from compile_engine_compat.tvm_legacy import graph_executor  # noqa: E402

RNG = np.random.default_rng(11)
BATCH, SEQ, HIDDEN, HEADS, HEAD_SIZE, PAST = 2, 3, 6, 2, 4, 2
OUT = HEADS * HEAD_SIZE
TOTAL = PAST + SEQ


def _value(name: str, dtype: int, shape: list[int]) -> Any:
    return helper.make_tensor_value_info(name, dtype, shape)


def _model(**attributes: Any) -> Any:
    """Two QAttention nodes on the same input and weights: causal with ``past``, zero points and
    a 0/1 mask; bidirectional with end positions and no zero points."""
    f32, u8, i32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT32
    ms = "com.microsoft"
    nodes = [
        helper.make_node("QAttention", ["x", "w", "b", "xs", "ws", "mask", "xz", "wz", "past"],
                         ["causal", "causal_present"], domain=ms, num_heads=HEADS,
                         unidirectional=1, **attributes),
        helper.make_node("QAttention", ["x", "w", "b", "xs", "ws", "ends"],
                         ["full", "full_present"], domain=ms, num_heads=HEADS),
    ]  # fmt: skip
    inputs = [
        _value("x", u8, [BATCH, SEQ, HIDDEN]), _value("w", u8, [HIDDEN, 3 * OUT]),
        _value("b", f32, [3 * OUT]), _value("xs", f32, []), _value("ws", f32, []),
        _value("mask", i32, [BATCH, TOTAL]), _value("xz", u8, []), _value("wz", u8, []),
        _value("past", f32, [2, BATCH, HEADS, PAST, HEAD_SIZE]), _value("ends", i32, [BATCH]),
    ]  # fmt: skip
    names = ("causal", "causal_present", "full", "full_present")
    outputs = [helper.make_empty_tensor_value_info(name) for name in names]
    graph = helper.make_graph(nodes, "qattention", inputs, outputs)
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)]
    )


def _feeds() -> dict[str, np.ndarray]:
    mask = RNG.integers(0, 2, (BATCH, TOTAL)).astype("int32")
    mask[0, : PAST + 1] = 0  # the first query's own keys all masked: the future stays out
    return {
        "x": RNG.integers(0, 256, (BATCH, SEQ, HIDDEN)).astype("uint8"),
        "w": RNG.integers(0, 256, (HIDDEN, 3 * OUT)).astype("uint8"),
        "b": RNG.standard_normal(3 * OUT).astype("float32"),
        "xs": np.array(0.02, "float32"),
        "ws": np.array(0.015, "float32"),
        "mask": mask,
        "xz": np.array(120, "uint8"),
        "wz": np.array(131, "uint8"),
        "past": RNG.standard_normal((2, BATCH, HEADS, PAST, HEAD_SIZE)).astype("float32"),
        "ends": np.array([SEQ, 1], "int32"),
    }


@pytest.fixture(scope="module")
def outputs() -> tuple[list[np.ndarray], list[np.ndarray]]:
    model, feeds = _model(), _feeds()
    mod, params = relay.frontend.from_onnx(model, {k: v.shape for k, v in feeds.items()})
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(**feeds)
    module.run()
    ours = [module.get_output(i).numpy() for i in range(4)]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return ours, list(session.run(None, feeds))


@pytest.mark.parametrize("index", [0, 1, 2, 3], ids=["causal", "present", "full", "present2"])
def test_qattention_matches_onnxruntime(index: int, outputs: Any) -> None:
    ours, theirs = outputs
    assert ours[index].shape == theirs[index].shape
    np.testing.assert_allclose(ours[index], theirs[index], rtol=1e-4, atol=1e-4)
    assert np.abs(theirs[index]).max() > 0.1  # real values, not a zeroed output


def test_qattention_with_rotary_embedding_is_refused_naming_it() -> None:
    with pytest.raises(QuantizedOpError, match="do_rotary"):
        relay.frontend.from_onnx(_model(do_rotary=1), {k: v.shape for k, v in _feeds().items()})
