"""The benchmark's models in plain ``torch.nn``, random weights, and their ONNX export in memory.

ResNet-18 and MobileNetV2 follow torchvision's definitions layer for layer (torchvision is not
needed); the encoder is two ``nn.TransformerEncoderLayer`` (d 256, 4 heads, GELU, seq 128). Each
model is exported with ``torch.onnx.export`` into bytes; :func:`relax_module` imports it with TVM's
Relax ONNX frontend, its weights detached as parameters (the new path the benchmark compares with;
the shim's side imports the same bytes with ``relay.frontend.from_onnx``).

torch, onnx and onnxruntime are benchmark and test extras (``pip install
compile-engine-compat[bench]``), never runtime dependencies of the package.
"""

from __future__ import annotations

import io
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

__all__ = [
    "BIG_MODELS",
    "MODELS",
    "Model",
    "bert_base",
    "encoder",
    "gflop",
    "mobilenet_v2",
    "onnx_bytes",
    "relax_module",
    "resnet18",
    "resnet50",
]


def resnet18(width: int = 64) -> Any:
    """ResNet-18 (torchvision's layout: BasicBlock x [2, 2, 2, 2]), 1000 classes, eval mode.

    ``width`` is the first stage's channels (64 in ResNet-18; smaller for quick tests).
    """
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride, bias=False), nn.BatchNorm2d(planes)
                )

        def forward(self, x: Any) -> Any:
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            layers = []
            inplanes = width
            for planes, stride in ((width, 1), (2 * width, 2), (4 * width, 2), (8 * width, 2)):
                layers.append(nn.Sequential(BasicBlock(inplanes, planes, stride),
                                            BasicBlock(planes, planes)))  # fmt: skip
                inplanes = planes
            self.layers = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(8 * width, 1000)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.avgpool(self.layers(x))
            return self.fc(torch.flatten(x, 1))

    return _randomized(ResNet())


def resnet50(width: int = 64) -> Any:
    """ResNet-50 (torchvision's layout: Bottleneck x [3, 4, 6, 3], expansion 4), eval mode."""
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            out = 4 * planes
            self.body = nn.Sequential(
                nn.Conv2d(inplanes, planes, 1, bias=False), nn.BatchNorm2d(planes), nn.ReLU(),
                nn.Conv2d(planes, planes, 3, stride, 1, bias=False), nn.BatchNorm2d(planes),
                nn.ReLU(), nn.Conv2d(planes, out, 1, bias=False), nn.BatchNorm2d(out),
            )  # fmt: skip
            self.downsample = None
            if stride != 1 or inplanes != out:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, out, 1, stride, bias=False), nn.BatchNorm2d(out)
                )

        def forward(self, x: Any) -> Any:
            identity = x if self.downsample is None else self.downsample(x)
            return torch.relu(self.body(x) + identity)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                nn.MaxPool2d(3, 2, 1),
            )  # fmt: skip
            layers, inplanes = [], width
            for planes, blocks, stride in ((width, 3, 1), (2 * width, 4, 2), (4 * width, 6, 2),
                                           (8 * width, 3, 2)):  # fmt: skip
                for i in range(blocks):
                    layers.append(Bottleneck(inplanes, planes, stride if i == 0 else 1))
                    inplanes = 4 * planes
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(inplanes, 1000)

        def forward(self, x: Any) -> Any:
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return _randomized(ResNet())


