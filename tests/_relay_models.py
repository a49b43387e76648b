"""Small models for the Relay-program tests: an ONNX conv net and MLP, the torch net behind them.

Built in the test process (torch's TorchScript ONNX exporter, ``onnx.helper``); nothing is read
from disk.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np

CONV_SHAPE = (1, 3, 8, 8)
MLP_SHAPE = (2, 6)


def torch_conv_net() -> Any:
    """conv-BN-ReLU-pool-dense, eval mode, fixed seed."""
    import torch

    class ConvNet(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(4)
            self.fc = torch.nn.Linear(4 * 4 * 4, 5)

        def forward(self, x: Any) -> Any:
            y = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
            return self.fc(y.flatten(1))

    torch.manual_seed(0)
    net = ConvNet().eval()
    with torch.no_grad():  # non-trivial BatchNorm statistics
        net.bn.running_mean[:] = torch.linspace(-0.5, 0.5, 4)  # type: ignore[index]
        net.bn.running_var[:] = torch.linspace(0.5, 1.5, 4)  # type: ignore[index]
    return net


def onnx_conv_net() -> Any:
    """The conv net exported to ONNX (input ``input.1``, as torch names it), as a ModelProto."""
    import onnx
    import torch

    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the TorchScript exporter's notice
        torch.onnx.export(
            torch_conv_net(),
            (torch.zeros(CONV_SHAPE),),
            buffer,  # type: ignore[arg-type]  # torch's stub omits file objects
            input_names=["input.1"],
            dynamo=False,
        )
    return onnx.load_from_string(buffer.getvalue())


def onnx_mlp() -> Any:
    """Gemm-Relu-Gemm written with onnx.helper; weights are initializers (input ``data``)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    weights = {
        "w1": rng.standard_normal((8, 6)).astype("float32"),
        "b1": rng.standard_normal(8).astype("float32"),
        "w2": rng.standard_normal((3, 8)).astype("float32"),
        "b2": rng.standard_normal(3).astype("float32"),
    }
    nodes = [
        helper.make_node("Gemm", ["data", "w1", "b1"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["out"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, list(MLP_SHAPE))],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [MLP_SHAPE[0], 3])],
        initializer=[numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def onnxruntime_output(model: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """The model's first output under onnxruntime (the reference)."""
    import onnxruntime

    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)[0]
