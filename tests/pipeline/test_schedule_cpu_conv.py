"""The depthwise conv rule: channels-last depthwise conv2d against NumPy and the unscheduled one."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build, run_jit

from compile_engine_compat.pipeline.schedule import schedule_prim_func
from compile_engine_compat.testing.oracle import REFERENCE_TOLERANCES, compare
from pipeline.schedule_cases import F32, R, f32


def _depthwise(channels: int, size: int, stride: int, layout: str = "NHWC"):
    nhwc = layout == "NHWC"
    x_shape = (1, size, size, channels) if nhwc else (1, channels, size, size)
    w_shape = (channels, 3, 3, 1) if nhwc else (channels, 1, 3, 3)

    def body(bb, x, w, b):
        kernel_layout = "OHWI" if nhwc else "OIHW"
        conv = R.nn.conv2d(x, w, strides=[stride] * 2, padding=[1, 1], groups=channels,
                           data_layout=layout, kernel_layout=kernel_layout)  # fmt: skip
        y = bb.emit(R.add(bb.emit(conv), b))
        return R.minimum(bb.emit(R.maximum(y, relax_const(0.0))), relax_const(6.0))

    b_shape = (channels,) if nhwc else (channels, 1, 1)
    func = build("main", [("x", x_shape, F32), ("w", w_shape, F32), ("b", b_shape, F32)], body)
    return func, [x_shape, w_shape, b_shape]


def relax_const(value: float):
    from tvm import relax

    return relax.const(value, F32)


def _numpy_depthwise_nhwc(x, w, b, stride):
    size = x.shape[1]
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    out_size = (size + 2 - 3) // stride + 1
    out = np.zeros((1, out_size, out_size, x.shape[3]))
    for dy in range(3):
        for dx in range(3):
            window = padded[:, dy : dy + stride * out_size : stride, dx : dx + stride * out_size
                            : stride]  # fmt: skip
            out += window * w[:, dy, dx, 0]
    return np.minimum(np.maximum(out + b, 0), 6)


def _rules(engine, func) -> dict[str, str]:
    cached = engine.lower(func, "llvm")
    name = cached.prim_fn_var.name_hint
    return dict(schedule_prim_func(cached.prim_func, name, cached.target).rules)


@pytest.mark.parametrize(
    ("channels", "size", "stride"),
    [(32, 14, 1), (48, 28, 2), (64, 7, 1), (64, 56, 2)],
    ids=["14x14", "stride2_28", "7x7", "stride2_56"],
)
def test_depthwise_rule_applies_and_matches_numpy(engine, channels, size, stride):
    func, shapes = _depthwise(channels, size, stride)
    assert "depthwise_conv" in _rules(engine, func).values()
    arrays = [f32(*shape) for shape in shapes]
    cached = engine.lower(func, "llvm")
    (out,) = run_jit(engine.jit(func, "llvm"), cached, *arrays)
    x, w, b = arrays
    expected = _numpy_depthwise_nhwc(x, w, b, stride).astype(F32)
    assert compare(out, expected, REFERENCE_TOLERANCES) == ""
    # No reduction reordered: bit for bit the unscheduled function's result.
    plain = tvm.compile(cached.prim_func, target=cached.target)
    plain_out = tvm.runtime.empty(out.shape, F32)
    plain(*[tvm.runtime.tensor(a) for a in arrays], plain_out)
    np.testing.assert_array_equal(out, plain_out.numpy())


def test_depthwise_rule_leaves_nchw_and_dense_convolutions_alone(engine):
    nchw, _ = _depthwise(32, 14, 1, layout="NCHW")
    assert "depthwise_conv" not in _rules(engine, nchw).values()
    dense = build("main", [("x", (1, 14, 14, 32), F32), ("w", (32, 3, 3, 32), F32)],
                  lambda bb, x, w: R.nn.conv2d(x, w, padding=[1, 1], data_layout="NHWC",
                                               kernel_layout="OHWI"))  # fmt: skip
    assert "depthwise_conv" not in _rules(engine, dense).values()
