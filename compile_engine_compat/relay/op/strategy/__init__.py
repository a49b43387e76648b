"""``relay.op.strategy``: Relay's compute/schedule wrappers for strategy functions.

The ``wrap_compute_*`` helpers read the call's attributes (Relay's, or the Relax call's inside
``lower``/``jit``: the names agree) and call the TOPI compute with Relay's argument order.
``wrap_topi_schedule`` keeps its signature, but Relay-era TE schedules cannot run on modern
TVM: implementations carrying one are used without it, with one warning naming ``s_tir``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.relay._impl.relay_strategies import OpStrategy

__all__ = [
    "OpStrategy",
    "wrap_compute_batch_matmul",
    "wrap_compute_conv1d",
    "wrap_compute_conv2d",
    "wrap_compute_conv2d_transpose",
    "wrap_compute_conv3d",
    "wrap_compute_dense",
    "wrap_compute_softmax",
    "wrap_topi_schedule",
]

Compute = Callable[[Any, list[Any], Any], list[Any]]


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in value)


def _str(attrs: Any, name: str, default: str = "") -> str:
    value = getattr(attrs, name, default)
    return "" if value is None else str(value)


def _out_dtype(attrs: Any, inputs: list[Any]) -> str:
    # Relay spelled "use the input dtype" as "" or "same"; Relax attrs say "void".
    value = _str(attrs, "out_dtype")
    return str(inputs[0].dtype) if value in ("", "same", "void", "None") else value


def wrap_topi_schedule(topi_schedule: Callable[[Any], Any]) -> Callable[[Any, Any, Any], Any]:
    """Relay's ``wrap_topi_schedule``: ``schedule(attrs, outs, target)``.

    The engine never runs it (TE schedules are gone; see the module docstring).
    """

    def wrapper(attrs: Any, outs: Any, target: Any) -> Any:
        with target:
            return topi_schedule(outs)

    wrapper.__wrapped__ = topi_schedule  # type: ignore[attr-defined]
    return wrapper


def _conv_head(attrs: Any, inputs: list[Any]) -> list[Any]:
    """``data, kernel, strides, padding, dilation``: how every Relay conv compute starts."""
    return [
        inputs[0],
        inputs[1],
        _ints(attrs.strides),
        _ints(attrs.padding),
        _ints(attrs.dilation),
    ]


def wrap_compute_conv2d(
    topi_compute: Callable[..., Any],
    *,
    need_data_layout: bool = False,
    need_kernel_layout: bool = False,
    need_out_layout: bool = False,
    has_groups: bool = False,
    need_auto_scheduler_layout: bool = False,
    need_meta_schedule_layout: bool = False,
) -> Compute:
    """Relay's ``wrap_compute_conv2d``: ``topi_compute(data, kernel, strides, padding, ...)``.

    The auto-scheduler and meta-schedule layout flags are accepted and ignored (no layout
    rewriting happens in the shim).
    """

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        args = _conv_head(attrs, inputs)
        if has_groups:
            args.append(int(attrs.groups))
        if need_data_layout:
            args.append(_str(attrs, "data_layout"))
        if need_kernel_layout:
            args.append(_str(attrs, "kernel_layout"))
        if need_out_layout:
            args.append(_str(attrs, "out_layout"))
        args.append(_out_dtype(attrs, inputs))
        return [topi_compute(*args)]

    return compute


def wrap_compute_conv1d(topi_compute: Callable[..., Any]) -> Compute:
    """Relay's ``wrap_compute_conv1d``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        return [topi_compute(*_conv_head(attrs, inputs), _out_dtype(attrs, inputs))]

    return compute


def wrap_compute_conv3d(topi_compute: Callable[..., Any], need_layout: bool = False) -> Compute:
    """Relay's ``wrap_compute_conv3d``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        args = [*_conv_head(attrs, inputs), int(attrs.groups)]
        if need_layout:
            args.append(_str(attrs, "data_layout"))
        args.append(_out_dtype(attrs, inputs))
        return [topi_compute(*args)]

    return compute


def wrap_compute_conv2d_transpose(
    topi_compute: Callable[..., Any], has_groups: bool = False, add_layout: bool = False
) -> Compute:
    """Relay's ``wrap_compute_conv2d_transpose``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        args: list[Any] = [
            inputs[0],
            inputs[1],
            _ints(attrs.strides),
            _ints(attrs.padding),
            _out_dtype(attrs, inputs),
            _ints(attrs.output_padding),
        ]
        if add_layout:
            args.append(_str(attrs, "data_layout"))
        if has_groups:
            args.append(int(attrs.groups))
        return [topi_compute(*args)]

    return compute


def wrap_compute_dense(topi_compute: Callable[..., Any]) -> Compute:
    """Relay's ``wrap_compute_dense``: ``topi_compute(data, weight, None, out_dtype)``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        return [topi_compute(inputs[0], inputs[1], None, _out_dtype(attrs, inputs))]

    return compute


def wrap_compute_batch_matmul(topi_compute: Callable[..., Any]) -> Compute:
    """Relay's ``wrap_compute_batch_matmul``: ``topi_compute(a, b, out_shape, out_dtype)``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        return [topi_compute(inputs[0], inputs[1], None, _out_dtype(attrs, inputs))]

    return compute


def wrap_compute_softmax(topi_compute: Callable[..., Any]) -> Compute:
    """Relay's ``wrap_compute_softmax``: ``topi_compute(data, axis)``."""

    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> list[Any]:
        return [topi_compute(inputs[0], int(attrs.axis))]

    return compute
