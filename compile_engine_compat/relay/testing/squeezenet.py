"""``relay.testing.squeezenet``: SqueezeNet 1.0 or 1.1 (fire modules of squeeze/expand convs)."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_net", "get_workload"]

_POOL = "pool"
#: Version -> (first conv channels, kernel, padding), then the layers: "pool" or a fire module's
#: (squeeze, expand 1x1, expand 3x3) channels.
_PLANS: dict[str, tuple[tuple[int, int, int], tuple[Any, ...]]] = {
    "1.0": (
        (96, 7, 3),
        (
            _POOL,
            (16, 64, 64),
            (16, 64, 64),
            (32, 128, 128),
            _POOL,
            (32, 128, 128),
            (48, 192, 192),
            (48, 192, 192),
            (64, 256, 256),
            _POOL,
            (64, 256, 256),
        ),
    ),
    "1.1": (
        (64, 3, 1),
        (
            _POOL,
            (16, 64, 64),
            (16, 64, 64),
            _POOL,
            (32, 128, 128),
            (32, 128, 128),
            _POOL,
            (48, 192, 192),
            (48, 192, 192),
            (64, 256, 256),
            (64, 256, 256),
        ),
    ),
}


def _conv_relu(net: Expr, channels: int, kernel: int, padding: int, prefix: str, **kw: Any) -> Expr:
    conv = layers.conv2d(
        net,
        channels=channels,
        kernel_size=(kernel, kernel),
        padding=(padding, padding),
        name=f"{prefix}_conv",
        **kw,
    )
    return op.nn.relu(op.nn.bias_add(conv, var(f"{prefix}_conv_bias")))


def _fire(net: Expr, squeeze: int, expand1x1: int, expand3x3: int, prefix: str) -> Expr:
    net = _conv_relu(net, squeeze, 1, 0, f"{prefix}_input")
    left = _conv_relu(net, expand1x1, 1, 0, f"{prefix}_left")
    right = _conv_relu(net, expand3x3, 3, 1, f"{prefix}_right")
    return op.concatenate((left, right), axis=1)


def get_net(
    batch_size: int, image_shape: tuple[int, ...], num_classes: int, version: str, dtype: str
) -> Function:
    """SqueezeNet ``version`` ("1.0" or "1.1") for ``(batch_size, *image_shape)`` inputs."""
    if version not in _PLANS:
        raise ValueError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 expected")
    (channels, kernel, padding), plan = _PLANS[version]
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    conv1 = layers.conv2d(
        data,
        channels=channels,
        kernel_size=(kernel, kernel),
        strides=(2, 2),
        padding=(padding, padding),
        name="conv1",
    )
    net = op.nn.relu(op.nn.bias_add(conv1, var("conv1_bias")))
    fires = 0
    for step in plan:
        if step == _POOL:
            net = op.nn.max_pool2d(net, pool_size=(3, 3), strides=(2, 2))
        else:
            fires += 1
            squeeze, expand1x1, expand3x3 = step
            net = _fire(net, squeeze, expand1x1, expand3x3, f"fire{fires}")
    net = _conv_relu(op.nn.dropout(net, rate=0.5), num_classes, 1, 0, "conv_final")
    out = op.nn.softmax(op.nn.batch_flatten(op.nn.global_avg_pool2d(net)))
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    version: str = "1.0",
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    return create_workload(get_net(batch_size, image_shape, num_classes, version, dtype))
