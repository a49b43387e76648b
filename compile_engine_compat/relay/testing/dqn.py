"""``relay.testing.dqn``: the Nature DQN (three convolutions, two dense layers; Mnih et al.)."""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_net", "get_workload"]

#: (channels, kernel, stride) of the three convolutions.
_CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


def get_net(
    batch_size: int,
    num_actions: int = 18,
    image_shape: tuple[int, ...] = (4, 84, 84),
    dtype: str = "float32",
    layout: str = "NCHW",
) -> Function:
    """The DQN as a Relay function of ``data`` (``(batch_size, *image_shape)``) and weights."""
    body = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    for index, (channels, kernel, stride) in enumerate(_CONVS, start=1):
        conv = layers.conv2d(
            body,
            kernel_size=(kernel, kernel),
            strides=(stride, stride),
            padding=(0, 0),
            channels=channels,
            name=f"conv{index}",
            data_layout=layout,
            kernel_layout=layers.conv_kernel_layout(layout),
        )
        body = op.nn.relu(op.nn.bias_add(conv, var(f"conv{index}_bias"), layout.index("C")))
    hidden = op.nn.relu(layers.dense_add_bias(op.nn.batch_flatten(body), units=512, name="dense1"))
    out = layers.dense_add_bias(hidden, units=num_actions, name="dense2")
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int,
    num_actions: int = 18,
    image_shape: tuple[int, ...] = (4, 84, 84),
    dtype: str = "float32",
    layout: str = "NCHW",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`, weights initialized by ``create_workload``."""
    return create_workload(get_net(batch_size, num_actions, image_shape, dtype, layout))
