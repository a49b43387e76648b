"""NumPy references for Relax ops, read from the call itself (op name and attributes).

Each op's spec (:data:`compile_engine_compat.testing.op_plans.OPS`) names its reference here:
``ref(call, *arrays)``, or for an op whose result its output type fixes, ``ref(shape, x)``.
Because a reference reads the attributes from the call, it works for any normalized Relax
function, hand-written ones included: the oracle interprets a function binding by binding with
them. The adapters (:func:`unary`, :func:`binary`, :func:`reduction`, ...) turn a NumPy function
into such a reference.

The references compute in float64 or the input's integer dtype; the interpreter casts every
result to the binding's Relax dtype, so each op is "exact, then rounded once".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def norm_axis(axis: int, ndim: int) -> int:
    """``axis`` counted from the front (a negative axis counts from the back)."""
    return axis + ndim if axis < 0 else axis


# -- NumPy references ---------------------------------------------------------------------------

#: The error function, elementwise in float64 (NumPy has none).
erf = np.vectorize(math.erf, otypes=[np.float64])


def _axes(attr: Any, ndim: int) -> tuple[int, ...] | None:
    if attr is None:
        return None
    return tuple(norm_axis(int(a), ndim) for a in attr)


def reduction(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The reference of a reduction: ``fn(x, axis, keepdims)`` with the call's attributes."""

    def ref(call: Any, x: np.ndarray) -> Any:
        return fn(x, axis=_axes(call.attrs.axis, x.ndim), keepdims=bool(call.attrs.keepdims))

    return ref


def arg_reduction(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The reference of ``argmax``/``argmin`` (``fn``): one axis or all, keepdims honoured."""

    def ref(call: Any, x: np.ndarray) -> Any:
        axis = call.attrs.axis
        keep = bool(call.attrs.keepdims)
        if axis is None:
            out = np.asarray(fn(x))
            return out.reshape((1,) * x.ndim) if keep else out
        return fn(x, axis=int(axis), keepdims=keep)

    return ref


def _ints(values: Any) -> list[int]:
    return [int(v) for v in values]


def _pad_nd(x: np.ndarray, pads: Sequence[int], value: float) -> np.ndarray:
    nsp = len(pads) // 2
    widths = [(0, 0)] * (x.ndim - nsp) + [(pads[i], pads[i + nsp]) for i in range(nsp)]
    return np.pad(x, widths, constant_values=value)


def _windows(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dil: Sequence[int]):
    """Yield (out_index, window) over the trailing spatial dims of an N, C, *spatial array."""
    nsp = len(kernel)
    spatial = x.shape[-nsp:]
    out_shape = [(spatial[i] - dil[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(nsp)]
    for idx in np.ndindex(*out_shape):
        sl = tuple(
            slice(idx[i] * strides[i], idx[i] * strides[i] + dil[i] * (kernel[i] - 1) + 1, dil[i])
            for i in range(nsp)
        )
        window: tuple[Any, ...] = (Ellipsis, *sl)
        yield idx, out_shape, x[window]


def conv(call: Any, x: np.ndarray, w: np.ndarray) -> np.ndarray | None:
    """``nn.conv1d``/``nn.conv2d`` in NCW/NCHW with groups; None for other layouts."""
    attrs = call.attrs
    nsp = x.ndim - 2
    if str(attrs.data_layout) != "NCHW"[: nsp + 2] and str(attrs.data_layout) != "NCW":
        return None
    groups = int(attrs.groups)
    xp = _pad_nd(x, _ints(attrs.padding), 0.0)
    strides, dil = _ints(attrs.strides), _ints(attrs.dilation)
    out_c, cin_g = w.shape[0], w.shape[1]
    per_group = out_c // groups
    out = None
    for idx, out_shape, win in _windows(xp, w.shape[2:], strides, dil):
        if out is None:
            out = np.zeros((x.shape[0], out_c, *out_shape), dtype=np.float64)
        for g in range(groups):
            wg = w[g * per_group : (g + 1) * per_group]
            xg = win[:, g * cin_g : (g + 1) * cin_g]
            axes = tuple(range(1, xg.ndim))
            out[(slice(None), slice(g * per_group, (g + 1) * per_group), *idx)] = np.tensordot(
                xg, wg, axes=(axes, axes)
            )
    return out


def pool(kind: str) -> Callable[..., Any]:
    """The reference of a ``"max"`` or ``"avg"`` pool in NCW/NCHW (None for ceil mode)."""

    def ref(call: Any, x: np.ndarray) -> np.ndarray | None:
        attrs = call.attrs
        if bool(attrs.ceil_mode) or str(attrs.layout) not in ("NCHW", "NCW"):
            return None
        pads = _ints(attrs.padding)
        fill = -np.inf if kind == "max" else 0.0
        xp = _pad_nd(x.astype(np.float64), pads, fill)
        ones = _pad_nd(np.ones(x.shape, np.float64), pads, 0.0)
        kernel, strides, dil = _ints(attrs.pool_size), _ints(attrs.strides), _ints(attrs.dilation)
        out = None
        counts = list(_windows(ones, kernel, strides, dil))
        for (idx, out_shape, win), (_, _, valid) in zip(_windows(xp, kernel, strides, dil), counts):
            if out is None:
                out = np.zeros((*x.shape[: -len(kernel)], *out_shape), dtype=np.float64)
            axes = tuple(range(-len(kernel), 0))
            if kind == "max":
                out[(..., *idx)] = win.max(axis=axes)
            else:
                full = float(np.prod(kernel))
                denom = full if bool(attrs.count_include_pad) else valid.sum(axis=axes)
                out[(..., *idx)] = win.sum(axis=axes) / denom
        return out

    return ref


def adaptive_avg_pool2d(call: Any, x: np.ndarray) -> np.ndarray | None:
    """``nn.adaptive_avg_pool2d`` in NCHW; None for other layouts."""
    if str(call.attrs.layout) != "NCHW":
        return None
    h, w = x.shape[-2:]
    size = call.attrs.output_size
    oh, ow = (h, w) if size is None else (int(size[0]), int(size[-1]))
    out = np.zeros((*x.shape[:-2], oh, ow), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[..., i, j] = x[..., h0:h1, w0:w1].mean(axis=(-2, -1))
    return out


def _softmax_along(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(call: Any, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``nn.layer_norm`` over the call's axes."""
    axes = _axes(call.attrs.axes, x.ndim)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + float(call.attrs.epsilon))
    return y * gamma + beta


