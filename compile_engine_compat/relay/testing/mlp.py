"""``relay.testing.mlp``: a three-layer perceptron (128, 64, ``num_classes``) with softmax."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from .init import create_workload
from .layers import dense_add_bias

__all__ = ["get_net", "get_workload"]


def get_net(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
) -> Function:
    """The MLP as a Relay function of ``data`` (``(batch_size, *image_shape)``) and weights."""
    hidden = op.nn.batch_flatten(var("data", shape=(batch_size, *image_shape), dtype=dtype))
    for index, units in enumerate((128, 64), start=1):
        hidden = op.nn.relu(dense_add_bias(hidden, units=units, name=f"fc{index}"))
    out = op.nn.softmax(dense_add_bias(hidden, units=num_classes, name="fc3"))
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    num_classes: int = 10,
    image_shape: tuple[int, ...] = (1, 28, 28),
    dtype: str = "float32",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`, weights initialized by ``create_workload``."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
