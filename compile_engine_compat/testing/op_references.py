"""NumPy references for Relax ops, read from the call itself (op name and attributes).

:data:`REFERENCES` maps a Relax op name to ``ref(call, *arrays)``. Because it reads the attributes
from the call, it works for any normalized Relax function, hand-written ones included: the oracle
interprets a function binding by binding with it. :data:`DOMAINS` says which arguments must be
positive or non-zero, so that input generation avoids values where an op is undefined.

The references compute in float64 or the input's integer dtype; the interpreter casts every
result to the binding's Relax dtype, so each op is "exact, then rounded once".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def norm_axis(axis: int, ndim: int) -> int:
    return axis + ndim if axis < 0 else axis


# -- NumPy references ---------------------------------------------------------------------------

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _axes(attr: Any, ndim: int) -> tuple[int, ...] | None:
    if attr is None:
        return None
    return tuple(norm_axis(int(a), ndim) for a in attr)


def _reduce(fn: Callable[..., Any]) -> Callable[..., Any]:
    def ref(call: Any, x: np.ndarray) -> Any:
        return fn(x, axis=_axes(call.attrs.axis, x.ndim), keepdims=bool(call.attrs.keepdims))

    return ref


def _arg_reduce(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _conv(call: Any, x: np.ndarray, w: np.ndarray) -> np.ndarray | None:
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


def _pool(kind: str) -> Callable[..., Any]:
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


def _adaptive_avg_pool2d(call: Any, x: np.ndarray) -> np.ndarray | None:
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


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(call: Any, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    axes = _axes(call.attrs.axes, x.ndim)
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + float(call.attrs.epsilon))
    return y * gamma + beta


def _group_norm(call: Any, x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    attrs = call.attrs
    groups, caxis = int(attrs.num_groups), norm_axis(int(attrs.channel_axis), x.ndim)
    xm = np.moveaxis(x, caxis, 1)
    shape = xm.shape
    xg = xm.reshape(shape[0], groups, shape[1] // groups, *shape[2:])
    axes = tuple(range(2, xg.ndim))
    y = (xg - xg.mean(axis=axes, keepdims=True)) / np.sqrt(
        xg.var(axis=axes, keepdims=True) + float(attrs.epsilon)
    )
    bshape = [1] * len(shape)
    bshape[1] = shape[1]
    y = y.reshape(shape) * gamma.reshape(bshape) + beta.reshape(bshape)
    return np.moveaxis(y, 1, caxis)


def _rms_norm(call: Any, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    axes = _axes(call.attrs.axes, x.ndim)
    rms = np.sqrt((x * x).mean(axis=axes, keepdims=True) + float(call.attrs.epsilon))
    return x / rms * weight


def _strided_slice(call: Any, x: np.ndarray, *rest: Any) -> np.ndarray:
    axes, begin, end = (_ints(v) for v in call.args[1:4])
    strides = _ints(call.args[4]) if len(call.args) > 4 else [1] * len(axes)
    index = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, begin, end, strides):
        index[norm_axis(a, x.ndim)] = slice(b, e, s)
    return x[tuple(index)]


def _split(call: Any, x: np.ndarray) -> list[np.ndarray]:
    spec = call.attrs.indices_or_sections
    axis = int(call.attrs.axis)
    if isinstance(spec, int) or not hasattr(spec, "__len__"):
        return list(np.array_split(x, int(spec), axis=axis))
    return list(np.split(x, _ints(spec), axis=axis))


def _sort_key(x: np.ndarray, descending: bool) -> np.ndarray:
    return -x if descending else x


def _topk(call: Any, x: np.ndarray) -> Any:
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


def _scan(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _take(call: Any, x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    axis = call.attrs.axis
    return np.take(x, idx, axis=None if axis is None else int(axis))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


UNARY_REFS: dict[str, Callable[[np.ndarray], Any]] = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "negative": np.negative,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "floor": np.floor,
    "ceil": np.ceil,
    "square": np.square,
    "erf": _erf,
    "sign": np.sign,
    "logical_not": np.logical_not,
    "nn.relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "nn.silu": lambda x: x / (1.0 + np.exp(-x)),
    "nn.gelu": _gelu,
}

BINARY_REFS: dict[str, Callable[[np.ndarray, np.ndarray], Any]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.true_divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": np.power,
    "floor_divide": np.floor_divide,
    "floor_mod": np.mod,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "greater_equal": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "bitwise_and": np.bitwise_and,
}


def _unary_ref(fn: Callable[[np.ndarray], Any]) -> Callable[..., Any]:
    return lambda call, x: fn(x)


def _binary_ref(fn: Callable[[np.ndarray, np.ndarray], Any]) -> Callable[..., Any]:
    return lambda call, x, y: fn(x, y)


REFERENCES: dict[str, Callable[..., Any]] = {
    **{f"relax.{k}": _unary_ref(v) for k, v in UNARY_REFS.items()},
    **{f"relax.{k}": _binary_ref(v) for k, v in BINARY_REFS.items()},
    "relax.nn.leakyrelu": lambda c, x: np.where(x > 0, x, x * float(c.attrs.alpha)),
    "relax.sum": _reduce(np.sum),
    "relax.mean": _reduce(np.mean),
    "relax.max": _reduce(np.max),
    "relax.min": _reduce(np.min),
    "relax.prod": _reduce(np.prod),
    "relax.variance": _reduce(np.var),
    "relax.std": _reduce(np.std),
    "relax.argmax": _arg_reduce(np.argmax),
    "relax.argmin": _arg_reduce(np.argmin),
    "relax.matmul": lambda c, x, y: np.matmul(x, y),
    "relax.nn.conv1d": _conv,
    "relax.nn.conv2d": _conv,
    "relax.nn.max_pool1d": _pool("max"),
    "relax.nn.max_pool2d": _pool("max"),
    "relax.nn.avg_pool2d": _pool("avg"),
    "relax.nn.adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "relax.nn.softmax": lambda c, x: _softmax(x, int(c.attrs.axis)),
    "relax.nn.log_softmax": lambda c, x: np.log(_softmax(x, int(c.attrs.axis))),
    "relax.nn.layer_norm": _layer_norm,
    "relax.nn.group_norm": _group_norm,
    "relax.nn.rms_norm": _rms_norm,
    "relax.permute_dims": lambda c, x: np.transpose(
        x, None if c.attrs.axes is None else _ints(c.attrs.axes)
    ),
    "relax.concat": lambda c, xs: np.concatenate(xs, axis=int(c.attrs.axis)),
    "relax.split": _split,
    "relax.strided_slice": _strided_slice,
    "relax.take": _take,
    "relax.where": lambda c, cond, x, y: np.where(cond, x, y),
    "relax.astype": lambda c, x: x,  # the interpreter casts every result to its Relax dtype
    "relax.clip": lambda c, x, lo, hi: np.clip(x, lo, hi),
    "relax.cumsum": _scan(np.cumsum),
    "relax.cumprod": _scan(np.cumprod),
    "relax.sort": lambda c, x: np.sort(x, axis=int(c.attrs.axis))[
        (slice(None),) * norm_axis(int(c.attrs.axis), x.ndim)
        + ((slice(None, None, -1),) if bool(c.attrs.descending) else ())
    ],
    "relax.argsort": lambda c, x: np.argsort(
        _sort_key(x, bool(c.attrs.descending)), axis=int(c.attrs.axis), kind="stable"
    ),
    "relax.topk": _topk,
    "relax.expand_dims": lambda c, x: np.expand_dims(x, tuple(_ints(c.attrs.axis))),
    "relax.squeeze": lambda c, x: np.squeeze(
        x, None if c.attrs.axis is None else tuple(_ints(c.attrs.axis))
    ),
    "relax.flip": lambda c, x: np.flip(x, int(c.attrs.axis)),
    "relax.tile": lambda c, x: np.tile(x, _ints(c.attrs.repeats)),
    "relax.repeat": lambda c, x: np.repeat(
        x, int(c.attrs.repeats), axis=None if c.attrs.axis is None else int(c.attrs.axis)
    ),
    "relax.tril": lambda c, x, k: np.tril(x, int(k)),
    "relax.triu": lambda c, x, k: np.triu(x, int(k)),
}

#: Ops whose result is fixed by their output type: ``ref(out_shape, x)`` with symbolic dims bound.
SHAPED_REFERENCES: dict[str, Callable[[tuple[int, ...], np.ndarray], np.ndarray]] = {
    "relax.reshape": lambda shape, x: x.reshape(shape),
    "relax.broadcast_to": lambda shape, x: np.broadcast_to(x, shape),
}

#: Relax op -> {argument index: domain}. ``positive``: > 0; ``nonzero``: never 0.
DOMAINS: dict[str, dict[int, str]] = {
    "relax.log": {0: "positive"},
    "relax.sqrt": {0: "positive"},
    "relax.rsqrt": {0: "positive"},
    "relax.divide": {1: "nonzero"},
    "relax.floor_divide": {1: "nonzero"},
    "relax.floor_mod": {1: "nonzero"},
    "relax.power": {0: "positive"},
}