def mobilenet_v2(width: float = 1.0) -> Any:
    """MobileNetV2 (torchvision's inverted residuals, ReLU6), 1000 classes, eval mode.

    ``width`` multiplies every layer's channels (1.0 in MobileNetV2; smaller for quick tests),
    rounded to multiples of 8 as torchvision does.
    """
    from torch import nn

    def conv_bn(inp: int, out: int, kernel: int, stride: int, groups: int = 1) -> Any:
        return nn.Sequential(
            nn.Conv2d(inp, out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(out),
            nn.ReLU6(inplace=True),
        )

    class InvertedResidual(nn.Module):
        def __init__(self, inp: int, out: int, stride: int, expand: int) -> None:
            super().__init__()
            hidden = inp * expand
            self.use_residual = stride == 1 and inp == out
            layers = [conv_bn(inp, hidden, 1, 1)] if expand != 1 else []
            layers += [
                conv_bn(hidden, hidden, 3, stride, groups=hidden),
                nn.Conv2d(hidden, out, 1, 1, 0, bias=False),
                nn.BatchNorm2d(out),
            ]
            self.conv = nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            return x + self.conv(x) if self.use_residual else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                        (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]  # fmt: skip
            inp = _channels(32, width)
            features = [conv_bn(3, inp, 3, 2)]
            for expand, channels, repeats, stride in settings:
                out = _channels(channels, width)
                for i in range(repeats):
                    features.append(InvertedResidual(inp, out, stride if i == 0 else 1, expand))
                    inp = out
            features.append(conv_bn(inp, _channels(1280, max(1.0, width)), 1, 1))
            self.features = nn.Sequential(*features)
            last = _channels(1280, max(1.0, width))
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, 1000))

        def forward(self, x: Any) -> Any:
            x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(x.flatten(1))

    return _randomized(MobileNetV2())


def _channels(channels: int, width: float) -> int:
    """torchvision's ``_make_divisible(channels * width, 8)``."""
    scaled = max(8, int(channels * width + 4) // 8 * 8)
    return scaled + 8 if scaled < 0.9 * channels * width else scaled


def encoder(layers: int = 2, d_model: int = 256, heads: int = 4) -> Any:
    """``layers`` transformer encoder layers (post-norm, GELU, feed-forward 4 x d), eval mode."""
    import torch
    from torch import nn

    layer = nn.TransformerEncoderLayer(
        d_model, heads, dim_feedforward=4 * d_model, dropout=0.0, activation="gelu",
        batch_first=True,
    )  # fmt: skip
    # enable_nested_tensor=False: the fast path is for padded batches; export wants plain ops.
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    # The layers are deep copies of one: give each its own weights (the ONNX exporter would
    # otherwise share the equal initializers, and the layers' kernels their constants).
    torch.manual_seed(0)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if param.dim() > 1:
                nn.init.xavier_uniform_(param)
            elif "norm" in name:
                param.uniform_(0.5, 1.5)
            else:
                param.uniform_(-0.1, 0.1)
    return _randomized(model)


def bert_base() -> Any:
    """A BERT-base-sized encoder: 12 layers, hidden 768, 12 heads, feed-forward 3072."""
    return encoder(12, 768, 12)


def _randomized(model: Any) -> Any:
    """``model`` in eval mode with seeded random weights and non-trivial batch-norm statistics."""
    import torch

    torch.manual_seed(0)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                assert module.running_mean is not None and module.running_var is not None
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.1, 0.1)
    return model.eval()


@dataclass(frozen=True)
class Model:
    """A benchmark model: how to make it and the shape of its one input."""

    name: str
    build: Callable[[], Any]
    input_shape: tuple[int, ...]

    def make(self) -> Any:
        """The model with the same random weights in every process (seeded before it is made)."""
        import torch

        torch.manual_seed(0)
        return self.build()

    def example(self, seed: int = 0) -> np.ndarray:
        return np.random.default_rng(seed).standard_normal(self.input_shape).astype("float32")


MODELS = (
    Model("ResNet-18", resnet18, (1, 3, 224, 224)),
    Model("MobileNetV2", mobilenet_v2, (1, 3, 224, 224)),
    Model("encoder 2x(seq 128, d 256)", encoder, (1, 128, 256)),
)


#: The bigger models of ``bench/run.py --big``: (model, batch sizes it is measured at).
BIG_MODELS = (
    (Model("ResNet-50", resnet50, (1, 3, 224, 224)), (1,)),
    (Model("BERT-base encoder 12x(seq 128, d 768)", bert_base, (1, 128, 768)), (1, 8)),
    (MODELS[0], (8,)),
)


