"""Functions and targets the schedule tests share (the rules' cases, the host CPU targets)."""

from __future__ import annotations

import numpy as np
import tvm
from _builders import build
from tvm import relax

R = relax.op
F32 = "float32"
rng = np.random.default_rng(7)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(F32)


def matmul_bias_relu() -> relax.Function:
    return build(
        "main",
        [("x", (48, 96), F32), ("w", (96, 80), F32), ("b", (80,), F32)],
        lambda bb, x, w, b: R.nn.relu(bb.emit(R.add(bb.emit(R.matmul(x, w)), b))),
    )


def conv_relu() -> relax.Function:
    return build(
        "main",
        [("x", (1, 8, 20, 24), F32), ("w", (16, 8, 3, 3), F32)],
        lambda bb, x, w: R.nn.relu(bb.emit(R.nn.conv2d(x, w, padding=[1, 1]))),
    )


# name -> (function, inputs, what the scheduled script must show)
CASES = {
    "matmul_bias_relu": (matmul_bias_relu, lambda: [f32(48, 96), f32(96, 80), f32(80)], "tile"),
    "batch_matmul": (
        lambda: build(
            "main",
            [("a", (3, 40, 32), F32), ("b", (3, 32, 64), F32)],
            lambda bb, a, b: R.matmul(a, b),
        ),
        lambda: [f32(3, 40, 32), f32(3, 32, 64)],
        "tile",
    ),
    "linear": (
        lambda: build(
            "main",
            [("x", (64, 48), F32), ("w", (32, 48), F32)],
            lambda bb, x, w: R.linear(x, w),
        ),
        lambda: [f32(64, 48), f32(32, 48)],
        "tile",
    ),
    "conv2d_relu": (conv_relu, lambda: [f32(1, 8, 20, 24), f32(16, 8, 3, 3)], "tile"),
    "sum_last_axis": (
        lambda: build("main", [("x", (128, 300), F32)], lambda bb, x: R.sum(x, axis=[1])),
        lambda: [f32(128, 300)],
        "parallel",
    ),
    "softmax": (
        lambda: build("main", [("x", (64, 257), F32)], lambda bb, x: R.nn.softmax(x)),
        lambda: [f32(64, 257)],
        "parallel",
    ),
    "elementwise_chain": (
        lambda: build(
            "main",
            [("x", (64, 256), F32), ("y", (256,), F32)],
            lambda bb, x, y: R.exp(bb.emit(R.multiply(bb.emit(R.add(x, y)), x))),
        ),
        lambda: [f32(64, 256), f32(256)],
        "vector",
    ),
    "max_pool_padded": (
        lambda: build(
            "main",
            [("x", (1, 20, 20, 32), F32)],
            lambda bb, x: R.nn.max_pool2d(x, (3, 3), (2, 2), (1, 1, 1, 1), layout="NHWC"),
        ),
        lambda: [f32(1, 20, 20, 32)],
        "tile",
    ),
    "avg_pool_padded": (
        lambda: build(
            "main",
            [("x", (1, 16, 16, 24), F32)],
            lambda bb, x: R.nn.avg_pool2d(x, (3, 3), (1, 1), (1, 1, 1, 1), layout="NHWC"),
        ),
        lambda: [f32(1, 16, 16, 24)],
        "parallel",
    ),
    "odd_extents": (
        lambda: build("main", [("x", (131, 127), F32)], lambda bb, x: R.nn.relu(x)),
        lambda: [f32(131, 127)],
        "parallel",
    ),
}


HOST = {"kind": "llvm", "mcpu": tvm.target.codegen.llvm_get_system_cpu()}
HOST_TARGETS: list[object] = ["llvm", HOST]
HOST_IDS = ["generic", "host"]
if tvm.target.codegen.llvm_cpu_has_features(["avx512f"], tvm.target.Target(HOST)):
    # The other vector width of this AVX-512 host: 512 bits where its CPU prefers 256 (Intel),
    # 256 bits where it does not (AMD Zen 4 and 5).
    if tvm.target.codegen.llvm_cpu_has_features(["prefer-256-bit"], tvm.target.Target(HOST)):
        HOST_TARGETS.append({**HOST, "mattr": ["-prefer-256-bit"]})
        HOST_IDS.append("host512")
    else:
        HOST_TARGETS.append({**HOST, "mattr": ["+prefer-256-bit"]})
        HOST_IDS.append("host256")


def np_conv(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """NCHW conv2d in float64 (the reference's precision)."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]  # (n, c, oh, ow, kh, kw)
    return np.tensordot(win, w.astype(np.float64), axes=([1, 4, 5], [1, 2, 3])).transpose(
        0, 3, 1, 2
    )
