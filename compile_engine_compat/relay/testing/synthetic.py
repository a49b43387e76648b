"""``relay.testing.synthetic``: a small network shaped like real ones, for fast tests.

Two rounds of (a dense layer over the last axis, and a 3x3 convolution with softmax, added),
with a bias and batch norm between them; weights are filled by ``init.Constant``.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import Constant, create_workload

__all__ = ["get_net", "get_workload"]


def _round(data: Expr, like: Expr, shape: tuple[int, ...], suffix: str, wtype: str) -> Expr:
    """relu(dense over the last axis) reshaped like ``like``, plus softmax(conv3x3(data))."""
    rows = [-1, shape[3]]
    dense_weight = var(f"dense{suffix}_weight", shape=[shape[3], shape[3]], dtype=wtype)
    dense = op.nn.relu(op.nn.dense(op.reshape(data, rows), dense_weight))
    conv_weight = var(f"conv{suffix}_weight", shape=[shape[1], shape[1], 3, 3], dtype=wtype)
    conv = op.nn.softmax(op.nn.conv2d(data, conv_weight, padding=1, kernel_size=3))
    return op.add(op.reshape_like(dense, like), conv)


def get_net(
    input_shape: tuple[int, ...] = (1, 3, 24, 12), dtype: str = "float32", wtype: str | None = None
) -> Function:
    """The network for NCHW ``input_shape``; weights in ``wtype`` (default ``dtype``)."""
    wtype = wtype or dtype
    data = var("data", shape=input_shape, dtype=dtype)
    first = _round(data, data, input_shape, "", wtype)
    biased = op.nn.bias_add(first, var("bias", dtype=wtype))
    normed = layers.batch_norm_infer(biased, name="batch_norm")
    out = _round(normed, data, input_shape, "2", wtype)
    return Function(free_vars(out), out)


def get_workload(
    input_shape: tuple[int, ...] = (1, 3, 24, 12), dtype: str = "float32", wtype: str | None = None
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`, every weight ``1/size`` (``init.Constant``)."""
    return create_workload(get_net(input_shape, dtype, wtype), initializer=Constant())
