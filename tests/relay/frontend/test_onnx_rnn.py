"""relay.frontend.onnx_rnn: ONNX's RNN, LSTM and GRU unrolled, against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnxruntime
from onnx import TensorProto, helper

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend.onnx_rnn import RecurrentOpError

STEPS, BATCH, FEATURES, HIDDEN = 2, 2, 3, 4


def _inputs(prefix, gates, directions, sequence_lens, with_peepholes):
    """The node's operands after ``X``, named ``prefix + ONNX's name``."""
    rng = np.random.default_rng(gates)

    def uniform(*shape):
        return rng.uniform(-1.0, 1.0, size=shape).astype("float32")

    feeds = {
        "W": uniform(directions, gates * HIDDEN, FEATURES),
        "R": uniform(directions, gates * HIDDEN, HIDDEN),
        "B": uniform(directions, 2 * gates * HIDDEN),
        "sequence_lens": np.array(sequence_lens, "int32"),
        "initial_h": uniform(directions, BATCH, HIDDEN),
    }
    if gates == 4:
        feeds["initial_c"] = uniform(directions, BATCH, HIDDEN)
    if with_peepholes:
        feeds["P"] = uniform(directions, 3 * HIDDEN)
    return {prefix + name: value for name, value in feeds.items()}


def _value_infos(feeds):
    codes = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32}
    return [
        helper.make_tensor_value_info(name, codes[value.dtype.name], value.shape)
        for name, value in feeds.items()
    ]


def _check(model, feeds):
    """Every output of ``model`` as onnxruntime computes it (one build)."""
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    expected = session.run(None, feeds)
    shapes = {name: value.shape for name, value in feeds.items()}
    mod, _ = relay.frontend.from_onnx(model, shapes)
    result = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(**feeds)
    assert len(result) == len(expected)
    for got, want in zip(result, expected, strict=True):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_lstm_gru_and_rnn_match_onnxruntime():
    # One model, one build: an LSTM with peepholes and sequence lengths, a reverse
    # GRU (linear_before_reset, an empty sequence, parametrized activations), a bidirectional
    # RNN.
    x = np.random.default_rng(0).uniform(-1.0, 1.0, (STEPS, BATCH, FEATURES)).astype("float32")
    lstm = _inputs("lstm_", 4, 1, [2, 1], with_peepholes=True)
    gru = _inputs("gru_", 3, 1, [0, 1], with_peepholes=False)
    rnn = {"rnn_W": lstm["lstm_W"][:, : 2 * HIDDEN].reshape(2, HIDDEN, FEATURES),
           "rnn_R": lstm["lstm_R"][:, : 2 * HIDDEN].reshape(2, HIDDEN, HIDDEN)}  # fmt: skip
    nodes = [
        helper.make_node("LSTM", ["X", *lstm], ["Y", "Y_h", "Y_c"], hidden_size=HIDDEN),
        helper.make_node("GRU", ["X", *gru], ["gru_Y", "gru_Y_h"], hidden_size=HIDDEN,
                         direction="reverse", linear_before_reset=1,
                         activations=["HardSigmoid", "LeakyRelu"], activation_alpha=[0.3, 0.2],
                         activation_beta=[0.4]),
        helper.make_node("RNN", ["X", *rnn], ["rnn_Y"], hidden_size=HIDDEN,
                         direction="bidirectional"),
    ]  # fmt: skip
    feeds = {"X": x, **lstm, **gru, **rnn}
    outputs = ["Y", "Y_h", "Y_c", "gru_Y", "gru_Y_h", "rnn_Y"]
    graph = helper.make_graph(
        nodes, "recurrent", _value_infos(feeds),
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in outputs],
    )  # fmt: skip
    _check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), feeds)


def test_an_unknown_activation_is_refused_by_name():
    feeds = {"X": np.zeros((STEPS, BATCH, FEATURES), "float32"),
             "W": np.zeros((1, HIDDEN, FEATURES), "float32"),
             "R": np.zeros((1, HIDDEN, HIDDEN), "float32")}  # fmt: skip
    node = helper.make_node("RNN", list(feeds), ["Y"], hidden_size=HIDDEN, activations=["Swish"])
    graph = helper.make_graph(
        [node], "rnn", _value_infos(feeds), [helper.make_tensor_value_info("Y", 1, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(RecurrentOpError, match="'Swish' is not an ONNX activation"):
        relay.frontend.from_onnx(model, {name: value.shape for name, value in feeds.items()})
