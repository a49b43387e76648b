"""``relay.testing.inception_v3``: Inception v3 (Szegedy et al., 2015) for ~299x299 images.

Each tower is a chain of conv-BN-ReLU units; a module concatenates its towers on the channel
axis. The module kinds are the paper's figures 5-7 (``A`` to ``E`` below). Parameter names are
Relay's (``mixed_4_tower_1_conv_3_conv1_weight``), so saved params still line up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_net", "get_workload"]

#: One conv-BN-ReLU unit of a tower: (filters, kernel, stride, pad, name suffix).
Unit = tuple[int, tuple[int, int], tuple[int, int], tuple[int, int], str]


def _unit(
    filters: int,
    kernel: Any = (1, 1),
    stride: Any = (1, 1),
    pad: Any = (0, 0),
    suffix: str = "_conv",
) -> Unit:
    return (filters, kernel, stride, pad, suffix)


def _conv(data: Expr, unit: Unit, name: str) -> Expr:
    filters, kernel, stride, pad, suffix = unit
    conv = layers.conv2d(
        data=data,
        channels=int(filters),
        kernel_size=kernel,
        strides=stride,
        padding=pad,
        name=f"{name}{suffix}_conv1",
    )
    bn = layers.batch_norm_infer(data=conv, epsilon=2e-5, scale=False, name=f"{name}{suffix}_bn")
    return op.nn.relu(bn)


def _tower(data: Expr, units: Sequence[Unit], name: str) -> Expr:
    for unit in units:
        data = _conv(data, unit, name)
    return data


def _pool(data: Expr, kind: str, kernel: Any, stride: Any, pad: Any) -> Expr:
    if kind == "max":
        return op.nn.max_pool2d(data, pool_size=kernel, strides=stride, padding=pad)
    if kind == "avg":
        return op.nn.avg_pool2d(
            data, pool_size=kernel, strides=stride, padding=pad, count_include_pad=True
        )
    raise ValueError(f"Invalid pooling type: {kind}")


def _pooled_projection(data: Expr, pool: str, proj: int, name: str) -> Expr:
    """A 3x3 stride-1 pool, then a 1x1 projection (the last tower of modules A, C and E)."""
    return _conv(_pool(data, pool, (3, 3), (1, 1), (1, 1)), _unit(proj), f"{name}_tower_2")


def _module_a(
    data: Expr,
    c1: int,
    c3r: int,
    c3a: int,
    c3b: int,
    c5r: int,
    c5: int,
    pool: str,
    proj: int,
    name: str,
) -> Expr:
    towers = [
        _conv(data, _unit(c1, suffix=""), f"{name}_conv"),
        _tower(
            data, [_unit(c5r), _unit(c5, (5, 5), pad=(2, 2), suffix="_conv_1")], f"{name}_tower"
        ),
        _tower(
            data,
            [
                _unit(c3r),
                _unit(c3a, (3, 3), pad=(1, 1), suffix="_conv_1"),
                _unit(c3b, (3, 3), pad=(1, 1), suffix="_conv_2"),
            ],
            f"{name}_tower_1",
        ),
        _pooled_projection(data, pool, proj, name),
    ]
    return op.concatenate(towers, axis=1)


def _module_b(data: Expr, c3: int, d3r: int, d3a: int, d3b: int, name: str) -> Expr:
    towers = [
        _conv(data, _unit(c3, (3, 3), (2, 2), suffix=""), f"{name}_conv"),
        _tower(
            data,
            [
                _unit(d3r),
                _unit(d3a, (3, 3), pad=(1, 1), suffix="_conv_1"),
                _unit(d3b, (3, 3), (2, 2), suffix="_conv_2"),
            ],
            f"{name}_tower",
        ),
        _pool(data, "max", (3, 3), (2, 2), (0, 0)),
    ]
    return op.concatenate(towers, axis=1)


def _seven(filters: int, horizontal: bool, suffix: str) -> Unit:
    """A 1x7 (``horizontal``) or 7x1 convolution that keeps the size."""
    if horizontal:
        return _unit(filters, (1, 7), pad=(0, 3), suffix=suffix)
    return _unit(filters, (7, 1), pad=(3, 0), suffix=suffix)


def _module_c(
    data: Expr,
    c1: int,
    d7r: int,
    d7a: int,
    d7b: int,
    q7r: int,
    q7a: int,
    q7b: int,
    q7c: int,
    q7d: int,
    pool: str,
    proj: int,
    name: str,
) -> Expr:
    towers = [
        _conv(data, _unit(c1, suffix=""), f"{name}_conv"),
        _tower(
            data,
            [_unit(d7r), _seven(d7a, True, "_conv_1"), _seven(d7b, False, "_conv_2")],
            f"{name}_tower",
        ),
        _tower(
            data,
            [
                _unit(q7r),
                _seven(q7a, False, "_conv_1"),
                _seven(q7b, True, "_conv_2"),
                _seven(q7c, False, "_conv_3"),
                _seven(q7d, True, "_conv_4"),
            ],
            f"{name}_tower_1",
        ),
        _pooled_projection(data, pool, proj, name),
    ]
    return op.concatenate(towers, axis=1)


def _module_d(
    data: Expr, c3r: int, c3: int, d7r: int, d7a: int, d7b: int, d7c: int, pool: str, name: str
) -> Expr:
    towers = [
        _tower(data, [_unit(c3r), _unit(c3, (3, 3), (2, 2), suffix="_conv_1")], f"{name}_tower"),
        _tower(
            data,
            [
                _unit(d7r),
                _seven(d7a, True, "_conv_1"),
                _seven(d7b, False, "_conv_2"),
                _unit(d7c, (3, 3), (2, 2), suffix="_conv_3"),
            ],
            f"{name}_tower_1",
        ),
        _pool(data, pool, (3, 3), (2, 2), (0, 0)),
    ]
    return op.concatenate(towers, axis=1)


def _split3(data: Expr, a: int, b: int, name: str) -> list[Expr]:
    """A 1x3 and a 3x1 convolution of the same input (module E's split towers)."""
    return [
        _conv(data, _unit(a, (1, 3), pad=(0, 1), suffix="_mixed_conv"), name),
        _conv(data, _unit(b, (3, 1), pad=(1, 0), suffix="_mixed_conv_1"), name),
    ]


def _module_e(
    data: Expr,
    c1: int,
    d3r: int,
    d3a: int,
    d3b: int,
    t3r: int,
    t3: int,
    t3a: int,
    t3b: int,
    pool: str,
    proj: int,
    name: str,
) -> Expr:
    reduced = _conv(data, _unit(d3r), f"{name}_tower")
    widened = _tower(
        data, [_unit(t3r), _unit(t3, (3, 3), pad=(1, 1), suffix="_conv_1")], f"{name}_tower_1"
    )
    towers = [
        _conv(data, _unit(c1, suffix=""), f"{name}_conv"),
        *_split3(reduced, d3a, d3b, f"{name}_tower"),
        *_split3(widened, t3a, t3b, f"{name}_tower_1"),
        _pooled_projection(data, pool, proj, name),
    ]
    return op.concatenate(towers, axis=1)


def get_net(
    batch_size: int, num_classes: int, image_shape: tuple[int, ...], dtype: str
) -> Function:
    """Inception v3 with softmax, for ``(batch_size, *image_shape)`` NCHW inputs."""
    data = var("data", shape=(batch_size, *image_shape), dtype=dtype)
    body = _conv(data, _unit(32, (3, 3), (2, 2), suffix=""), "conv")
    body = _conv(body, _unit(32, (3, 3), suffix=""), "conv_1")
    body = _conv(body, _unit(64, (3, 3), pad=(1, 1), suffix=""), "conv_2")
    body = _pool(body, "max", (3, 3), (2, 2), (0, 0))
    body = _conv(body, _unit(80, suffix=""), "conv_3")
    body = _conv(body, _unit(192, (3, 3), suffix=""), "conv_4")
    body = _pool(body, "max", (3, 3), (2, 2), (0, 0))
    body = _module_a(body, 64, 64, 96, 96, 48, 64, "avg", 32, "mixed")
    body = _module_a(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_1")
    body = _module_a(body, 64, 64, 96, 96, 48, 64, "avg", 64, "mixed_2")
    body = _module_b(body, 384, 64, 96, 96, "mixed_3")
    body = _module_c(body, 192, 128, 128, 192, 128, 128, 128, 128, 192, "avg", 192, "mixed_4")
    for index in (5, 6):
        body = _module_c(
            body, 192, 160, 160, 192, 160, 160, 160, 160, 192, "avg", 192, f"mixed_{index}"
        )
    body = _module_c(body, 192, 192, 192, 192, 192, 192, 192, 192, 192, "avg", 192, "mixed_7")
    body = _module_d(body, 192, 320, 192, 192, 192, 192, "max", "mixed_8")
    body = _module_e(body, 320, 384, 384, 384, 448, 384, 384, 384, "avg", 192, "mixed_9")
    body = _module_e(body, 320, 384, 384, 384, 448, 384, 384, 384, "max", 192, "mixed_10")
    flat = op.nn.batch_flatten(_pool(body, "avg", (8, 8), (1, 1), (0, 0)))
    logits = op.nn.dense(flat, var("fc1_weight"), units=num_classes)
    # Relay named this bias fc2_bias; kept, so saved params line up.
    out = op.nn.softmax(op.nn.bias_add(logits, var("fc2_bias"), axis=-1))
    return Function(free_vars(out), out)


def get_workload(
    batch_size: int = 1,
    num_classes: int = 1000,
    image_shape: tuple[int, ...] = (3, 299, 299),
    dtype: str = "float32",
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`."""
    return create_workload(get_net(batch_size, num_classes, image_shape, dtype))