#: The largest conditioning E[x^2] / (var + eps) a norm's variance may have for NumPy to judge
#: TVM's result, per dtype. topi computes the variance in one pass, E[x^2] - E[x]^2, in the
#: input's dtype: its rounding error is about kappa * u (u the unit roundoff), so the bound is the
#: reference tolerance (testing.oracle.REFERENCE_TOLERANCES) over 8 u.
MAX_VARIANCE_CONDITIONING = {
    "float32": 1e-4 / (8 * 2.0**-24),
    "float16": 3e-2 / (8 * 2.0**-11),
}


def _kappa_exceeds(call: Any, groups: np.ndarray, axes: tuple[int, ...]) -> bool:
    """Whether ``max(E[x^2] / (var + eps))`` over the groups exceeds the call dtype's bound."""
    if groups.size == 0:
        return False
    eps = float(call.attrs.epsilon)
    kappa = (groups * groups).mean(axis=axes) / (groups.var(axis=axes) + eps)
    bound = MAX_VARIANCE_CONDITIONING.get(str(call.ty.dtype), np.inf)
    return bool(np.max(kappa) > bound)


def layer_norm_cancels(call: Any, x: np.ndarray, *rest: np.ndarray) -> bool:
    """True when ``nn.layer_norm``'s one-pass variance loses more than the tolerance.

    Parameters
    ----------
    call : tvm.ir.Call
    x : numpy.ndarray
        Its data, widened to float64.

    Returns
    -------
    bool
        Whether the conditioning ``E[x^2] / (var + eps)`` of some normalized slice exceeds
        :data:`MAX_VARIANCE_CONDITIONING` for the call's dtype.
    """
    axes = _axes(call.attrs.axes, x.ndim)
    return _kappa_exceeds(call, x, axes if axes is not None else tuple(range(x.ndim)))


def group_norm_cancels(call: Any, x: np.ndarray, *rest: np.ndarray) -> bool:
    """:func:`layer_norm_cancels` for ``nn.group_norm``, per group."""
    groups = _grouped(call, x)
    return _kappa_exceeds(call, groups, tuple(range(2, groups.ndim)))


