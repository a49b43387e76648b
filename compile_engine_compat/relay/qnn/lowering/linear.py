"""The lowerings of ``qnn.conv2d``, ``qnn.conv2d_transpose``, ``qnn.dense`` and
``qnn.batch_matmul``: the int32 accumulation of ``(q_data - zp_data) * (q_kernel - zp_kernel)``.

TVM 0.19 wrote the sum as four terms (the int8 product, the two zero-point corrections and the
constant) and padded the data with its zero point; every term is int32 arithmetic, which wraps
modulo 2**32, so the shifted product computed here is the same integer, bit for bit, padding
included (a padded position contributes ``(zp - zp) * w = 0`` in both).
"""

from __future__ import annotations

from compile_engine_compat.relay.expr import Attrs, Expr
from compile_engine_compat.relay.qnn.lowering.common import (
    ArgType,
    call,
    expand_to_axis,
    is_scalar_equal,
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
    return _conv("nn.conv2d", "kernel_layout", args, attrs, types)


def lower_conv2d_transpose(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.conv2d_transpose``: the shifted inputs' int32 ``conv2d_transpose``."""
    return _conv("nn.conv2d_transpose", "kernel_layout", args, attrs, types)


def lower_dense(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.dense(data, weight, input_zero_point, kernel_zero_point, ...)``."""
    data, weight, data_zp, kernel_zp = args[:4]
    data_s = _shift(data, data_zp, types[2], len(types[0].shape), 0)
    weight_s = _shift(weight, kernel_zp, types[3], 2, 0)
    return call("nn.dense", data_s, weight_s, attrs.units, str(attrs.out_dtype) or "int32")


def lower_batch_matmul(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.batch_matmul(x, y, x_zero_point, y_zero_point, x_scale, y_scale)``."""
    x, y, x_zp, y_zp = args[:4]
    x_s = _shift(x, x_zp, types[2], len(types[0].shape), 0)
    y_s = _shift(y, y_zp, types[3], len(types[1].shape), 0)
    return call(
        "nn.batch_matmul", x_s, y_s, str(attrs.out_dtype) or "int32",
        bool(attrs.transpose_a), bool(attrs.transpose_b),
    )  # fmt: skip
