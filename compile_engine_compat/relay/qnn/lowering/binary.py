"""The lowerings of ``qnn.add``, ``qnn.subtract``, ``qnn.mul`` and ``qnn.concatenate`` (TVM
0.19's canonicalization): the inputs requantized to the output's parameters in int32 (or, for
``mul``, the int32 product of the shifted inputs requantized with the product of the scales),
then clipped back to the input dtype.
"""

from __future__ import annotations

import numpy as np

from compile_engine_compat.relay.expr import Attrs, Expr, Tuple, const
from compile_engine_compat.relay.qnn.lowering.common import (
    ArgType,
    call,
    clip_cast,
    constant_values,
    float_scalars,
    is_scalar_equal,
    normalized_axis,
    per_axis,
)
from compile_engine_compat.relay.qnn.lowering.requantize import requantize

__all__ = ["lower_add", "lower_concatenate", "lower_mul", "lower_subtract"]


def _to_output(x: Expr, xt: ArgType, scale: Expr, zp: Expr, zpt: ArgType, out_scale: Expr,
               out_zp: Expr, axis: int) -> Expr:  # fmt: skip
    """Relay's ``RequantizeOrUpcast``: requantized to the output's parameters in int32, or
    only cast when they are the same."""
    if is_scalar_equal(scale, out_scale) and is_scalar_equal(zp, out_zp):
        return call("cast", x, "int32")
    return requantize(x, xt, scale, zp, zpt, out_scale, out_zp, axis, "None", "None", "int32")


def _sides(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> tuple[Expr, Expr]:
    lhs, rhs, ls, lz, rs, rz, os_, oz = args
    return (
        _to_output(lhs, types[0], ls, lz, types[3], os_, oz, int(attrs.lhs_axis)),
        _to_output(rhs, types[1], rs, rz, types[5], os_, oz, int(attrs.rhs_axis)),
    )


def lower_add(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.add``: ``Q_c = Q_a' + Q_b' - zp_c``."""
    lhs, rhs = _sides(args, attrs, types)
    out = call("add", lhs, rhs)
    if not is_scalar_equal(args[7], 0):
        out = call("subtract", out, args[7])
    return clip_cast(out, types[0].dtype)


def lower_subtract(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.subtract``: ``Q_c = Q_a' - Q_b' + zp_c``."""
    lhs, rhs = _sides(args, attrs, types)
    out = call("subtract", lhs, rhs)
    if not is_scalar_equal(args[7], 0):
        out = call("add", out, args[7])
    return clip_cast(out, types[0].dtype)


def _shifted(x: Expr, zp: Expr, zpt: ArgType, rank: int, axis: int) -> Expr:
    out = call("cast", x, "int32")
    if not is_scalar_equal(zp, 0):
        out = call("subtract", out, call("cast", per_axis(zp, zpt, rank, axis), "int32"))
    return out


def lower_mul(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.mul``: the int32 product of the shifted inputs, requantized from the product of
    the scales."""
    lhs, rhs, ls, lz, rs, rz, os_, oz = args
    rank = len(types[0].shape)
    lhs_axis, rhs_axis = int(attrs.lhs_axis), int(attrs.rhs_axis)
    lscales = constant_values(ls, "qnn.mul lhs_scale")
    rscales = constant_values(rs, "qnn.mul rhs_scale")
    if lscales.ndim == 0 and rscales.ndim == 0:
        lhs_s = _shifted(lhs, lz, types[3], rank, normalized_axis(lhs_axis, rank))
        rhs_s = _shifted(rhs, rz, types[5], len(types[1].shape), -1)
        product = np.float32(np.float32(lscales) * np.float32(rscales))
        new_scale = const(np.array(product, "float32"))
        axis = -1
    elif lhs_axis == rhs_axis:
        ax = normalized_axis(lhs_axis, rank)
        lhs_s = _shifted(lhs, lz, types[3], rank, ax)
        rhs_s = _shifted(rhs, rz, types[5], rank, ax)
        lv = float_scalars(lscales.ravel())
        rv = float_scalars(rscales.ravel())
        if len(lv) == 1:
            lv = lv * len(rv)
        if len(rv) == 1:
            rv = rv * len(lv)
        new_scale = const(np.array([a * b for a, b in zip(lv, rv)], "float32"))
        axis = lhs_axis
    else:
        raise ValueError("qnn.mul: per-channel scales need lhs_axis == rhs_axis, as in TVM 0.19")
    out = call("multiply", lhs_s, rhs_s)
    zero = const(np.array(0, "int32"))
    out_type = ArgType(types[0].shape, "int32")
    return requantize(
        out, out_type, new_scale, zero, ArgType((), "int32"), os_, oz, axis, "None", "None",
        types[0].dtype,
    )  # fmt: skip


def lower_concatenate(args: list[Expr], attrs: Attrs, types: list[ArgType]) -> Expr:
    """``qnn.concatenate``: inputs whose parameters differ from the output's requantized to
    them, then one concatenate."""
    data, scales, zps, out_scale, out_zp = args
    out_dtype = types[0].fields[0].dtype
    fields = []
    for i, (x, xt) in enumerate(zip(_fields(data), types[0].fields)):
        scale, zp = _fields(scales)[i], _fields(zps)[i]
        if is_scalar_equal(scale, out_scale) and is_scalar_equal(zp, out_zp):
            fields.append(x)
        else:
            zpt = types[2].fields[i]
            fields.append(
                requantize(x, xt, scale, zp, zpt, out_scale, out_zp, -1, "None", "None", out_dtype)
            )
    return call("concatenate", fields, int(attrs.axis))


def _fields(value: Expr) -> list[Expr]:
    if not isinstance(value, Tuple):
        raise ValueError("qnn.concatenate takes lists (tuples) of inputs, scales and zero points")
    return list(value.fields)
