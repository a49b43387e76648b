"""TVM 0.19's target legalizations of ``nn.conv2d``, ``nn.dense`` and ``nn.batch_matmul``, and
the ``clip`` rule of its QNN dialect, on the Relay graph.

TVM 0.19 registered ``topi.nn.conv2d_legalize`` (and ``dense_legalize``,
``batch_matmul_legalize``) as the ``FTVMLegalize`` of those ops: generic functions dispatched on
the current target's keys. Served here (as ``tvm.topi.nn.*_legalize`` under ``install()``):

* ``cuda``/``gpu``: shapes padded for tensor cores (``nn.pad`` of the inputs, the op on the
  padded shapes, ``strided_slice`` back), and int8 NCHW convolutions padded to 4 channels;
* ``arm_cpu``: int8 convolutions' channels padded to the vector length (8; the input channels
  are kept on AArch64 with dot-product and no i8mm, where TVM 0.19 picked its native kernel).

Any other target (x86's VNNI rewrite included) keeps the call: ``relay.build`` picks its own
int8 kernels. ``clip`` of a ``qnn.requantize`` over the whole range of its dtype is removed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm

from ..expr import Call, Expr
from ..op.op import builder

__all__ = [
    "DEFAULT_LEGALIZE",
    "batch_matmul_legalize",
    "conv2d_legalize",
    "dense_legalize",
    "legalize_clip",
]

_TENSORCORE_8BIT = ((16, 16, 16), (32, 16, 8), (8, 16, 32))


def _keys() -> set[str]:
    target = tvm.target.Target.current(allow_none=True)
    return set() if target is None else {str(k) for k in target.keys}


def _feature(name: str) -> bool:
    target = tvm.target.Target.current(allow_none=True)
    return bool(target is not None and target.attrs.get(f"feature.{name}", False))


def _ints(shape: Sequence[Any]) -> list[int] | None:
    """The dimensions as ints; None when one is not a constant (``relay.Any()``)."""
    try:
        return [int(d) for d in shape]
    except (TypeError, ValueError, AttributeError):
        return None


def _pad_to(dims: Sequence[int], block: Sequence[int]) -> tuple[int, ...]:
    return tuple((-d) % b for d, b in zip(dims, block))


def _tensorcore_pads(
    dims: Sequence[int], blocks: Sequence[Sequence[int]]
) -> tuple[tuple[int, ...], float] | None:
    """TVM 0.19's ``pad_to_tensorcore``: the padding of ``(M, K, N)`` adding the fewest flops
    and that extra work as a ratio of the op's; None when some block already divides them."""
    if any(all(d % b == 0 for d, b in zip(dims, block)) for block in blocks):
        return None
    flops = math.prod(dims)
    best: tuple[int, ...] = (0, 0, 0)
    extra = math.inf
    for block in blocks:
        pads = _pad_to(dims, block)
        added = math.prod(d + p for d, p in zip(dims, pads)) - flops
        if added < extra:
            best, extra = pads, added
    return best, extra / flops


