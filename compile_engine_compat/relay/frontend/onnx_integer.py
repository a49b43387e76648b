"""The integer cores of the quantized ONNX ops: int8/uint8 convolution and matmul accumulated in
int32, zero points as correction terms, and onnxruntime's requantization.

What a VNNI schedule rule sees (the forms emitted, nothing else): a convolution is
``relax.op.nn.conv{1,2,3}d(data, weight, out_dtype="int32")`` on the raw ``uint8``/``int8``
data (NCHW; padded by ``nn.pad`` with its zero point where the convolution pads) and an
``int8``/``uint8`` constant weight (OIHW), the zero points folded into one ``int32`` constant
per output channel added after it; a matmul is ``relax.op.matmul(a, b, out_dtype="int32")`` on
the raw 8-bit operands. Only where a weight or a zero point is not a constant (a graph input)
does a convolution run on ``int32`` operands with the zero points subtracted first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax

__all__ = [
    "QuantizedOpError",
    "conv_int32",
    "dequantized",
    "dtype_of",
    "matmul_int32",
    "quantized",
    "requantized",
    "value_of",
    "zero_point",
]

R = relax.op


class QuantizedOpError(ValueError):
    """A quantized ONNX node the shim cannot convert (its message names the node's problem)."""


def dtype_of(expr: Any) -> str:
    """The element type of a tensor expression, as a string (``"uint8"``)."""
    return str(expr.ty.dtype)


def _static_shape(expr: Any, what: str) -> list[int]:
    try:
        return [int(d) for d in expr.ty.shape]
    except (TypeError, AttributeError) as exc:
        raise QuantizedOpError(f"{what} needs a static input shape, got {expr.ty}") from exc


def value_of(expr: Any, params: Sequence[Any]) -> np.ndarray | None:
    """The value of ``expr`` where the importer knows it: a constant, or an initializer kept as
    a parameter (``freeze_params=False``); None for a graph input or a computed value."""
    if isinstance(expr, tvm.ir.GenericConst):
        return np.asarray(expr.value.numpy())
    if isinstance(expr, relax.Var) and len(params) > 1 and expr.name in params[1]:
        array = params[1][expr.name][1]
        return np.asarray(array.numpy() if hasattr(array, "numpy") else array)
    return None


def zero_point(expr: Any, dtype: str) -> Any:
    """An optional zero-point input: the input itself, or a 0 of ``dtype``."""
    return expr if expr is not None else relax.const(0, dtype)


def _limits(dtype: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _as_float(expr: Any) -> Any:
    return expr if dtype_of(expr) == "float32" else R.astype(expr, "float32")


def requantized(acc: Any, multiplier: Any, y_zero_point: Any, out_dtype: str) -> Any:
    """onnxruntime's requantization of an int32 accumulator (or a float value):
    ``saturate(round_half_even(float(acc) * multiplier) + y_zero_point)`` in float32, as MLAS
    computes it."""
    low, high = _limits(out_dtype)
    scaled = R.round(R.multiply(R.astype(acc, "float32"), multiplier))
    shifted = R.add(scaled, _as_float(y_zero_point))
    return R.astype(R.clip(shifted, low, high), out_dtype)


def quantized(value: Any, scale: Any, y_zero_point: Any, out_dtype: str) -> Any:
    """ONNX ``QuantizeLinear``: ``saturate(round_half_even(value / scale) + zero_point)``."""
    low, high = _limits(out_dtype)
    shifted = R.add(R.round(R.divide(value, scale)), _as_float(y_zero_point))
    return R.astype(R.clip(shifted, low, high), out_dtype)


def dequantized(data: Any, scale: Any, x_zero_point: Any) -> Any:
    """ONNX ``DequantizeLinear`` (per-tensor): ``(float(data) - zero_point) * scale``."""
    return R.multiply(R.subtract(R.astype(data, "float32"), _as_float(x_zero_point)), scale)


def _per_channel(expr: Any, source: Any, ndim: int, axis: int) -> Any:
    """``expr`` (computed from the input ``source``) reshaped to broadcast along ``axis`` of an
    ``ndim`` tensor where ``source`` is 1-D (per channel); as it is otherwise."""
    if int(source.ty.ndim) != 1:
        return expr
    shape = [1] * ndim
    shape[axis] = int(source.ty.shape[0])
    return R.reshape(expr, shape)


# -- convolution ----------------------------------------------------------------------------


def _conv_pads(attrs: dict[str, Any], in_shape: Sequence[int], kernel: Sequence[int]) -> list[int]:
    """ONNX ``pads`` (all begins, then all ends), ``auto_pad`` resolved on static shapes."""
    dims = len(kernel)
    strides = list(attrs.get("strides", [1] * dims))
    dilations = list(attrs.get("dilations", [1] * dims))
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else str(auto_pad)
    if auto_pad in ("NOTSET", ""):
        return list(attrs.get("pads", [0] * (2 * dims)))
    if auto_pad == "VALID":
        return [0] * (2 * dims)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise QuantizedOpError(f"unknown auto_pad {auto_pad!r}")
    begins, ends = [], []
    for size, k, s, d in zip(in_shape, kernel, strides, dilations):
        out = math.ceil(size / s)
        total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def _padded(data: Any, pads: Sequence[int], value: int) -> Any:
    """``data`` (``[N, C, *spatial]``) padded by ONNX ``pads`` with ``value``: the quantized
    form of a real zero, so that the convolution's border terms equal its other terms."""
    dims = len(pads) // 2
    width = [0, 0, 0, 0]
    for d in range(dims):
        width += [int(pads[d]), int(pads[d + dims])]
    return R.nn.pad(data, width, pad_value=float(value))


def _fits(values: np.ndarray, dtype: str) -> bool:
    low, high = _limits(dtype)
    return bool(values.size == 0 or (values.min() >= low and values.max() <= high))


def conv_int32(
    data: Any,
    weight: Any,
    data_zero_point: Any,
    weight_zero_point: Any,
    attrs: dict[str, Any],
    params: Sequence[Any],
    bias: Any = None,
) -> Any:
    """``conv(data - data_zp, weight - weight_zp) + bias`` in int32, ONNX ``Conv`` attributes
    (1-D, 2-D or 3-D; the padding stands for real zeros, as ONNX's quantized convolutions say).

    With the weight and both zero points known, the convolution runs on the raw 8-bit operands
    and the zero-point terms are one int32 constant per output channel added after it: a padded
    input is padded with its zero point first (``nn.pad``), so the border's terms are the same
    as everywhere else, exactly.
    """
    ndim = int(data.ty.ndim)
    dims = ndim - 2
    if dims not in (1, 2, 3):
        raise QuantizedOpError(f"a quantized convolution takes 3-D to 5-D data, got {ndim}-D")
    in_shape = _static_shape(data, "a quantized convolution")[2:]
    kernel = list(attrs.get("kernel_shape", _static_shape(weight, "its weight")[2:]))
    pads = _conv_pads(attrs, in_shape, kernel)
    strides = list(attrs.get("strides", [1] * dims))
    dilations = list(attrs.get("dilations", [1] * dims))
    conv = (R.nn.conv1d, R.nn.conv2d, R.nn.conv3d)[dims - 1]
    groups = int(attrs.get("group", 1))
    options: dict[str, Any] = {"strides": strides, "padding": pads, "dilation": dilations}
    options["groups"] = groups
    w, xz, wz = (value_of(e, params) for e in (weight, data_zero_point, weight_zero_point))
    if w is not None and xz is not None and wz is not None:
        wz_b = wz.reshape((-1,) + (1,) * (w.ndim - 1)) if wz.ndim == 1 else wz
        shifted = w.astype(np.int32) - wz_b.astype(np.int32)
        for wdtype in (str(w.dtype), "int8"):
            if _fits(shifted, wdtype):
                fast_weight = relax.const(shifted.astype(wdtype))
                xz_int = int(np.asarray(xz).reshape(-1)[0])
                if xz_int and any(pads):  # the border is the zero point: one term per channel
                    data = _padded(data, pads, xz_int)
                    pads = [0] * len(pads)
                    options["padding"] = pads
                sums = shifted.astype(np.int64).reshape(shifted.shape[0], -1).sum(axis=1)
                corr = xz_int * sums.reshape((-1,) + (1,) * dims)
                acc = conv(data, fast_weight, out_dtype="int32", **options)
                known_bias = value_of(bias, params) if bias is not None else None
                if known_bias is not None:  # one int32 constant: bias - zero-point terms
                    shape = (corr.shape[0],) + (1,) * dims
                    term = known_bias.astype(np.int64).reshape(shape) - corr
                    return R.add(acc, relax.const(term[None].astype("int32")))
                if xz_int != 0:
                    acc = R.subtract(acc, relax.const(corr[None].astype("int32")))
                return acc if bias is None else R.add(acc, _per_channel(bias, bias, ndim, 1))
    x32 = R.subtract(R.astype(data, "int32"), R.astype(data_zero_point, "int32"))
    wz32 = _per_channel(R.astype(weight_zero_point, "int32"), weight_zero_point, ndim, 0)
    w32 = R.subtract(R.astype(weight, "int32"), wz32)
    acc = conv(x32, w32, out_dtype="int32", **options)
    return acc if bias is None else R.add(acc, _per_channel(bias, bias, ndim, 1))


# -- matmul ---------------------------------------------------------------------------------


def matmul_int32(
    a: Any, b: Any, a_zero_point: Any, b_zero_point: Any, params: Sequence[Any]
) -> Any:
    """``(a - a_zp) @ (b - b_zp)`` in int32 (ONNX ``MatMulInteger``): the 8-bit matmul, then
    ``- a_zp * colsum(b) - b_zp * rowsum(a) + K * a_zp * b_zp``, terms with a known zero
    zero point left out."""
    acc = R.matmul(a, b, out_dtype="int32")
    a_rank, b_rank = int(a.ty.ndim), int(b.ty.ndim)
    az, bz = value_of(a_zero_point, params), value_of(b_zero_point, params)
    a_zero = az is not None and not az.any()
    b_zero = bz is not None and not bz.any()
    k = _static_shape(b, "a quantized matmul")[-2 if b_rank > 1 else 0]
    az32 = R.astype(a_zero_point, "int32")
    if int(a_zero_point.ty.ndim) == 1 and b_rank > 1:  # per row: [M] -> [M, 1]
        az32 = R.expand_dims(az32, axis=-1)
    bz32 = R.astype(b_zero_point, "int32")
    # The sums keep the contracted axis where the other operand gives the output one.
    col_axis = -2 if b_rank > 1 else None
    row_axis = -1 if a_rank > 1 else None
    if not a_zero:
        b_val = value_of(b, params)
        if b_val is not None and az is not None and az.ndim == 0:
            colsum = b_val.astype(np.int64).sum(axis=col_axis, keepdims=a_rank > 1 and b_rank > 1)
            acc = R.subtract(acc, relax.const((colsum * int(az)).astype("int32")))
        else:
            keep = a_rank > 1 and b_rank > 1
            colsum32 = R.sum(R.astype(b, "int32"), axis=col_axis, keepdims=keep)
            acc = R.subtract(acc, R.multiply(az32, colsum32))
    if not b_zero:
        rowsum = R.sum(R.astype(a, "int32"), axis=row_axis, keepdims=a_rank > 1 and b_rank > 1)
        acc = R.subtract(acc, R.multiply(rowsum, bz32))
        if not a_zero:
            acc = R.add(acc, R.multiply(R.multiply(az32, bz32), relax.const(k, "int32")))
    return acc
