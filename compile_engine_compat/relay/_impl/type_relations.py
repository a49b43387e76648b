"""The input types Relay's type relations inferred for untyped weights.

``relay.nn.conv2d(x, relay.var("w"), channels=8, kernel_size=3)`` gave ``w`` the shape the op
needs; so did ``dense`` (``units``), ``bias_add`` and the norms (one value per channel). A row
names one of these as its ``infer_inputs``; the emitter
(:mod:`compile_engine_compat.relay._impl.to_relax`) calls it for a call with untyped inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.relay._impl.layouts import layout_axes
from compile_engine_compat.relay.expr import Attrs
from compile_engine_compat.relay.ty import TensorType

__all__ = ["conv_weight", "deformable_conv_inputs", "dense_weight", "matmul_weight", "per_channel"]


def _need(attrs: Attrs, *names: str) -> list[Any]:
    values = [attrs[n] for n in names]
    if any(v is None for v in values):
        raise TypeError(f"an untyped weight needs {' and '.join(names)} to infer its shape")
    return values


def conv_weight(transpose: bool) -> Callable[[list[Any], Attrs], list[Any]]:
    """A convolution's weight, from ``channels``, ``kernel_size``, ``groups`` and the layouts
    (packed ones too: ``NCHW4n4c`` data, ``OIHW4o4i`` weights)."""

    def infer(types: list[Any], attrs: Attrs) -> list[Any]:
        data = types[0]
        channels, kernel = _need(attrs, "channels", "kernel_size")
        data_axes = [axis for axis, _ in layout_axes(str(attrs.data_layout))]
        in_channels = 1
        for axis in ("C", "c"):  # the channels of a packed layout: C times c
            if axis in data_axes:
                in_channels *= int(data.shape[data_axes.index(axis)])
        groups = int(attrs.groups)
        sizes = {"O": int(channels) // groups if transpose else int(channels)}
        sizes["I"] = in_channels if transpose else in_channels // groups
        kernel_axes = layout_axes(str(attrs.kernel_layout))
        for axis, factor in kernel_axes:
            if factor is not None and axis.upper() in sizes:
                sizes[axis.upper()] //= factor  # the outer axis of a split one
        spatial = iter(int(k) for k in kernel)
        shape = [
            factor if factor is not None else sizes[axis] if axis in sizes else next(spatial)
            for axis, factor in kernel_axes
        ]
        return [data, TensorType(shape, data.dtype)]

    return infer


def dense_weight(types: list[Any], attrs: Attrs) -> list[Any]:
    """``nn.dense``'s weight, ``(units, in_features)``."""
    (units,) = _need(attrs, "units")
    data = types[0]
    return [data, TensorType((int(units), data.shape[-1]), data.dtype)]


def matmul_weight(types: list[Any], attrs: Attrs) -> list[Any]:
    """``nn.matmul``'s second operand from ``units``: ``(in_features, units)``, or
    ``(units, in_features)`` with ``transpose_b``; ``in_features`` is ``tensor_a``'s last
    dimension, its second last with ``transpose_a``."""
    (units,) = _need(attrs, "units")
    data = types[0]
    depth = data.shape[-2] if attrs.transpose_a else data.shape[-1]
    shape = (int(units), depth) if attrs.transpose_b else (depth, int(units))
    return [data, TensorType(shape, data.dtype)]


def per_channel(types: list[Any], attrs: Attrs) -> list[Any]:
    """Every input after the data is one value per channel (``attrs.axis``)."""
    data = types[0]
    channel = data.shape[int(attrs.axis)]
    return [data] + [TensorType((channel,), data.dtype) for _ in types[1:]]


def deformable_conv_inputs(types: list[Any], attrs: Attrs) -> list[Any]:
    """``nn.deformable_conv2d``'s offset and weight: the offset holds ``(y, x)`` for each kernel
    tap of each deformable group at each output pixel, laid out as the data."""
    data = types[0]
    layout = str(attrs.data_layout)
    kernel = [int(k) for k in _need(attrs, "kernel_size")[0]]
    top, left, bottom, right = (int(p) for p in attrs.padding)
    pads = ((top, bottom), (left, right))
    out = []
    for axis, k, stride, dilation, (low, high) in zip(
        (layout.index("H"), layout.index("W")), kernel, attrs.strides, attrs.dilation, pads
    ):
        size = int(data.shape[axis]) + low + high - int(dilation) * (k - 1) - 1
        out.append(size // int(stride) + 1)
    taps = 2 * kernel[0] * kernel[1] * int(attrs.deformable_groups)
    sizes = {"N": data.shape[layout.index("N")], "C": taps, "H": out[0], "W": out[1]}
    offset = TensorType([sizes[c] for c in layout], data.dtype)
    weight = conv_weight(False)(types, attrs)[1]
    return [data, offset, weight]
