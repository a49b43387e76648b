"""TVM 0.19's ``SimplifyExpr`` rules, one function each, in the order Relay applied them.

A rule takes ``(pre, post)``: the call as it was when the graph was last typed (its
``checked_type`` set) and the same call with its arguments already rewritten. It returns the
replacement, or None to keep ``post``. A rule that needs the type of a node made earlier in the
same sweep (not typed yet) returns None; the next sweep, after typing again, applies it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.relay._impl.layouts import axis_names, layout_axes
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Constant, Expr, const
from ..op.op import builder
from ..ty import TensorType

__all__ = ["RULES", "Rule"]

#: ``(pre, post) -> replacement or None``.
Rule = Callable[[Call, Call], Expr | None]

_RESHAPES = ("reshape", "reverse_reshape", "contrib_reverse_reshape")
_TRANSPOSES = ("transpose", "layout_transform")
_CASTS = ("cast", "cast_like")
#: Relay's ops of pattern kBroadcast taking two tensors (``FullElementwise`` rewrites them).
_BROADCAST = frozenset(
    "add subtract multiply divide floor_divide trunc_divide power mod floor_mod trunc_mod "
    "maximum minimum logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor "
    "left_shift right_shift equal not_equal less less_equal greater greater_equal".split()
)


def _name(node: Any) -> str | None:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return None


def _tensor(node: Any) -> TensorType | None:
    ty = getattr(node, "_checked_type", None)
    return ty if isinstance(ty, TensorType) else None


def _dtype(node: Any) -> str | None:
    ty = _tensor(node)
    return None if ty is None else str(ty.dtype)


def _static_shape(ty: TensorType | None) -> tuple[int, ...] | None:
    if ty is None:
        return None
    dims = []
    for dim in ty.shape:
        if not isinstance(dim, int | tvm.tirx.IntImm):
            return None
        dims.append(int(dim))
    return tuple(dims)


def _same_type(a: TensorType | None, b: TensorType | None) -> bool:
    if a is None or b is None or str(a.dtype) != str(b.dtype) or len(a.shape) != len(b.shape):
        return False
    return all(str(x) == str(y) for x, y in zip(a.shape, b.shape, strict=True))


def _scalar(node: Any) -> Any:
    if isinstance(node, Constant) and node.data.numpy().ndim == 0:
        return node.data.numpy().item()
    return None


def _with_args(call: Call, args: list[Expr]) -> Call:
    return Call(call.op, args, call.attrs, call.type_args, call.span)


# -- concretizing the *_like ops --------------------------------------------------------------
def concretize_like(pre: Call, post: Call) -> Expr | None:
    """``zeros_like``, ``ones_like``, ``full_like``, ``reshape_like``, ``collapse_sum_like``,
    ``broadcast_to_like`` of a static result type become the op of that shape; ``cast_like``
    becomes ``cast`` to its dtype."""
    name, ty = _name(post), _tensor(pre)
    if ty is None:
        return None
    if name == "cast_like":
        return builder("cast")(post.args[0], str(ty.dtype))
    shape = _static_shape(ty)
    if shape is None:
        return None
    dtype = str(ty.dtype)
    if name == "zeros_like":
        return builder("zeros")(shape, dtype)
    if name == "ones_like":
        return builder("ones")(shape, dtype)
    if name == "full_like":
        return builder("full")(post.args[1], shape, dtype)
    made = {
        "reshape_like": "reshape",
        "collapse_sum_like": "collapse_sum_to",
        "broadcast_to_like": "broadcast_to",
    }
    return builder(made[name])(post.args[0], shape) if name in made else None


# -- arithmetic ---------------------------------------------------------------------------------
def add_same(pre: Call, post: Call) -> Expr | None:
    """``x + x`` -> ``x * 2``."""
    dtype = _dtype(pre)
    if _name(post) != "add" or post.args[0] is not post.args[1] or dtype is None:
        return None
    return builder("multiply")(post.args[0], const(np.array(2, dtype), dtype))


def rsqrt(pre: Call, post: Call) -> Expr | None:
    """``a / sqrt(x)`` -> ``a * rsqrt(x)``."""
    if _name(post) != "divide" or _name(post.args[1]) != "sqrt":
        return None
    return builder("multiply")(post.args[0], builder("rsqrt")(post.args[1].args[0]))  # type: ignore[attr-defined]


def _is_full_of(node: Any, value: int) -> bool:
    """Whether ``node`` matches Relay's ``zeros`` (0) or ``ones`` (1) pattern: the op, its
    ``*_like`` form, or any constant (checked by the caller)."""
    word = "zeros" if value == 0 else "ones"
    return _name(node) in (word, f"{word}_like") or isinstance(node, Constant)


def eliminate_identity(pre: Call, post: Call) -> Expr | None:
    """``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``, ``x / 1`` -> ``x`` when ``x``
    already has the result's type (zeros/ones ops or scalar constants)."""
    name = _name(post)
    if name not in ("add", "multiply", "subtract", "divide"):
        return None
    identity = 0 if name in ("add", "subtract") else 1
    sides = [0, 1] if name in ("add", "multiply") else [0]
    for x_side in sides:
        other = post.args[1 - x_side]
        if not _is_full_of(other, identity):
            continue
        if isinstance(other, Constant) and _scalar(other) != identity:
            return None
        if _same_type(_tensor(pre.args[x_side]), _tensor(pre)):
            return post.args[x_side]
        return None
    return None


