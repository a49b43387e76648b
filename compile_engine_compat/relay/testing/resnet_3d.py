"""``relay.testing.resnet_3d``: ResNet v2 on video clips (3D convolutions), NCDHW or NDHWC.

The stages, units and filters are :mod:`.resnet`'s (its ``_plan`` by depth and frame height);
each convolution is 3D. Frames of height 32 or less start with a 3x3x3 convolution, larger ones
with a (3, 7, 7) stride (1, 2, 2) convolution and batch norm + ReLU, without a pool (as Relay's).
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload
from .resnet import plan

__all__ = ["get_net", "get_workload", "residual_unit", "resnet"]


def _conv(
    data: Expr, name: str, channels: int, kernel: Any, stride: Any, pad: Any, lay: Any
) -> Expr:
    return layers.conv3d(
        data=data,
        channels=channels,
        kernel_size=kernel,
        strides=stride,
        padding=pad,
        name=name,
        data_layout=lay[0],
        kernel_layout=lay[1],
    )


def _bn_relu(data: Expr, name: str, layout: str) -> Expr:
    return op.nn.relu(
        layers.batch_norm_infer(data=data, epsilon=2e-5, axis=layout.index("C"), name=name)
    )


def residual_unit(
    data: Expr,
    num_filter: int,
    stride: Any,
    dim_match: bool,
    name: str,
    bottle_neck: bool = True,
    data_layout: str = "NCDHW",
    kernel_layout: str = "OIDHW",
) -> Expr:
    """One pre-activation residual unit of 3D convolutions."""
    lay = (data_layout, kernel_layout)
    act1 = _bn_relu(data, f"{name}_bn1", data_layout)
    one, three = (1, 1, 1), (3, 3, 3)
    if bottle_neck:
        narrow = int(num_filter * 0.25)
        body = _conv(act1, f"{name}_conv1", narrow, one, stride, (0, 0, 0), lay)
        body = _bn_relu(body, f"{name}_bn2", data_layout)
        body = _conv(body, f"{name}_conv2", narrow, three, one, one, lay)
        body = _bn_relu(body, f"{name}_bn3", data_layout)
        body = _conv(body, f"{name}_conv3", num_filter, one, one, (0, 0, 0), lay)
    else:
        body = _conv(act1, f"{name}_conv1", num_filter, three, stride, one, lay)
        body = _bn_relu(body, f"{name}_bn2", data_layout)
        body = _conv(body, f"{name}_conv2", num_filter, three, one, one, lay)
    if dim_match:
        return op.add(body, data)
    shortcut = _conv(act1, f"{name}_sc", num_filter, one, stride, (0, 0, 0), lay)
    return op.add(body, shortcut)


def resnet(
    units: list[int],
    num_stages: int,
    filter_list: list[int],
    num_classes: int,
    data_shape: tuple[int, ...],
    bottle_neck: bool = True,
    layout: str = "NCDHW",
    dtype: str = "float32",
) -> Function:
    """The 3D network of ``num_stages`` stages of ``units[i]`` residual units each."""
    if len(units) != num_stages:
        raise ValueError(f"{len(units)} unit counts for {num_stages} stages")
    lay = (layout, "OIDHW" if layout == "NCDHW" else "DHWIO")
    data = var("data", shape=data_shape, dtype=dtype)
    body = layers.batch_norm_infer(
        data=data, epsilon=2e-5, axis=layout.index("C"), scale=False, name="bn_data"
    )
    if data_shape[layout.index("H")] <= 32:
        body = _conv(body, "conv0", filter_list[0], (3, 3, 3), (1, 1, 1), (1, 1, 1), lay)
    else:
        body = _conv(body, "conv0", filter_list[0], (3, 7, 7), (1, 2, 2), (1, 3, 3), lay)
        body = _bn_relu(body, "bn0", layout)
    for stage in range(num_stages):
        step = 1 if stage == 0 else 2
        for unit in range(units[stage]):
            body = residual_unit(
                body,
                filter_list[stage + 1],
                (step,) * 3 if unit == 0 else (1, 1, 1),
                unit != 0,
                name=f"stage{stage + 1}_unit{unit + 1}",
                bottle_neck=bottle_neck,
                data_layout=layout,
                kernel_layout=lay[1],
            )
    pooled = op.nn.adaptive_avg_pool3d(_bn_relu(body, "bn1", layout), (1, 1, 1), layout=layout)
    out = op.nn.softmax(
        layers.dense_add_bias(op.nn.batch_flatten(pooled), units=num_classes, name="fc1")
    )
    return Function(free_vars(out), out)


def get_net(
    batch_size: int,
    num_classes: int,
    num_layers: int = 50,
    image_shape: tuple[int, ...] = (3, 16, 112, 112),
    layout: str = "NCDHW",
    dtype: str = "float32",
    **kwargs: Any,
) -> Function:
    """3D ResNet-``num_layers`` for clips of ``image_shape`` (CDHW, or DHWC for NDHWC)."""
    height = image_shape[layout.index("H") - 1]
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
    image_shape: tuple[int, ...] = (3, 16, 112, 112),
    layout: str = "NCDHW",
    dtype: str = "float32",
    **kwargs: Any,
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    net = get_net(batch_size, num_classes, num_layers, image_shape, layout, dtype, **kwargs)
    return create_workload(net)
