"""NumPy integer references of TVM 0.19's QNN semantics, written from the spec, not from the
shim's lowering: what ``relay.qnn.op.requantize``/``quantize``/``dequantize``/``conv2d``/
``dense`` computed, bit for bit.

* :func:`fixed_point_multiplier` is Relay's ``GetFixedPointMultiplierShift``;
* :func:`requantize` computes Relay's requantize in int64 fixed point (``compute_dtype="int64"``)
  or in float32/float64, with Relay's ``UPWARD`` and ``TONEAREST`` roundings;
* :func:`quantize`, :func:`dequantize`: float32 arithmetic, rounding halves away from zero;
* :func:`conv2d_nchw`, :func:`dense`: int32 accumulation of the zero-point-shifted operands
  (TVM 0.19's four terms, which equal it modulo 2**32).

Other work (ONNX ``QLinear*``, int8 kernels) can check itself against these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "conv2d_nchw",
    "dense",
    "dequantize",
    "fixed_point_multiplier",
    "quantize",
    "requantize",
    "round_half_away",
]


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to nearest, halves away from zero (C's ``round``, TVM 0.19's ``round``), exactly."""
    x = np.asarray(x)
    whole = np.trunc(x)
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)


def fixed_point_multiplier(multiplier: float) -> tuple[int, int]:
    """``multiplier == m * 2**(shift - 31)``: ``m`` an int32 (``2**30 <= m < 2**31``), as Relay."""
    if multiplier == 0.0:
        return 0, 0
    significand, exponent = math.frexp(multiplier)
    m = math.floor(significand * 2**31 + 0.5)
    if m == 2**31:
        m //= 2
        exponent += 1
    return m, exponent


def _along(values: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A 1-D array shaped to broadcast along ``axis`` of an ``ndim``-D array."""
    values = np.asarray(values).reshape(-1)
    if values.size == 1 or ndim == 0:
        return values.reshape(())
    shape = [1] * ndim
    shape[axis % ndim] = values.size
    return values.reshape(shape)


def _clip(values: np.ndarray, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.clip(values, info.min, info.max).astype(dtype)


def requantize(
    q: np.ndarray,
    input_scale: float | Sequence[float],
    input_zero_point: int | Sequence[int],
    output_scale: float,
    output_zero_point: int,
    axis: int = -1,
    rounding: str = "UPWARD",
    compute_dtype: str = "int64",
    out_dtype: str = "int8",
) -> np.ndarray:
    """``zp_out + in_scale / out_scale * (q - zp_in)`` as TVM 0.19 computed it."""
    q = np.asarray(q)
    ndim = q.ndim
    scales = np.asarray(input_scale, "float32").reshape(-1).astype("float64")
    out_scale = float(np.float32(output_scale))
    multipliers = scales / out_scale
    zp_in = _along(np.asarray(input_zero_point, "int64"), ndim, axis)
    in_scales = np.asarray(input_scale, "float32")
    same = in_scales.ndim == 0 and float(in_scales) == out_scale
    if compute_dtype == "int64":
        x = q.astype("int64") - zp_in
        if not same:
            pairs = [fixed_point_multiplier(float(m)) for m in multipliers]
            m = _along(np.array([p[0] for p in pairs], "int64"), ndim, axis)
            left = _along(np.array([max(p[1], 0) for p in pairs], "int64"), ndim, axis)
            right = _along(np.array([max(-p[1], 0) + 31 for p in pairs], "int64"), ndim, axis)
            x = (x << left) * m
            pos = np.int64(1) << (right - 1)
            rounder = pos if rounding == "UPWARD" else np.where(x >= 0, pos, pos - 1)
            x = ((x + rounder) >> right).astype("int32").astype("int64")
        x = x + output_zero_point
    else:
        ftype = np.float32 if compute_dtype == "float32" else np.float64
        x = q.astype(ftype) - zp_in.astype(ftype)
        if not same:
            x = x * _along(multipliers.astype(ftype), ndim, axis)
        x = x + ftype(output_zero_point)
        if rounding == "UPWARD":
            x = np.floor(x + ftype(0.5))
        else:
            x = round_half_away(x)
        x = x.astype("int64")
    if out_dtype == "int32":
        return x.astype("int32")
    return _clip(x, out_dtype)


def quantize(x: np.ndarray, scale: float, zero_point: int, out_dtype: str = "int8") -> np.ndarray:
    """``clip(round(x / scale) + zero_point)`` in float32, as TVM 0.19's ``qnn.quantize``."""
    scaled = round_half_away(np.asarray(x, "float32") / np.float32(scale))
    return _clip(scaled + np.float32(zero_point), out_dtype)


def dequantize(q: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """``float32(q - zero_point) * scale``, as TVM 0.19's ``qnn.dequantize``."""
    shifted = np.asarray(q).astype("int32") - np.int32(zero_point)
    return shifted.astype("float32") * np.float32(scale)


def dense(data: np.ndarray, weight: np.ndarray, data_zp: int, weight_zp: int) -> np.ndarray:
    """``qnn.dense``: the int32 ``(data - zp) @ (weight - zp).T``."""
    a = data.astype("int64") - data_zp
    b = weight.astype("int64") - weight_zp
    return (a @ b.T).astype("int32")


def conv2d_nchw(
    data: np.ndarray,
    weight: np.ndarray,
    data_zp: int,
    weight_zp: int,
    strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (0, 0),
) -> np.ndarray:
    """``qnn.conv2d`` (NCHW data, OIHW kernel, one group): the int32 accumulation of the
    shifted operands, the data padded with its zero point."""
    a = data.astype("int64") - data_zp
    a = np.pad(a, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    w = weight.astype("int64") - weight_zp
    n, _, h, wd = a.shape
    o, _, kh, kw = w.shape
    oh = (h - kh) // strides[0] + 1
    ow = (wd - kw) // strides[1] + 1
    out = np.zeros((n, o, oh, ow), "int64")
    for i in range(kh):
        for j in range(kw):
            patch = a[
                :, :, i : i + strides[0] * oh : strides[0], j : j + strides[1] * ow : strides[1]
            ]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out.astype("int32")