def _cheap_pads(dims: Sequence[int], blocks: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
    """The tensor-core padding, None when not needed or over twice the op's work."""
    found = _tensorcore_pads(dims, blocks)
    return None if found is None or found[1] > 2 else found[0]


def _pad(expr: Expr, widths: Sequence[tuple[int, int]]) -> Expr:
    if not any(after for _, after in widths):
        return expr
    out: Expr = builder("nn.pad")(expr, pad_width=tuple(widths))
    return out


def _slice_back(out: Expr, sliced: bool, out_type: Any) -> Expr:
    if not sliced:
        return out
    end = [int(d) for d in out_type.shape]
    result: Expr = builder("strided_slice")(out, begin=[0] * len(end), end=end)
    return result


def _attrs_dict(attrs: Any) -> dict[str, Any]:
    return {k: attrs[k] for k in attrs.keys()}


def _widths(rank: int, **axes: int) -> list[tuple[int, int]]:
    """``pad_width`` padding axis ``a<i>`` by ``axes[f"a{i}"]`` at its end."""
    return [(0, axes.get(f"a{i}", 0)) for i in range(rank)]


def _conv2d_padded(
    inputs: Sequence[Expr],
    attrs: Any,
    out_type: Any,
    pads: tuple[Sequence[Sequence[tuple[int, int]]], Sequence[Sequence[tuple[int, int]]]],
    channels: int | None,
    sliced: bool,
) -> Expr:
    """``conv2d`` on padded inputs (each one padded once per width given, as TVM 0.19 did),
    ``channels`` set when the output channels grew, sliced back when ``sliced``."""
    data, kernel = inputs
    for widths in pads[0]:
        data = _pad(data, widths)
    for widths in pads[1]:
        kernel = _pad(kernel, widths)
    new_attrs = _attrs_dict(attrs)
    if channels is not None:
        new_attrs["channels"] = channels
    out: Expr = builder("nn.conv2d")(data, kernel, **new_attrs)
    return _slice_back(out, sliced, out_type)


def _conv2d_case(attrs: Any, types: Sequence[Any]) -> tuple[str, list[int], list[int]] | None:
    """The layouts (``"NHWC/HWIO"``) and static shapes of a plain, undilated convolution."""
    if tuple(attrs.get_int_tuple("dilation")) != (1, 1) or attrs.get_int("groups") != 1:
        return None
    data_shape, kernel_shape = _ints(types[0].shape), _ints(types[1].shape)
    if data_shape is None or kernel_shape is None:
        return None
    return f"{attrs['data_layout']}/{attrs['kernel_layout']}", data_shape, kernel_shape


def _cuda_conv2d(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
    case = _conv2d_case(attrs, types)
    if case is None:
        return None
    layouts, data_shape, kernel_shape = case
    dtype = types[0].dtype
    if dtype in ("int8", "uint8") and layouts == "NCHW/OIHW":
        di, do = _pad_to((data_shape[1], kernel_shape[0]), (4, 4))
        pads = ([_widths(4, a1=di)], [_widths(4, a1=di), _widths(4, a0=do)])
        channels = kernel_shape[0] + do if do else None
        return _conv2d_padded(inputs, attrs, types[2], pads, channels, bool(do))
    if layouts == "NHWC/HWIO" and dtype in ("int8", "uint8", "float16", "int4", "uint4"):
        dims = (data_shape[0], data_shape[3], kernel_shape[3])
        found = _cheap_pads(dims, _TENSORCORE_8BIT)
        if found is None:
            return None
        db, di, do = found
        pads = ([_widths(4, a0=db), _widths(4, a3=di)], [_widths(4, a2=di), _widths(4, a3=do)])
    elif layouts == "HWNC/HWOI" and dtype in ("int8", "uint8", "int4", "uint4"):
        dims = (data_shape[2], data_shape[3], kernel_shape[2])
        found = _cheap_pads(dims, ((8, 16, 32),) if dtype in ("int8", "uint8") else ((8, 32, 8),))
        if found is None:
            return None
        db, di, do = found
        pads = ([_widths(4, a2=db), _widths(4, a3=di)], [_widths(4, a3=di), _widths(4, a2=do)])
    else:
        return None
    channels = dims[2] + do if do else None
    return _conv2d_padded(inputs, attrs, types[2], pads, channels, bool(db or do))


def _arm_conv2d(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
    """TVM 0.19's ``conv2d_alter_int8_common`` for Arm (int8 data and kernels: no shift): input
    channels padded to 8 (kept on AArch64 with dot-product and no i8mm, NHWC: TVM 0.19's
    native kernel), output channels padded to 8 and sliced back."""
    if types[1].dtype not in ("int8", "uint8") or types[0].dtype != types[1].dtype:
        return None
    if not (_feature("has_asimd") or _feature("has_dotprod")):
        return None
    case = _conv2d_case(attrs, types)
    if case is None or case[0] not in ("NHWC/HWIO", "NCHW/OIHW"):
        return None
    layouts, data_shape, kernel_shape = case
    native = _feature("is_aarch64") and _feature("has_dotprod") and not _feature("has_matmul_i8")
    nhwc = layouts == "NHWC/HWIO"
    in_c, out_c = (data_shape[3], kernel_shape[3]) if nhwc else (data_shape[1], kernel_shape[0])
    in_vector = in_c if nhwc and native else 8
    di, do = _pad_to((in_c, out_c), (in_vector, 8))
    if nhwc:
        pads = ([_widths(4, a3=di)], [_widths(4, a2=di), _widths(4, a3=do)])
    else:
        pads = ([_widths(4, a1=di)], [_widths(4, a1=di), _widths(4, a0=do)])
    return _conv2d_padded(inputs, attrs, types[2], pads, out_c + do if do else None, bool(do))


def _cuda_dense(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
    x_t, y_t, out_t = types
    xs, ys = _ints(x_t.shape), _ints(y_t.shape)
    if xs is None or ys is None or len(xs) != 2:
        return None
    dims = (xs[0], xs[1], ys[0])
    blocks = _matmul_blocks(x_t.dtype)
    found = None if blocks is None else _tensorcore_pads(dims, blocks)
    if found is None:
        return None
    pads, ratio = found
    if ratio > 2 and x_t.dtype in ("int8", "uint8"):
        # TVM 0.19 padded int8 to blocks of 4 where tensor-core blocks cost too much.
        if all(d % 4 == 0 for d in dims):
            return None
        pads = _pad_to(dims, (4, 4, 4))
        ratio = math.prod(d + p for d, p in zip(dims, pads)) / math.prod(dims) - 1
    if ratio > 2:
        return None
    dm, dk, dn = pads
    new_attrs = _attrs_dict(attrs)
    if new_attrs.get("units") is not None:
        new_attrs["units"] = dims[2] + dn
    x = _pad(inputs[0], [(0, dm), (0, dk)])
    y = _pad(inputs[1], [(0, dn), (0, dk)])
    out: Expr = builder("nn.dense")(x, y, **new_attrs)
    return _slice_back(out, bool(dm or dn), out_t)


def _matmul_blocks(dtype: str) -> tuple[tuple[int, int, int], ...] | None:
    if dtype in ("float16", "int8", "uint8"):
        return _TENSORCORE_8BIT
    if dtype in ("int4", "uint4"):
        return ((8, 32, 8),)
    return None


def _cuda_batch_matmul(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
    x_t, y_t, out_t = types
    xs, ys = _ints(x_t.shape), _ints(y_t.shape)
    blocks = _matmul_blocks(x_t.dtype)
    if xs is None or ys is None or blocks is None:
        return None
    ta, tb = bool(attrs.transpose_a), bool(attrs.transpose_b)
    m, k = (xs[2], xs[1]) if ta else (xs[1], xs[2])
    n = ys[1] if tb else ys[2]
    found = _cheap_pads((m, k, n), blocks)
    if found is None:
        return None
    dm, dk, dn = found
    x = _pad(inputs[0], [(0, 0), (0, dk), (0, dm)] if ta else [(0, 0), (0, dm), (0, dk)])
    y = _pad(inputs[1], [(0, 0), (0, dn), (0, dk)] if tb else [(0, 0), (0, dk), (0, dn)])
    out: Expr = builder("nn.batch_matmul")(x, y, **_attrs_dict(attrs))
    return _slice_back(out, bool(dm or dn), out_t)


Legalization = Callable[[Any, Sequence[Expr], Sequence[Any]], "Expr | None"]


def _dispatch(table: dict[str, Legalization], name: str) -> Legalization:
    def legalize(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
        keys = _keys()
        for key, function in table.items():
            if key in keys:
                return function(attrs, list(inputs), list(types))
        return None

    legalize.__name__ = legalize.__qualname__ = name
    legalize.__doc__ = (
        f"``topi.nn.{name}(attrs, inputs, types)``: TVM 0.19's legalization for the current "
        f"target ({', '.join(table)}); None (keep the call) for any other."
    )
    return legalize


conv2d_legalize = _dispatch(
    {"cuda": _cuda_conv2d, "gpu": _cuda_conv2d, "arm_cpu": _arm_conv2d}, "conv2d_legalize"
)
dense_legalize = _dispatch({"cuda": _cuda_dense, "gpu": _cuda_dense}, "dense_legalize")
batch_matmul_legalize = _dispatch(
    {"cuda": _cuda_batch_matmul, "gpu": _cuda_batch_matmul}, "batch_matmul_legalize"
)


def legalize_clip(attrs: Any, inputs: Sequence[Expr], types: Sequence[Any]) -> Expr | None:
    """``clip`` of a ``qnn.requantize`` whose bounds are its dtype's whole range: the
    requantize alone (TVM 0.19's QNN legalization of ``clip``)."""
    data = inputs[0]
    if not (isinstance(data, Call) and getattr(data.op, "name", None) == "qnn.requantize"):
        return None
    info = np.iinfo(types[0].dtype)
    if info.min == attrs.a_min and info.max == attrs.a_max:
        return data
    return None


#: The ``FTVMLegalize`` functions TVM 0.19 registered, by op name (a user's own takes over).
DEFAULT_LEGALIZE: dict[str, Legalization] = {
    "nn.conv2d": conv2d_legalize,
    "nn.dense": dense_legalize,
    "nn.batch_matmul": batch_matmul_legalize,
    "clip": legalize_clip,
}
