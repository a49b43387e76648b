"""``relay.testing.resnet``: ResNet v2 (pre-activation), in NCHW or NHWC.

Images of height 28 or less get the CIFAR network (three stages, depth ``6n+2`` or ``9n+2``);
larger ones the ImageNet network (four stages; depths 18 to 269). Images of height 32 or less
start with a 3x3 convolution, larger ones with a 7x7 stride-2 convolution and a max pool.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_net", "get_workload", "plan", "residual_unit", "resnet"]

#: ImageNet depth -> units per stage.
_IMAGENET_UNITS = {
    18: [2, 2, 2, 2],
    34: [3, 4, 6, 3],
    50: [3, 4, 6, 3],
    101: [3, 4, 23, 3],
    152: [3, 8, 36, 3],
    200: [3, 24, 36, 3],
    269: [3, 30, 48, 8],
}


class _Layout:
    """The data and kernel layouts of one network, and the channel axis batch norm uses."""

    def __init__(self, data_layout: str, kernel_layout: str) -> None:
        self.data = data_layout
        self.kernel = kernel_layout
        self.channel_axis = data_layout.index("C")

    def conv(
        self, data: Expr, name: str, channels: int, kernel: int, stride: Any, pad: int
    ) -> Expr:
        return layers.conv2d(
            data=data,
            channels=channels,
            kernel_size=(kernel, kernel),
            strides=stride,
            padding=(pad, pad),
            name=name,
            data_layout=self.data,
            kernel_layout=self.kernel,
        )

    def bn_relu(self, data: Expr, name: str) -> Expr:
        normed = layers.batch_norm_infer(data=data, epsilon=2e-5, axis=self.channel_axis, name=name)
        return op.nn.relu(normed)


def residual_unit(
    data: Expr,
    num_filter: int,
    stride: Any,
    dim_match: bool,
    name: str,
    bottle_neck: bool = True,
    data_layout: str = "NCHW",
    kernel_layout: str = "IOHW",
) -> Expr:
    """One pre-activation residual unit: BN-ReLU-conv twice (or three times, bottlenecked)."""
    lay = _Layout(data_layout, kernel_layout)
    act1 = lay.bn_relu(data, f"{name}_bn1")
    if bottle_neck:
        narrow = int(num_filter * 0.25)
        body = lay.conv(act1, f"{name}_conv1", narrow, 1, stride, 0)
        body = lay.conv(lay.bn_relu(body, f"{name}_bn2"), f"{name}_conv2", narrow, 3, (1, 1), 1)
        body = lay.conv(lay.bn_relu(body, f"{name}_bn3"), f"{name}_conv3", num_filter, 1, (1, 1), 0)
    else:
        body = lay.conv(act1, f"{name}_conv1", num_filter, 3, stride, 1)
        body = lay.conv(lay.bn_relu(body, f"{name}_bn2"), f"{name}_conv2", num_filter, 3, (1, 1), 1)
    shortcut = data if dim_match else lay.conv(act1, f"{name}_sc", num_filter, 1, stride, 0)
    return op.add(body, shortcut)


def resnet(
    units: list[int],
    num_stages: int,
    filter_list: list[int],
    num_classes: int,
    data_shape: tuple[int, ...],
    bottle_neck: bool = True,
    layout: str = "NCHW",
    dtype: str = "float32",
) -> Function:
    """The network of ``num_stages`` stages of ``units[i]`` residual units each."""
    if len(units) != num_stages:
        raise ValueError(f"{len(units)} unit counts for {num_stages} stages")
    lay = _Layout(layout, "OIHW" if layout == "NCHW" else "HWIO")
    data = var("data", shape=data_shape, dtype=dtype)
    body = layers.batch_norm_infer(
        data=data, epsilon=2e-5, axis=lay.channel_axis, scale=False, name="bn_data"
    )
    height = data_shape[layout.index("H")]
    if height <= 32:  # CIFAR-sized input
        body = lay.conv(body, "conv0", filter_list[0], 3, (1, 1), 1)
    else:  # ImageNet-sized input
        body = lay.bn_relu(lay.conv(body, "conv0", filter_list[0], 7, (2, 2), 3), "bn0")
        body = op.nn.max_pool2d(
            body, pool_size=(3, 3), strides=(2, 2), padding=(1, 1), layout=layout
        )
    for stage in range(num_stages):
        step = 1 if stage == 0 else 2
        for unit in range(units[stage]):
            body = residual_unit(
                body,
                filter_list[stage + 1],
                (step, step) if unit == 0 else (1, 1),
                unit != 0,
                name=f"stage{stage + 1}_unit{unit + 1}",
                bottle_neck=bottle_neck,
                data_layout=layout,
                kernel_layout=lay.kernel,
            )
    pooled = op.nn.global_avg_pool2d(lay.bn_relu(body, "bn1"), layout=layout)
    out = op.nn.softmax(
        layers.dense_add_bias(op.nn.batch_flatten(pooled), units=num_classes, name="fc1")
    )
    return Function(free_vars(out), out)


def plan(num_layers: int, height: int) -> tuple[list[int], list[int], bool]:
    """(units per stage, filters, bottleneck) for a depth and an image height."""
    if height <= 28:
        if num_layers >= 164 and (num_layers - 2) % 9 == 0:
            return [(num_layers - 2) // 9] * 3, [16, 64, 128, 256], True
        if num_layers < 164 and (num_layers - 2) % 6 == 0:
            return [(num_layers - 2) // 6] * 3, [16, 16, 32, 64], False
    elif num_layers in _IMAGENET_UNITS:
        if num_layers >= 50:
            return _IMAGENET_UNITS[num_layers], [64, 256, 512, 1024, 2048], True
        return _IMAGENET_UNITS[num_layers], [64, 64, 128, 256, 512], False
    raise ValueError(f"no experiments done on num_layers {num_layers}")


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: tuple[int, ...] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
    **kwargs: Any,
) -> Function:
    """ResNet-``num_layers`` for ``image_shape`` in ``layout`` (CHW or HWC order)."""
    height = image_shape[0] if layout == "NHWC" else image_shape[1]
    units, filters, bottle_neck = plan(num_layers, height)
    return resnet(
        units=units,
        num_stages=len(units),
        filter_list=filters,
        num_classes=num_classes,
        data_shape=(batch_size, *image_shape),
        bottle_neck=bottle_neck,
        layout=layout,
        dtype=dtype,
    )


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    num_layers: int = 18,
    image_shape: tuple[int, ...] = (3, 224, 224),
    layout: str = "NCHW",
    dtype: str = "float32",
    **kwargs: Any,
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    net = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype, **kwargs)
    return create_workload(net)
