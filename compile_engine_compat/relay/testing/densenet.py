"""``relay.testing.densenet``: DenseNet 121/161/169/201 (dense blocks joined by transitions)."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_workload"]

#: Depth -> (initial features, growth rate, layers per dense block).
_SPECS = {
    121: (64, 32, [6, 12, 24, 16]),
    161: (96, 48, [6, 12, 36, 24]),
    169: (69, 32, [6, 12, 32, 32]),
    201: (64, 32, [6, 12, 48, 32]),
}


def _bn_relu_conv(data: Expr, bn: str, conv: str, channels: int, kernel: int, pad: int) -> Expr:
    act = op.nn.relu(layers.batch_norm_infer(data, name=bn))
    return layers.conv2d(
        act, channels=channels, kernel_size=(kernel, kernel), padding=(pad, pad), name=conv
    )


def _dense_block(data: Expr, count: int, bn_size: int, growth: int, block: int) -> Expr:
    """``count`` layers, each fed by the previous one; their outputs are concatenated."""
    outputs = []
    for layer in range(count):
        tag = f"{block}_{layer}"
        data = _bn_relu_conv(data, f"batch_1_{tag}", f"conv2d_1_{tag}", bn_size * growth, 1, 0)
        data = _bn_relu_conv(data, f"batch_2_{tag}", f"conv2d_2_{tag}", growth, 3, 1)
        outputs.append(data)
    return op.concatenate(outputs, 1)


def _dense_net(
    num_init_features: int,
    growth_rate: int,
    block_config: list[int],
    data_shape: tuple[int, ...],
    data_dtype: str,
    bn_size: int = 4,
    classes: int = 1000,
) -> Function:
    data = var("data", shape=data_shape, dtype=data_dtype)
    stem = layers.conv2d(
        data,
        channels=num_init_features,
        kernel_size=(7, 7),
        strides=(2, 2),
        padding=(3, 3),
        name="conv1",
    )
    stem = op.nn.relu(layers.batch_norm_infer(stem, name="batch1"))
    body = op.nn.max_pool2d(stem, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    features = num_init_features
    last = len(block_config) - 1
    for block, count in enumerate(block_config):
        body = _dense_block(body, count, bn_size, growth_rate, block)
        features += count * growth_rate
        if block != last:
            features //= 2
            body = _bn_relu_conv(body, f"batch_t_{block}", f"conv_t_{block}", features, 1, 0)
            body = op.nn.avg_pool2d(body, pool_size=(2, 2), strides=(2, 2))
    body = op.nn.relu(layers.batch_norm_infer(body, name="batch2"))
    flat = op.nn.batch_flatten(op.nn.avg_pool2d(body, pool_size=(7, 7)))
    out = layers.dense_add_bias(flat, units=classes, name="dense")
    return Function(free_vars(out), out)


def get_workload(
    densenet_size: int = 121,
    classes: int = 1000,
    batch_size: int = 4,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of DenseNet-``densenet_size`` (no softmax, as in Relay)."""
    if densenet_size not in _SPECS:
        raise ValueError(f"densenet_size must be one of {sorted(_SPECS)}, got {densenet_size}")
    init, growth, config = _SPECS[densenet_size]
    net = _dense_net(init, growth, config, (batch_size, *image_shape), dtype, 4, classes)
    return create_workload(net)