def _full_value(node: Any, dtype: str) -> Expr | None:
    name = _name(node)
    if name == "full" and isinstance(node.args[0], Constant):
        return node.args[0]
    if name == "full_like" and isinstance(node.args[1], Constant):
        return node.args[1]
    if name in ("ones", "ones_like", "zeros", "zeros_like"):
        return const(np.array(1 if name.startswith("ones") else 0, dtype), dtype)
    return None


def full_elementwise(pre: Call, post: Call) -> Expr | None:
    """A broadcasting op of ``full``/``ones``/``zeros`` (or their ``*_like``) and ``x`` of the
    result's type takes the fill value as a scalar constant instead."""
    dtype = _dtype(pre)
    if _name(post) not in _BROADCAST or len(post.args) != 2 or dtype is None:
        return None
    for full_side in (0, 1):
        value = _full_value(post.args[full_side], dtype)
        if value is None:
            continue
        if not _same_type(_tensor(pre.args[1 - full_side]), _tensor(pre)):
            return None
        args = [value, post.args[1]] if full_side == 0 else [post.args[0], value]
        return _with_args(post, args)
    return None


def _constant_operand(call: Any, name: str) -> tuple[Expr, Constant] | None:
    """``(x, c)`` when ``call`` is ``name(x, c)`` or ``name(c, x)``, ``c`` a constant and ``x``
    not (Relay's commutative match)."""
    if _name(call) != name:
        return None
    a, b = call.args
    if isinstance(b, Constant) and not isinstance(a, Constant):
        return a, b
    if isinstance(a, Constant) and not isinstance(b, Constant):
        return b, a
    return None


def _fold(name: str, c1: Constant, c2: Constant) -> Constant:
    a, b = c1.data.numpy(), c2.data.numpy()
    value = np.asarray(np.add(a, b) if name == "add" else np.multiply(a, b)).astype(a.dtype)
    return const(value, str(a.dtype))


def switch_add_multiply(pre: Call, post: Call) -> Expr | None:
    """``(x + c1) * c2`` -> ``x * c2 + (c1 * c2)``, the constant folded."""
    outer = _constant_operand(post, "multiply")
    inner = _constant_operand(outer[0], "add") if outer else None
    if outer is None or inner is None:
        return None
    (x, c1), c2 = inner, outer[1]
    return builder("add")(builder("multiply")(x, c2), _fold("multiply", c1, c2))


def adjacent_multiply_or_add(pre: Call, post: Call) -> Expr | None:
    """``(x * c1) * c2`` -> ``x * (c1 * c2)`` and ``(x + c1) + c2`` -> ``x + (c1 + c2)``."""
    name = _name(post)
    outer = _constant_operand(post, name) if name in ("add", "multiply") else None
    inner = _constant_operand(outer[0], name) if outer else None  # type: ignore[arg-type]
    if outer is None or inner is None:
        return None
    (x, c1), c2 = inner, outer[1]
    return builder(name)(x, _fold(name, c1, c2))  # type: ignore[arg-type]


