"""Small whole models (Relax modules with weights) shared by the module-build tests.

``mobile_block`` is a MobileNetV2 inverted residual in miniature, NCHW as frontends give it:
1x1 expansion + bias + ReLU6, 3x3 depthwise + bias + ReLU6, 1x1 projection + bias, residual
add, then global pooling, a dense layer and a softmax. ``numpy_mobile_block`` computes it in
float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from _builders import build
from tvm import relax

R = relax.op
F32 = "float32"

CHANNELS, EXPANDED, SIZE, CLASSES = 16, 32, 14, 10


def mobile_block_weights(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def w(*shape: int, scale: float = 0.3) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(F32)

    return {
        "w_expand": w(EXPANDED, CHANNELS, 1, 1),
        "b_expand": w(EXPANDED),
        "w_depthwise": w(EXPANDED, 1, 3, 3),
        "b_depthwise": w(EXPANDED),
        "w_project": w(CHANNELS, EXPANDED, 1, 1),
        "b_project": w(CHANNELS),
        "w_dense": w(CLASSES, CHANNELS),
        "b_dense": w(CLASSES),
    }


def _relu6(bb: Any, x: Any) -> Any:
    # As TVM's ONNX importer writes Clip(0, 6): a maximum and a minimum with scalar bounds.
    low = bb.emit(R.maximum(x, relax.const(0.0, F32)))
    return bb.emit(R.minimum(low, relax.const(6.0, F32)))


def mobile_block() -> tvm.IRModule:
    """The model; its weights are parameters of ``main`` after ``x`` (bind them to build)."""
    weights = mobile_block_weights()
    params = [("x", (1, CHANNELS, SIZE, SIZE), F32)]
    params += [(name, value.shape, F32) for name, value in weights.items()]

    def body(bb: Any, x: Any, we: Any, be: Any, wd: Any, bd: Any, wp: Any, bp: Any,
             wl: Any, bl: Any) -> Any:  # fmt: skip
        def bias(b: Any) -> Any:
            return bb.emit(R.reshape(b, [1, -1, 1, 1]))

        y = bb.emit(R.add(bb.emit(R.nn.conv2d(x, we)), bias(be)))
        y = _relu6(bb, y)
        y = bb.emit(R.add(bb.emit(R.nn.conv2d(y, wd, padding=[1, 1], groups=EXPANDED)), bias(bd)))
        y = _relu6(bb, y)
        y = bb.emit(R.add(bb.emit(R.nn.conv2d(y, wp)), bias(bp)))
        y = bb.emit(R.add(y, x))
        pooled = bb.emit(R.reshape(bb.emit(R.mean(y, axis=[2, 3])), [1, CHANNELS]))
        logits = bb.emit(R.add(bb.emit(R.linear(pooled, wl)), bl))
        return R.nn.softmax(logits)

    func = build("main", params, body).with_attr("num_input", 1)
    return tvm.IRModule({"main": func})


def numpy_mobile_block(x: np.ndarray, weights: dict[str, np.ndarray]) -> np.ndarray:
    """The model in float64 NumPy."""
    w = {name: value.astype(np.float64) for name, value in weights.items()}

    def conv1x1(v: np.ndarray, kernel: np.ndarray) -> np.ndarray:
        return np.einsum("nchw,oc->nohw", v, kernel[:, :, 0, 0])

    def depthwise(v: np.ndarray, kernel: np.ndarray) -> np.ndarray:
        padded = np.pad(v, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros_like(v)
        for dy in range(3):
            for dx in range(3):
                tap = kernel[:, 0, dy, dx][None, :, None, None]
                out += padded[:, :, dy : dy + SIZE, dx : dx + SIZE] * tap
        return out

    def relu6(v: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(v, 0), 6)

    x64 = x.astype(np.float64)
    y = relu6(conv1x1(x64, w["w_expand"]) + w["b_expand"][None, :, None, None])
    y = relu6(depthwise(y, w["w_depthwise"]) + w["b_depthwise"][None, :, None, None])
    y = conv1x1(y, w["w_project"]) + w["b_project"][None, :, None, None] + x64
    logits = y.mean(axis=(2, 3)) @ w["w_dense"].T + w["b_dense"]
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def example_input(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((1, CHANNELS, SIZE, SIZE)).astype(F32)
