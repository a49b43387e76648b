"""``relay.testing.vgg``: VGG 11/13/16/19 (Simonyan and Zisserman, 2014), optional batch norm."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_classifier", "get_feature", "get_net", "get_workload"]

_FILTERS = [64, 128, 256, 512, 512]
#: Depth -> convolutions in each of the five stages.
_SPEC = {11: [1, 1, 2, 2, 2], 13: [2, 2, 2, 2, 2], 16: [2, 2, 3, 3, 3], 19: [2, 2, 4, 4, 4]}


def get_feature(
    internal_layer: Expr, layers_per_stage: list[int], filters: list[int], batch_norm: bool = False
) -> Expr:
    """The convolution stages: 3x3 conv + bias (+ BN) + ReLU, then a 2x2 max pool per stage."""
    for stage, (count, channels) in enumerate(zip(layers_per_stage, filters, strict=True), 1):
        for conv in range(1, count + 1):
            tag = f"{stage}_{conv}"
            internal_layer = layers.conv2d(
                data=internal_layer,
                kernel_size=(3, 3),
                padding=(1, 1),
                channels=channels,
                name=f"conv{tag}",
            )
            internal_layer = op.nn.bias_add(internal_layer, var(f"conv{tag}_bias"))
            if batch_norm:
                internal_layer = layers.batch_norm_infer(data=internal_layer, name=f"bn{tag}")
            internal_layer = op.nn.relu(internal_layer)
        internal_layer = op.nn.max_pool2d(internal_layer, pool_size=(2, 2), strides=(2, 2))
    return internal_layer


def get_classifier(input_data: Expr, num_classes: int) -> Expr:
    """Two 4096-wide dense layers with ReLU and dropout, then the class layer."""
    hidden = op.nn.batch_flatten(input_data)
    for name in ("fc6", "fc7"):
        hidden = layers.dense_add_bias(data=hidden, units=4096, name=name)
        hidden = op.nn.dropout(op.nn.relu(hidden), rate=0.5)
    return layers.dense_add_bias(data=hidden, units=num_classes, name="fc8")


def get_net(
    batch_size: int,
    image_shape: tuple[int, ...],
    num_classes: int,
    dtype: str,
    num_layers: int = 11,
    batch_norm: bool = False,
) -> Function:
    """VGG-``num_layers`` with softmax."""
    if num_layers not in _SPEC:
        raise ValueError(f"Invalid num_layers {num_layers}. Choices are 11,13,16,19.")
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    features = get_feature(data, _SPEC[num_layers], _FILTERS, batch_norm)
    out = op.nn.softmax(get_classifier(features, num_classes))
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 224, 224),
    dtype: str = "float32",
    num_layers: int = 11,
    batch_norm: bool = False,
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    net = get_net(batch_size, image_shape, num_classes, dtype, num_layers, batch_norm)
    return create_workload(net)