# -- reshapes, transposes, layouts --------------------------------------------------------------
def reshape_chain(pre: Call, post: Call) -> Expr | None:
    """Two consecutive reshapes (or ``reverse_reshape``) of a static result -> one reshape."""
    if _name(post) not in _RESHAPES or _name(post.args[0]) not in _RESHAPES:
        return None
    shape = _static_shape(_tensor(pre))
    return None if shape is None else builder("reshape")(post.args[0].args[0], shape)  # type: ignore[attr-defined]


def _axis_order(call: Call, ndim: int) -> list[int] | None:
    attrs: Any = call.attrs
    if _name(call) == "transpose":
        if not attrs.axes:
            return list(range(ndim - 1, -1, -1))
        return [int(a) + ndim if int(a) < 0 else int(a) for a in attrs.axes]
    src = axis_names(str(attrs.src_layout))
    dst = axis_names(str(attrs.dst_layout))
    if len(src) != ndim or len(dst) != ndim or sorted(src) != sorted(dst):
        return None
    return [src.index(d) for d in dst]


def _rank_changing(call: Call) -> bool:
    attrs: Any = call.attrs
    return _name(call) == "layout_transform" and len(str(attrs.src_layout)) != len(
        str(attrs.dst_layout)
    )


def _fold_rank_changing(data: Expr, call: Call) -> Expr | bool | None:
    """Relay's ``FoldRankChangingLayoutTrans``: one ``layout_transform`` for a rank-changing
    layout transform and the transpose or layout transform beside it; False when neither
    changes the rank, None when they cannot be fused."""
    inner: Any = call.args[0]
    src = dst = other = None
    if _rank_changing(call):
        src, dst, other = str(call.attrs.src_layout), str(call.attrs.dst_layout), inner  # type: ignore[union-attr]
    if _rank_changing(inner):
        if src is None:
            src, dst, other = str(inner.attrs.src_layout), str(inner.attrs.dst_layout), call
        elif src != str(inner.attrs.dst_layout):
            return None
        else:
            src = str(inner.attrs.src_layout)
    if src is None or dst is None or other is None:
        return False
    n_src, n_dst = len(layout_axes(src)), len(layout_axes(dst))
    make = builder("layout_transform")
    if n_src < n_dst:
        axes = _axis_order(other, n_src)
        if axes is None or len(src) != len(axes):
            return None
        inverse = [0] * len(axes)
        for i, axis in enumerate(axes):
            inverse[axis] = i
        return make(data, "".join(src[i] for i in inverse), dst)
    if n_src > n_dst:
        axes = _axis_order(other, n_dst)
        if axes is None or len(dst) != len(axes):
            return None
        return make(data, src, "".join(dst[i] for i in axes))
    return make(data, src, dst) if _name(other) == "layout_transform" else None


def transpose_chain(pre: Call, post: Call) -> Expr | None:
    """Two consecutive transposes or layout transforms -> one (none when they cancel)."""
    if _name(post) not in _TRANSPOSES or _name(post.args[0]) not in _TRANSPOSES:
        return None
    inner: Any = post.args[0]
    x = inner.args[0]
    fused = _fold_rank_changing(x, post)
    if fused is None:
        return None
    if fused is not False:
        attrs: Any = fused.attrs  # type: ignore[union-attr]
        return x if str(attrs.src_layout) == str(attrs.dst_layout) else fused  # type: ignore[return-value]
    ty = _tensor(pre)
    if ty is None:
        return None
    ndim = len(ty.shape)
    axes = list(range(ndim))
    for call in (inner, post):
        order = _axis_order(call, ndim)
        if order is None:
            return None
        axes = [axes[order[i]] for i in range(ndim)]
    return x if axes == list(range(ndim)) else builder("transpose")(x, axes)


