"""``relay.testing.layers``: the layer helpers the workloads build with (TVM <=0.19).

Each helper takes Relay's keyword arguments plus ``name=``, and makes the weights it is not
given as untyped ``relay.var`` named ``<name>_weight`` (``_bias``, ``_gamma``...), whose shapes
inference finds from their use.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..expr import Expr, var

__all__ = [
    "batch_norm_infer",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv_kernel_layout",
    "dense_add_bias",
]


def _weight(given: Expr | None, name: str, suffix: str) -> Expr:
    """The weight given, or a new untyped variable ``<name>_<suffix>``."""
    return given if given is not None else var(f"{name}_{suffix}")


def batch_norm_infer(
    data: Expr,
    gamma: Expr | None = None,
    beta: Expr | None = None,
    moving_mean: Expr | None = None,
    moving_var: Expr | None = None,
    **kwargs: Any,
) -> Expr:
    """``nn.batch_norm(...)[0]``, with the ``<name>_gamma``, ``_beta``, ``_moving_*`` variables."""
    name = kwargs.pop("name")
    stats = {
        "gamma": _weight(gamma, name, "gamma"),
        "beta": _weight(beta, name, "beta"),
        "moving_mean": _weight(moving_mean, name, "moving_mean"),
        "moving_var": _weight(moving_var, name, "moving_var"),
    }
    return op.nn.batch_norm(data, **stats, **kwargs)[0]


def conv2d(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv2d`` with ``<name>_weight``."""
    name = kwargs.pop("name")
    return op.nn.conv2d(data, _weight(weight, name, "weight"), **kwargs)


def conv3d(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv3d`` with ``<name>_weight``."""
    name = kwargs.pop("name")
    return op.nn.conv3d(data, _weight(weight, name, "weight"), **kwargs)


def conv2d_transpose(data: Expr, weight: Expr | None = None, **kwargs: Any) -> Expr:
    """``nn.conv2d_transpose`` with ``<name>_weight``."""
    name = kwargs.pop("name")
    return op.nn.conv2d_transpose(data, _weight(weight, name, "weight"), **kwargs)


def dense_add_bias(
    data: Expr,
    weight: Expr | None = None,
    bias: Expr | None = None,
    units: int | None = None,
    **kwargs: Any,
) -> Expr:
    """``nn.dense`` then ``nn.bias_add`` on the last axis, with ``<name>_weight``/``_bias``."""
    name = kwargs.pop("name")
    dense = op.nn.dense(data, _weight(weight, name, "weight"), units, **kwargs)
    return op.nn.bias_add(dense, _weight(bias, name, "bias"), axis=-1)


def conv_kernel_layout(data_layout: str, is_depthwise: bool = False) -> str:
    """The kernel layout TOPI expects for ``data_layout`` (``NCHW``/``NHWC``)."""
    layouts = {"NCHW": "OIHW", "NHWC": "HWOI" if is_depthwise else "HWIO"}
    if data_layout not in layouts:
        raise ValueError(f"Unknown data layout {data_layout!r}: NCHW or NHWC")
    return layouts[data_layout]