def onnx_bytes(model: Any, example: np.ndarray, dynamic_batch: bool = False) -> bytes:
    """``model`` exported to ONNX (opset 17) in memory, its input named ``input``.

    ``dynamic_batch`` makes the first dimension of the input and the output a symbolic
    ``batch``.
    """
    import torch

    buffer = io.BytesIO()
    axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's own deprecation chatter
        torch.onnx.export(
            model, (torch.from_numpy(example),), cast(Any, buffer), input_names=["input"],
            output_names=["output"], opset_version=17, dynamo=False, dynamic_axes=axes,
        )  # fmt: skip
    return buffer.getvalue()


def gflop(data: bytes) -> float:
    """The floating-point work of one run of the ONNX model ``data``, in GFLOP (2 per multiply
    and add): its convolutions, matrix products and ``Gemm`` nodes, shapes from ONNX's own
    inference. Elementwise ops, pooling and normalization are left out (a few percent)."""
    import onnx

    model = onnx.shape_inference.infer_shapes(onnx.load_from_string(data))
    graph = model.graph
    shapes = {
        info.name: [d.dim_value for d in info.type.tensor_type.shape.dim]
        for info in [*graph.value_info, *graph.input, *graph.output]
    }
    shapes.update({init.name: list(init.dims) for init in graph.initializer})
    flops = 0
    for node in graph.node:
        out = shapes.get(node.output[0])
        if not out or not all(out):
            continue
        if node.op_type == "Conv":
            weight = shapes[node.input[1]]  # (out channels, in channels / groups, kh, kw)
            flops += 2 * int(np.prod(out)) * int(np.prod(weight[1:]))
        elif node.op_type in ("MatMul", "Gemm"):
            first = shapes.get(node.input[0])
            transposed = node.op_type == "Gemm" and any(
                a.name == "transA" and a.i for a in node.attribute
            )
            if first:
                flops += 2 * int(np.prod(out)) * (first[-2] if transposed else first[-1])
    return flops / 1e9


def relax_module(data: bytes, input_shape: tuple[int, ...]) -> tuple[Any, dict[str, Any]]:
    """The ONNX model as a Relax module and its weights: ``(module, {name: array})``.

    Through ``tvm.relax.frontend.onnx.from_onnx``, the weights kept as inputs of ``main`` and
    detached, as Relay's frontends returned ``(mod, params)`` with ``freeze_params=False``.
    """
    import onnx
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    proto = onnx.load_from_string(data)
    mod = from_onnx(
        proto, {"input": list(input_shape)}, keep_params_in_input=True,
        sanitize_input_names=False,
    )  # fmt: skip
    mod, params = relax.frontend.detach_params(mod)
    main_params = [p.name for p in mod["main"].params][1:]
    return mod, dict(zip(main_params, params["main"]))


def quantized_onnx(model: Model, per_channel: bool = False, samples: int = 4) -> bytes:
    """``model`` exported to ONNX and quantized by onnxruntime's ``quantize_static`` (QDQ,
    uint8 activations, int8 weights), calibrated on ``samples`` random inputs; the quantized
    file is cached in the temp dir (the same seeded weights make the same file)."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    kind = "per-channel" if per_channel else "per-tensor"
    name = f"{model.name.split(':')[0].replace(' ', '_')}-{kind}-{samples}.qdq.onnx"
    cache = Path(tempfile.gettempdir()) / f"compile-engine-compat-bench-{os.getuid()}"
    path = cache / name
    if path.is_file():
        return path.read_bytes()
    cache.mkdir(mode=0o700, exist_ok=True)
    example = model.example()
    source = cache / f"{name}.fp32.onnx"
    source.write_bytes(onnx_bytes(model.make(), example))

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = [{"input": model.example(seed)} for seed in range(1, samples + 1)]

        def get_next(self) -> dict[str, np.ndarray] | None:
            return self.left.pop() if self.left else None

    partial = path.with_name(path.name + f".{os.getpid()}.tmp")
    quantize_static(
        str(source), str(partial), Reader(), quant_format=QuantFormat.QDQ,
        per_channel=per_channel,
    )  # fmt: skip
    onnx.checker.check_model(str(partial))
    os.replace(partial, path)  # written beside, renamed over: never a half-written cache file
    source.unlink()
    return path.read_bytes()
