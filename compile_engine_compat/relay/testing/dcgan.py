"""``relay.testing.dcgan``: the DCGAN generator (Radford et al., 2015) for 64x64 images.

A dense layer lifts the code to a 4x4 map of ``8 * ngf`` channels; four stride-2 transposed
convolutions (the first three with batch norm and ReLU) double it to 64x64; tanh ends it.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["deconv2d", "deconv2d_bn_relu", "get_net", "get_workload"]

_KERNEL_LAYOUTS = {"NCHW": "IOHW", "NHWC": "HWOI"}


def deconv2d(
    data: Expr,
    ishape: tuple[int, ...],
    oshape: tuple[int, ...],
    kshape: tuple[int, int],
    layout: str,
    name: str,
    stride: tuple[int, int] = (2, 2),
) -> Expr:
    """A transposed convolution to ``oshape`` (C, H, W), padded so the size comes out exact."""
    if layout not in _KERNEL_LAYOUTS:
        raise ValueError(f"Invalid layout: {layout}")
    pad = tuple((k - 1) // 2 for k in kshape)
    adjust = tuple(
        (size + 2 * p - k) % s
        for size, p, k, s in zip(oshape[-2:], pad, kshape, stride, strict=True)
    )
    return layers.conv2d_transpose(
        data,
        kernel_size=kshape,
        strides=stride,
        channels=oshape[0],
        padding=pad,
        output_padding=adjust,
        data_layout=layout,
        kernel_layout=_KERNEL_LAYOUTS[layout],
        name=name,
    )


def deconv2d_bn_relu(data: Expr, prefix: str, **kwargs: Any) -> Expr:
    """:func:`deconv2d`, then batch norm without scale, then ReLU."""
    net = deconv2d(data, name=f"{prefix}_deconv", **kwargs)
    axis = kwargs.get("layout", "NCHW").index("C")
    net = layers.batch_norm_infer(
        net, epsilon=1e-5 + 1e-12, scale=False, axis=axis, name=f"{prefix}_batch_norm"
    )
    return op.nn.relu(net)


def get_net(
    batch_size: int,
    random_len: int = 100,
    oshape: tuple[int, ...] = (3, 64, 64),
    ngf: int = 128,
    code: Expr | None = None,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Function:
    """The generator of ``(batch_size, random_len)`` codes (or ``code``)."""
    if tuple(oshape[-2:]) != (64, 64):
        raise ValueError("Only support 64x64 image")
    if layout not in _KERNEL_LAYOUTS:
        raise ValueError(f"Invalid layout: {layout}")
    if code is None:
        code = var("data", dtype=dtype, shape=(batch_size, random_len))
    dense = op.nn.relu(op.nn.dense(code, var("dense_weight"), units=4 * 4 * ngf * 8))
    seed_shape = (-1, ngf * 8, 4, 4) if layout == "NCHW" else (-1, 4, 4, ngf * 8)
    net = op.reshape(dense, newshape=seed_shape)
    channels, size = ngf * 8, 4
    for stage in (2, 3, 4):
        shape_in = (channels, size, size)
        channels, size = channels // 2, size * 2
        net = deconv2d_bn_relu(
            net,
            ishape=shape_in,
            oshape=(channels, size, size),
            kshape=(4, 4),
            layout=layout,
            prefix=f"g{stage}",
        )
    net = deconv2d(
        net,
        ishape=(channels, size, size),
        oshape=tuple(oshape[-3:]),
        kshape=(4, 4),
        layout=layout,
        name="g5_deconv",
    )
    out = op.tanh(net)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    oshape: tuple[int, ...] = (3, 64, 64),
    ngf: int = 128,
    random_len: int = 100,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    net = get_net(batch_size, random_len, oshape=oshape, ngf=ngf, layout=layout, dtype=dtype)
    return create_workload(net)
