"""The lowerings of ``qnn.conv2d``, ``qnn.conv2d_transpose``, ``qnn.dense`` and
``qnn.batch_matmul``: the int32 accumulation of ``(q_data - zp_data) * (q_kernel - zp_kernel)``.

``qnn.conv2d`` (NCHW/OIHW), ``qnn.dense`` and ``qnn.batch_matmul`` with constant zero points
(a scalar data zero point) are written as TVM 0.19 wrote them: the 8-bit op itself with
``out_dtype="int32"`` (the data padded with its zero point) less the zero-point corrections
``zp_k * sum(window of data) + zp_d * sum(kernel) - zp_d * zp_k * K``, each term left out where
its zero point is 0, so the model route's int8 (VNNI) kernels run the product. Every term is
int32 arithmetic, which wraps modulo 2**32: the result is the shifted product's integer, bit for
bit. Any other case (a zero point that is not a constant, another layout, another ``out_dtype``,
or a data zero point its dtype cannot hold, as padding) is the int32 op on the shifted inputs,
the same integer; ``qnn.conv2d_transpose`` always is, as
TVM 0.19's legalization (int16 shifted inputs) was.
"""

from __future__ import annotations

import numpy as np

from compile_engine_compat.relay.expr import Attrs, Constant, Expr, const
from compile_engine_compat.relay.qnn.lowering.common import (
    ArgType,
    call,
    expand_to_axis,
    is_scalar_equal,
    qrange,
)

__all__ = ["lower_batch_matmul", "lower_conv2d", "lower_conv2d_transpose", "lower_dense"]


def _shift(x: Expr, zp: Expr, zpt: ArgType, rank: int, axis: int) -> Expr:
    """``int32(x) - zp``, a per-channel zero point broadcast along ``axis``."""
    out = call("cast", x, "int32")
    if is_scalar_equal(zp, 0):
        return out
    zp32 = call("cast", zp, "int32")
    if zpt.shape and zpt.shape != (1,):
        zp32 = expand_to_axis(call("reshape", zp32, [-1]), rank, axis)
    elif zpt.shape:
        zp32 = call("reshape", zp32, [])
    return call("subtract", out, zp32)


def _zero_points(data_zp: Expr, kernel_zp: Expr) -> tuple[int, np.ndarray] | None:
    """The data zero point (one value) and the kernel's (one or one per channel), or None when
    either is not a constant or the data's is per channel."""
    if not isinstance(data_zp, Constant) or not isinstance(kernel_zp, Constant):
        return None
    zd = np.asarray(data_zp.data.numpy()).astype("int64").reshape(-1)
    zk = np.asarray(kernel_zp.data.numpy()).astype("int64").reshape(-1)
    if zd.size != 1:
        return None
    return int(zd[0]), zk


def _int32(values: np.ndarray | int, shape: tuple[int, ...] = ()) -> Expr:
    """An int32 constant, wrapped modulo 2**32 as int32 arithmetic is."""
    wrapped = ((np.asarray(values, dtype="int64") + 2**31) % 2**32 - 2**31).astype("int32")
    return const(wrapped.reshape(shape) if wrapped.size > 1 else wrapped.reshape(()), "int32")


def _kernel_zp(zk: np.ndarray, shape: tuple[int, ...]) -> Expr:
    """The kernel zero point, one value or one per output channel shaped to ``shape``."""
    return _int32(zk, shape if zk.size > 1 else ())


def _combine(product: Expr, data_term: Expr | None, kernel_term: Expr | None,
             constant: np.ndarray) -> Expr:  # fmt: skip
    """``product - data_term - kernel_term + constant``, absent terms left out."""
    out = product
    for term in (data_term, kernel_term):
        if term is not None:
            out = call("subtract", out, term)
    if np.any(constant != 0):
        out = call("add", out, _int32(constant, constant.shape))
    return out