def no_op_transpose(pre: Call, post: Call) -> Expr | None:
    """A transpose to the same axis order, or a layout transform to the same layout -> its
    input."""
    name, attrs = _name(post), post.attrs
    if name == "layout_transform" and str(attrs.src_layout) == str(attrs.dst_layout):  # type: ignore[union-attr]
        return post.args[0]
    ty = _tensor(pre)
    if name not in _TRANSPOSES or ty is None:
        return None
    order = _axis_order(post, len(ty.shape))
    return post.args[0] if order == list(range(len(ty.shape))) else None


# -- casts and clips ----------------------------------------------------------------------------
def same_cast(pre: Call, post: Call) -> Expr | None:
    """A cast (or ``cast_like``) to the dtype its input already has -> the input."""
    if _name(post) not in _CASTS:
        return None
    before, after = _dtype(pre.args[0]), _dtype(pre)
    return post.args[0] if before is not None and before == after else None


def _code_bits(dtype: str) -> tuple[str, int]:
    if dtype == "bool":
        return "uint", 1
    match = re.fullmatch(r"([a-z]+?)(\d+)", dtype)
    return (match.group(1), int(match.group(2))) if match else (dtype, 0)


def _widens(origin: str, target: str) -> bool:
    (code_a, bits_a), (code_b, bits_b) = _code_bits(origin), _code_bits(target)
    return code_a == code_b and bits_a <= bits_b


def consecutive_cast(pre: Call, post: Call) -> Expr | None:
    """``cast(cast(x, t1), t2)`` -> ``cast(x, t2)`` when ``t1`` loses nothing of ``x``."""
    inner: Any = post.args[0] if post.args else None
    if _name(post) not in _CASTS or _name(inner) not in _CASTS:
        return None
    data_dtype, middle, out = _dtype(inner.args[0]), _dtype(pre.args[0]), _dtype(pre)
    if data_dtype is None or middle is None or out is None or not _widens(data_dtype, middle):
        return None
    return builder("cast")(inner.args[0], out)


def _integer_range(dtype: str) -> tuple[int, int] | None:
    if dtype == "bool" or not re.fullmatch(r"u?int\d+", dtype):
        return None
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def dq_arg(pre: Call, post: Call) -> Expr | None:
    """``argmax``/``argmin``/``argsort`` of ``qnn.dequantize(x)`` -> of ``x``."""
    inner: Any = post.args[0] if post.args else None
    if _name(post) not in ("argmax", "argmin", "argsort") or _name(inner) != "qnn.dequantize":
        return None
    return _with_args(post, [inner.args[0]])


def clip_and_consecutive_cast(pre: Call, post: Call) -> Expr | None:
    """``cast(cast(clip(x, lo, hi), t1), t2)`` -> ``cast(clip(...), t2)`` when ``[lo, hi]``
    fits in ``t1``."""
    middle: Any = post.args[0] if post.args else None
    if _name(post) != "cast" or _name(middle) != "cast" or _name(middle.args[0]) != "clip":
        return None
    clip: Any = middle.args[0]
    bounds = _integer_range(str(middle.attrs.dtype))
    if bounds is None or clip.attrs.a_min < bounds[0] or clip.attrs.a_max > bounds[1]:
        return None
    return builder("cast")(clip, str(post.attrs.dtype))  # type: ignore[union-attr]


def clip_of_full_range(pre: Call, post: Call) -> Expr | None:
    """``clip(x, lo, hi)`` of an integer ``x`` whose whole range lies in ``[lo, hi]`` -> ``x``."""
    dtype = _dtype(pre.args[0]) if _name(post) == "clip" else None
    bounds = _integer_range(dtype) if dtype else None
    attrs: Any = post.attrs
    if bounds is None or attrs.a_min > bounds[0] or attrs.a_max < bounds[1]:
        return None
    return post.args[0]


#: The rules in TVM 0.19's order; each sweeps the whole graph, until a round changes nothing.
RULES: tuple[Rule, ...] = (
    concretize_like,
    add_same,
    rsqrt,
    eliminate_identity,
    reshape_chain,
    transpose_chain,
    no_op_transpose,
    same_cast,
    consecutive_cast,
    full_elementwise,
    switch_add_multiply,
    adjacent_multiply_or_add,
    dq_arg,
    clip_and_consecutive_cast,
    clip_of_full_range,
)
