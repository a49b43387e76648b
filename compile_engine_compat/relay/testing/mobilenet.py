"""``relay.testing.mobilenet``: MobileNet v1 (a conv block, then 13 depthwise-separable blocks)."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["conv_block", "get_workload", "mobile_net", "separable_conv_block"]

#: (input channels, output channels, downsample) of the separable blocks, before ``alpha``.
_BLOCKS = (
    (32, 64, False),
    (64, 128, True),
    (128, 128, False),
    (128, 256, True),
    (256, 256, False),
    (256, 512, True),
)
_DEEP_TAIL = (*((512, 512, False),) * 5, (512, 1024, True), (1024, 1024, False))
_SHALLOW_TAIL = ((512, 1024, True), (1024, 1024, True))


def conv_block(
    data: Expr,
    name: str,
    channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
) -> Expr:
    """Convolution, batch norm (on axis 1, as Relay's did), ReLU."""
    conv = layers.conv2d(
        data=data,
        channels=channels,
        kernel_size=kernel_size,
        strides=strides,
        padding=padding,
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=f"{name}_conv",
    )
    return op.nn.relu(layers.batch_norm_infer(data=conv, epsilon=epsilon, name=f"{name}_bn"))


def separable_conv_block(
    data: Expr,
    name: str,
    depthwise_channels: int,
    pointwise_channels: int,
    kernel_size: tuple[int, int] = (3, 3),
    downsample: bool = False,
    padding: tuple[int, int] = (1, 1),
    epsilon: float = 1e-5,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Expr:
    """A depthwise convolution and a 1x1 convolution, each followed by batch norm and ReLU."""
    if layout not in ("NCHW", "NHWC"):
        raise ValueError(f"Invalid layout: {layout}")
    shape = (
        (depthwise_channels, 1, *kernel_size)
        if layout == "NCHW"
        else (*kernel_size, depthwise_channels, 1)
    )
    axis = layout.index("C")
    stride = (2, 2) if downsample else (1, 1)
    depthwise = layers.conv2d(
        data=data,
        weight=var(f"{name}_weight", shape=shape, dtype=dtype),
        channels=depthwise_channels,
        groups=depthwise_channels,
        kernel_size=kernel_size,
        strides=stride,
        padding=padding,
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout, True),
        name=f"{name}_depthwise_conv1",
    )
    act = op.nn.relu(
        layers.batch_norm_infer(data=depthwise, epsilon=epsilon, axis=axis, name=f"{name}_bn1")
    )
    pointwise = layers.conv2d(
        data=act,
        channels=pointwise_channels,
        kernel_size=(1, 1),
        strides=(1, 1),
        padding=(0, 0),
        data_layout=layout,
        kernel_layout=layers.conv_kernel_layout(layout),
        name=f"{name}_conv2",
    )
    return op.nn.relu(
        layers.batch_norm_infer(data=pointwise, epsilon=epsilon, axis=axis, name=f"{name}_bn2")
    )


def mobile_net(
    num_classes: int = 1000,
    data_shape: tuple[int, ...] = (1, 3, 224, 224),
    dtype: str = "float32",
    alpha: float = 1.0,
    is_shallow: bool = False,
    layout: str = "NCHW",
) -> Function:
    """MobileNet with width multiplier ``alpha`` (``is_shallow`` drops five 512-wide blocks)."""
    body = conv_block(
        var("data", shape=data_shape, dtype=dtype),
        "conv_block_1",
        int(32 * alpha),
        strides=(2, 2),
        layout=layout,
    )
    plan = _BLOCKS + (_SHALLOW_TAIL if is_shallow else _DEEP_TAIL)
    for index, (inputs, outputs, downsample) in enumerate(plan, start=1):
        body = separable_conv_block(
            body,
            f"separable_conv_block_{index}",
            int(inputs * alpha),
            int(outputs * alpha),
            downsample=downsample,
            layout=layout,
            dtype=dtype,
        )
    flat = op.nn.batch_flatten(op.nn.global_avg_pool2d(body, layout=layout))
    logits = op.nn.bias_add(op.nn.dense(flat, var("fc_weight"), units=num_classes), var("fc_bias"))
    out = op.nn.softmax(logits)
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
    layout: str = "NCHW",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of MobileNet (``alpha=1``, the deep variant)."""
    net = mobile_net(num_classes, (batch_size, *image_shape), dtype, 1.0, False, layout)
    return create_workload(net)