def _conv2d_terms(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr | None:
    """TVM 0.19's four-term ``qnn.conv2d`` (NCHW, OIHW), or None where it does not apply."""
    data, kernel, data_zp, kernel_zp = args[:4]
    zps = _zero_points(data_zp, kernel_zp)
    out_dtype = str(attrs.out_dtype) or "int32"
    if (
        zps is None
        or out_dtype != "int32"
        or str(attrs.data_layout) != "NCHW"
        or str(attrs.kernel_layout) != "OIHW"
        or len(types[1].shape) != 4
    ):
        return None
    zd, zk = zps
    low, high = qrange(types[0].dtype)
    if not low <= zd <= high:
        return None  # the data's dtype cannot hold its padding
    channels, per_group, kh, kw = types[1].shape
    fields = {name: attrs[name] for name in attrs.keys()}
    fields["out_dtype"] = "int32"
    pads = [int(p) for p in attrs.padding]
    if zd != 0 and any(pads):
        top, left, bottom, right = pads if len(pads) == 4 else (pads * 2)[:4]
        data = call("nn.pad", data, [[0, 0], [0, 0], [top, bottom], [left, right]], zd)
        fields["padding"] = [0, 0, 0, 0]
    product = call("nn.conv2d", data, kernel, **fields)
    data_term = None
    if np.any(zk != 0):
        windows = call("cast", data, "int32")
        ones_shape = (channels, per_group, kh, kw)
        if int(attrs.groups) == 1:
            windows = call("sum", windows, axis=[1], keepdims=True)
            ones_shape = (1, 1, kh, kw)
        ones = const(np.ones(ones_shape, "int32"), "int32")
        sums = call("nn.conv2d", windows, ones, **{**fields, "channels": ones_shape[0]})
        data_term = call("multiply", sums, _kernel_zp(zk, (1, channels, 1, 1)))
    kernel_term = None
    if zd != 0:
        sums = call("sum", call("cast", kernel, "int32"), axis=[1, 2, 3])
        sums = call("reshape", sums, [1, channels, 1, 1])
        kernel_term = call("multiply", sums, _int32(zd))
    constant = zd * zk * (per_group * kh * kw)
    return _combine(product, data_term, kernel_term, constant.reshape(-1, 1, 1))


def _conv(op_name: str, layout_key: str, args: list[Expr], attrs: Attrs,
          types: list[ArgType]) -> Expr:  # fmt: skip
    data, kernel, data_zp, kernel_zp = args[:4]
    kernel_layout = str(getattr(attrs, layout_key))
    data_s = _shift(data, data_zp, types[2], len(types[0].shape), 0)
    kernel_s = _shift(kernel, kernel_zp, types[3], len(types[1].shape), kernel_layout.index("O"))
    fields = {name: attrs[name] for name in attrs.keys()}
    fields["out_dtype"] = str(attrs.out_dtype) or "int32"
    return call(op_name, data_s, kernel_s, **fields)


def lower_conv2d(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.conv2d(data, kernel, input_zero_point, kernel_zero_point, input_scale,
    kernel_scale, ...)``.

    A depthwise kernel with a channel multiplier given as Relay's ``(C, M, kh, kw)`` (OIHW,
    ``groups == C``, ``channels == C * M``) is reshaped to ``(C * M, 1, kh, kw)``: output
    channel ``c * M + m`` reads ``kernel[c, m]`` in both.
    """
    groups, kshape = int(attrs.groups), types[1].shape
    channels = attrs.channels
    if (
        str(attrs.kernel_layout) == "OIHW"
        and groups > 1
        and channels is not None
        and len(kshape) == 4
        and kshape[0] == groups
        and kshape[1] > 1
        and int(channels) == kshape[0] * kshape[1]
    ):
        depthwise = (int(channels), 1, *kshape[2:])
        args = [args[0], call("reshape", args[1], list(depthwise)), *args[2:]]
        types = [types[0], ArgType(depthwise, types[1].dtype), *types[2:]]
    terms = _conv2d_terms(args, attrs, types)
    if terms is not None:
        return terms
    return _conv("nn.conv2d", "kernel_layout", args, attrs, types)


def lower_conv2d_transpose(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.conv2d_transpose``: the shifted inputs' int32 ``conv2d_transpose``."""
    return _conv("nn.conv2d_transpose", "kernel_layout", args, attrs, types)


def lower_dense(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.dense(data, weight, input_zero_point, kernel_zero_point, ...)``."""
    data, weight, data_zp, kernel_zp = args[:4]
    out_dtype = str(attrs.out_dtype) or "int32"
    zps = _zero_points(data_zp, kernel_zp)
    if zps is None or out_dtype != "int32" or len(types[1].shape) != 2:
        data_s = _shift(data, data_zp, types[2], len(types[0].shape), 0)
        weight_s = _shift(weight, kernel_zp, types[3], 2, 0)
        return call("nn.dense", data_s, weight_s, attrs.units, out_dtype)
    zd, zk = zps
    units, depth = types[1].shape
    product = call("nn.dense", data, weight, attrs.units, "int32")
    data_term = None
    if np.any(zk != 0):
        sums = call("sum", call("cast", data, "int32"), axis=[-1], keepdims=True)
        data_term = call("multiply", sums, _kernel_zp(zk, (units,)))
    kernel_term = None
    if zd != 0:
        sums = call("sum", call("cast", weight, "int32"), axis=[1])
        kernel_term = call("multiply", sums, _int32(zd))
    return _combine(product, data_term, kernel_term, zd * zk * depth)


def lower_batch_matmul(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale)``."""
    x, y, x_zp, y_zp = args[:4]
    out_dtype = str(attrs.out_dtype) or "int32"
    transpose_a, transpose_b = bool(attrs.transpose_a), bool(attrs.transpose_b)
    zps = _zero_points(x_zp, y_zp)
    if zps is None or zps[1].size != 1 or out_dtype != "int32":
        x_s = _shift(x, x_zp, types[2], len(types[0].shape), 0)
        y_s = _shift(y, y_zp, types[3], len(types[1].shape), 0)
        return call("nn.batch_matmul", x_s, y_s, out_dtype, transpose_a, transpose_b)
    zx, zy = zps[0], int(zps[1][0])
    x_reduce, y_reduce = (1 if transpose_a else 2), (2 if transpose_b else 1)
    depth = types[0].shape[x_reduce]
    product = call("nn.batch_matmul", x, y, "int32", transpose_a, transpose_b)
    x_term = None
    if zy != 0:
        sums = call("sum", call("cast", x, "int32"), axis=[x_reduce])
        x_term = call("multiply", call("expand_dims", sums, 2, 1), _int32(zy))
    y_term = None
    if zx != 0:
        sums = call("sum", call("cast", y, "int32"), axis=[y_reduce])
        y_term = call("multiply", call("expand_dims", sums, 1, 1), _int32(zx))
    return _combine(product, x_term, y_term, np.asarray(zx * zy * depth))
