"""Relay's own rules for attribute values, applied at the builder call.

Normalizers turn the forms Relay accepted into one (an int stride becomes a tuple, a padding of
one value becomes begin and end per dimension); predicates say which values a
:class:`.registry.Refusal` lets through. Both are named by the rows of the op families.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import tvm
from tvm import tirx

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.expr import Constant, Expr

__all__ = [
    "conv_normalize",
    "dtype",
    "equals",
    "int_list",
    "ntuple",
    "padding",
    "plain_layout",
    "scalar_value",
    "static_ints",
    "static_value",
]


def ntuple(n: int) -> Callable[[Any], Any]:
    """An int becomes ``n`` copies of it; a sequence, a tuple of ints; None stays None."""

    def norm(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, int | np.integer):
            return (int(value),) * n
        return tuple(int(v) for v in value)

    return norm


def padding(n: int) -> Callable[[Any], tuple[int, ...]]:
    """Relay's padding forms: one value, one per spatial dim, or begin and end per dim."""

    def norm(value: Any) -> tuple[int, ...]:
        values = [int(value)] if isinstance(value, int | np.integer) else [int(v) for v in value]
        if len(values) == 1:
            return tuple(values * 2 * n)
        if len(values) == n:
            return tuple(values * 2)
        if len(values) == 2 * n:
            return tuple(values)
        raise ValueError(f"padding must have 1, {n} or {2 * n} values, got {value!r}")

    return norm


def dtype(value: Any) -> str:
    """A dtype in TVM's spelling; Relay's unset dtype (``""`` or None) stays ``""``."""
    return "" if value in ("", None) else str(tvm.DataType(str(value)))


def int_list(value: Any) -> Any:
    """A sequence as a list of ints; None stays None."""
    return None if value is None else [int(v) for v in value]


def conv_normalize(nd: int) -> dict[str, Callable[[Any], Any]]:
    """Relay's normalization of a ``nd``-d convolution's attributes (ints become tuples)."""
    return {
        "strides": ntuple(nd),
        "dilation": ntuple(nd),
        "kernel_size": ntuple(nd),
        "padding": padding(nd),
        "out_dtype": dtype,
    }


def scalar_value(value: Any) -> Any:
    """A number given as a number or a ``relay.const``; a tensor-valued one is refused."""
    if isinstance(value, Constant):
        return value.data.numpy().item()
    if isinstance(value, Expr):
        raise UnsupportedRelayError(
            f"a tensor-valued attribute ({value!r}, Relay's dyn.* ops) has no Relax equivalent "
            "here: the Relax op takes a number (a Python number or relay.const)"
        )
    return value


def static_ints(attr: str) -> Callable[[Any], Any]:
    """Shape-like attributes must be static in Relax's op (Relay's dyn.* ops are not mapped)."""

    def norm(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, Constant):
            value = value.data.numpy().tolist()
        if isinstance(value, Expr):
            raise UnsupportedRelayError(
                f"a tensor-valued {attr} (Relay's dyn.* ops) has no Relax equivalent here: "
                "pass Python ints, or build the Relax function with relax.op.* and a ShapeExpr"
            )
        if isinstance(value, int | np.integer | tirx.IntImm):
            return (int(value),)
        return tuple(int(v) for v in value)

    return norm


def static_value(attr: str) -> Callable[[Any], Any]:
    """An attribute Relax needs as Python values (``nn.pad``'s pairs): a ``relay.const`` is
    read, a tensor expression (Relay's ``dyn.*`` form) refused, naming ``attr``."""

    def norm(value: Any) -> Any:
        if isinstance(value, Constant):
            return value.data.numpy().tolist()
        if isinstance(value, Expr):
            raise UnsupportedRelayError(
                f"a tensor-valued {attr} (Relay's dyn.* ops) has no Relax equivalent here: "
                "pass Python ints, or build the Relax function with relax.op.*"
            )
        return value

    return norm


def equals(default: Any) -> Callable[[Any], bool]:
    """A refusal's predicate: only ``default`` is allowed."""
    return lambda value: bool(value == default)


def plain_layout(value: Any) -> bool:
    """A refusal's predicate: a plain layout (``"NCHW"``), not a packed one (``"NCHW4c"``)."""
    return isinstance(value, str) and value.isalpha() and value.isupper()