def _grouped(call: Any, x: np.ndarray) -> np.ndarray:
    """``x`` as ``(batch, groups, channels per group, *spatial)`` for ``nn.group_norm``."""
    attrs = call.attrs
    groups, caxis = int(attrs.num_groups), norm_axis(int(attrs.channel_axis), x.ndim)
    xm = np.moveaxis(x, caxis, 1)
    return xm.reshape(xm.shape[0], groups, xm.shape[1] // groups, *xm.shape[2:])


def group_norm(call: Any, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``nn.group_norm`` with any channel axis."""
    attrs = call.attrs
    caxis = norm_axis(int(attrs.channel_axis), x.ndim)
    shape = np.moveaxis(x, caxis, 1).shape
    xg = _grouped(call, x)
    axes = tuple(range(2, xg.ndim))
    y = (xg - xg.mean(axis=axes, keepdims=True)) / np.sqrt(
        xg.var(axis=axes, keepdims=True) + float(attrs.epsilon)
    )
    bshape = [1] * len(shape)
    bshape[1] = shape[1]
    y = y.reshape(shape) * gamma.reshape(bshape) + beta.reshape(bshape)
    return np.moveaxis(y, 1, caxis)


def rms_norm(call: Any, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``nn.rms_norm`` over the call's axes."""
    axes = _axes(call.attrs.axes, x.ndim)
    rms = np.sqrt((x * x).mean(axis=axes, keepdims=True) + float(call.attrs.epsilon))
    return x / rms * weight


def strided_slice(call: Any, x: np.ndarray, *rest: Any) -> np.ndarray:
    """``strided_slice``: axes, begin, end and strides are the call's arguments 1 to 4."""
    axes, begin, end = (_ints(v) for v in call.args[1:4])
    strides = _ints(call.args[4]) if len(call.args) > 4 else [1] * len(axes)
    index = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, begin, end, strides):
        index[norm_axis(a, x.ndim)] = slice(b, e, s)
    return x[tuple(index)]


def split(call: Any, x: np.ndarray) -> list[np.ndarray]:
    """``split`` into sections or at indices."""
    spec = call.attrs.indices_or_sections
    axis = int(call.attrs.axis)
    if isinstance(spec, int) or not hasattr(spec, "__len__"):
        return list(np.array_split(x, int(spec), axis=axis))
    return list(np.split(x, _ints(spec), axis=axis))


def _sort_key(x: np.ndarray, descending: bool) -> np.ndarray:
    return -x if descending else x


def topk(call: Any, x: np.ndarray) -> Any:
    """``topk``: a stable order, so ties keep the first index; values, indices or both."""
    attrs = call.attrs
    axis, k = int(attrs.axis), int(attrs.k)
    order = np.argsort(_sort_key(x, bool(attrs.largest)), axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    values = np.take_along_axis(x, idx, axis=axis)
    kind = str(attrs.ret_type)
    if kind == "values":
        return values
    if kind == "indices":
        return idx
    return [values, idx]


def scan(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The reference of ``cumsum``/``cumprod`` (``fn``): one axis or flattened, maybe exclusive."""

    def ref(call: Any, x: np.ndarray) -> np.ndarray:
        axis = call.attrs.axis
        data = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else int(axis)
        out = fn(data, axis=ax)
        if bool(call.attrs.exclusive):
            ident = 0 if fn is np.cumsum else 1
            out = np.concatenate(
                [np.full_like(np.take(out, [0], axis=ax), ident), np.delete(out, -1, axis=ax)],
                axis=ax,
            )
        return out

    return ref


def take(call: Any, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``take`` along the call's axis (or from the flattened array)."""
    axis = call.attrs.axis
    return np.take(x, idx, axis=None if axis is None else int(axis))


def gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


# -- adapters: a NumPy function as a reference --------------------------------------------------


def unary(fn: Callable[[np.ndarray], Any]) -> Callable[..., Any]:
    """The reference ``ref(call, x) = fn(x)`` of an elementwise op without attributes."""
    return lambda call, x: fn(x)


def binary(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[..., Any]:
    """The reference ``ref(call, x, y) = fn(x, y)`` of a broadcasting op without attributes."""
    return lambda call, x, y: fn(x, y)


# -- elementwise functions NumPy lacks (for unary) ----------------------------------------------


def rsqrt(x: np.ndarray) -> np.ndarray:
    """``1 / sqrt(x)``."""
    return 1.0 / np.sqrt(x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-x))``."""
    return 1.0 / (1.0 + np.exp(-x))


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)`` in ``x``'s dtype."""
    return np.maximum(x, np.zeros((), x.dtype))


def silu(x: np.ndarray) -> np.ndarray:
    """``x * sigmoid(x)``."""
    return x / (1.0 + np.exp(-x))


# -- references that read the call --------------------------------------------------------------


def leakyrelu(call: Any, x: np.ndarray) -> np.ndarray:
    """``nn.leakyrelu`` with the call's ``alpha``."""
    return np.where(x > 0, x, x * float(call.attrs.alpha))


def matmul(call: Any, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``matmul`` with NumPy's broadcasting and 1-d rules (Relax's are the same)."""
    return np.matmul(x, y)


def softmax(call: Any, x: np.ndarray) -> np.ndarray:
    """``nn.softmax`` along the call's axis."""
    return _softmax_along(x, int(call.attrs.axis))


def log_softmax(call: Any, x: np.ndarray) -> np.ndarray:
    """``nn.log_softmax`` along the call's axis."""
    return np.log(_softmax_along(x, int(call.attrs.axis)))


def permute_dims(call: Any, x: np.ndarray) -> np.ndarray:
    """``permute_dims``; no axes reverses them."""
    return np.transpose(x, None if call.attrs.axes is None else _ints(call.attrs.axes))


def concat(call: Any, xs: list[np.ndarray]) -> np.ndarray:
    """``concat`` of a tuple along the call's axis."""
    return np.concatenate(xs, axis=int(call.attrs.axis))


def where(call: Any, cond: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``where`` with broadcasting."""
    return np.where(cond, x, y)


def astype(call: Any, x: np.ndarray) -> np.ndarray:
    """``astype``: the value unchanged; the interpreter casts every result to its Relax dtype."""
    return x


def clip(call: Any, x: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
    """``clip`` to the call's bounds (arguments 1 and 2)."""
    return np.clip(x, lo, hi)


def sort(call: Any, x: np.ndarray) -> np.ndarray:
    """``sort`` along the call's axis, reversed there when descending."""
    axis = int(call.attrs.axis)
    flip = (slice(None, None, -1),) if bool(call.attrs.descending) else ()
    return np.sort(x, axis=axis)[(slice(None),) * norm_axis(axis, x.ndim) + flip]


def argsort(call: Any, x: np.ndarray) -> np.ndarray:
    """``argsort``: a stable order, so ties keep the first index also when descending."""
    key = _sort_key(x, bool(call.attrs.descending))
    return np.argsort(key, axis=int(call.attrs.axis), kind="stable")


def expand_dims(call: Any, x: np.ndarray) -> np.ndarray:
    """``expand_dims`` at the call's axes."""
    return np.expand_dims(x, tuple(_ints(call.attrs.axis)))


def squeeze(call: Any, x: np.ndarray) -> np.ndarray:
    """``squeeze`` of the call's axes, or of every size-1 axis."""
    return np.squeeze(x, None if call.attrs.axis is None else tuple(_ints(call.attrs.axis)))


def flip(call: Any, x: np.ndarray) -> np.ndarray:
    """``flip`` along the call's axis."""
    return np.flip(x, int(call.attrs.axis))


def tile(call: Any, x: np.ndarray) -> np.ndarray:
    """``tile`` by the call's repeats."""
    return np.tile(x, _ints(call.attrs.repeats))


def repeat(call: Any, x: np.ndarray) -> np.ndarray:
    """``repeat`` along the call's axis, or of the flattened array."""
    axis = None if call.attrs.axis is None else int(call.attrs.axis)
    return np.repeat(x, int(call.attrs.repeats), axis=axis)


def tril(call: Any, x: np.ndarray, k: Any) -> np.ndarray:
    """``tril`` below diagonal ``k`` (argument 1)."""
    return np.tril(x, int(k))


def triu(call: Any, x: np.ndarray, k: Any) -> np.ndarray:
    """``triu`` above diagonal ``k`` (argument 1)."""
    return np.triu(x, int(k))


# -- shaped references: ref(out_shape, x), the output type's shape with symbolic dims bound -----


def reshape(shape: tuple[int, ...], x: np.ndarray) -> np.ndarray:
    """``reshape`` to the output type's shape."""
    return x.reshape(shape)


def broadcast_to(shape: tuple[int, ...], x: np.ndarray) -> np.ndarray:
    """``broadcast_to`` the output type's shape."""
    return np.broadcast_to(x, shape)
