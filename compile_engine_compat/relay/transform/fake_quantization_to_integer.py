"""``relay.transform.fake_quantization_to_integer``: TVM 0.19's rules of
``FakeQuantizationToInteger``, one per op, registered as the ``FTVMFakeQuantizationToInteger``
op attribute (:mod:`.fake_quantization` holds the pass and the registry).

Each rule takes the call (its arguments already integer) and the map of affine types, and
returns ``[integer expression, affine type]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.fake_quantization import (
    FQ2I_ATTR,
    OPTIONAL_FQ2I_ATTR,
    Rule,
    TensorAffineType,
    TupleAffineType,
)

from ..expr import Constant, Expr, const
from ..op.op import builder
from ..op.op import get as get_op
from ..qnn import op as qnn
from .fake_quantization_pass import fake_quantization_pass

__all__ = [
    "BUILT_IN_RULES",
    "FakeQuantizationToInteger",
    "TensorAffineType",
    "TupleAffineType",
    "install_rules",
    "register_fake_quantization_to_integer",
    "register_optional_fake_quantization_to_integer",
]

Types = dict[Any, Any]


def _register(attr: str, op_name: str, func: Rule | None, level: int) -> Any:
    if not isinstance(op_name, str):
        raise TypeError(f"the op name must be a str, got {op_name!r}")
    op = get_op(op_name)

    def register(rule: Rule) -> Rule:
        if not callable(rule):
            raise TypeError(f"a fake-quantization rule must be callable, got {rule!r}")
        op.set_attr(attr, rule, level)
        return rule

    return register(func) if func is not None else register


def register_fake_quantization_to_integer(
    op_name: str, func: Rule | None = None, level: int = 10
) -> Any:
    """Register ``func(expr, type_map) -> [expr, affine type]`` as ``op_name``'s rule
    (TVM 0.19's ``relay.op.register_fake_quantization_to_integer``; a decorator without
    ``func``)."""
    return _register(FQ2I_ATTR, op_name, func, level)


def register_optional_fake_quantization_to_integer(
    op_name: str, func: Rule | None = None, level: int = 10
) -> Any:
    """Register a rule applied only when ``op_name`` is in ``optional_qnn_ops``."""
    return _register(OPTIONAL_FQ2I_ATTR, op_name, func, level)


def _product(a: Expr, b: Expr) -> Expr:
    if isinstance(a, Constant) and isinstance(b, Constant):
        return const(a.data.numpy() * b.data.numpy())
    return builder("multiply")(a, b)


def _scalar(e: Expr) -> float | None:
    if isinstance(e, Constant) and e.data.numpy().size == 1:
        return float(e.data.numpy().reshape(()))
    return None


def _dequantize(expr: Any, types: Types) -> list[Any]:
    return [expr.args[0], types[expr]]


def _quantize(expr: Any, types: Types) -> list[Any]:
    arg = expr.args[0]
    t = types[arg]
    out_t = TensorAffineType(expr.args[1], expr.args[2], expr.attrs.out_dtype, expr.attrs.axis)
    if not (
        TensorAffineType(t.scale, t.zero_point, t.dtype) == TensorAffineType(*_sz(out_t), t.dtype)
        and t.dtype == out_t.dtype
    ):
        arg = qnn.requantize(
            arg,
            t.scale,
            t.zero_point,
            expr.args[1],
            expr.args[2],
            axis=t.axis,
            out_dtype=out_t.dtype,
        )
    return [arg, out_t]


def _sz(t: TensorAffineType) -> tuple[Expr, Expr]:
    return t.scale, t.zero_point


def _same_params(a: TensorAffineType, b: TensorAffineType) -> bool:
    """The same scale, zero point and dtype (the axis aside)."""
    return TensorAffineType(*_sz(a), a.dtype) == TensorAffineType(*_sz(b), b.dtype)


def _same_input(expr: Any, types: Types) -> list[Any]:
    return [expr, types[expr.args[0]]]


#: (op name, rule, optional) of every built-in rule, registered on the pass's first use.
BUILT_IN_RULES: list[tuple[str, Any, bool]] = []


def _rule_row(op_name: str, rule: Any, optional: bool = False) -> None:
    BUILT_IN_RULES.append((op_name, rule, optional))


for _name in (
    "reshape", "squeeze", "strided_slice", "transpose", "expand_dims", "nn.max_pool2d",
    "nn.batch_flatten", "nn.depth_to_space", "max", "min", "image.resize2d", "topk", "take",
    "broadcast_to",
):  # fmt: skip
    _rule_row(_name, _same_input)
_rule_row("qnn.dequantize", _dequantize)
_rule_row("qnn.quantize", _quantize)


def _split(expr: Any, types: Types) -> list[Any]:
    t = types[expr.args[0]]
    parts = expr.attrs.indices_or_sections
    count = int(parts) if isinstance(parts, int | np.integer) else len(parts) + 1
    return [expr, TupleAffineType([t] * count)]


_rule_row("split", _split)


def _linear(kind: str) -> Any:
    def rule(expr: Any, types: Types) -> list[Any]:
        x, w = expr.args
        x_t, w_t = types[x], types[w]
        scale = _product(x_t.scale, w_t.scale)
        zero = (
            const(np.zeros(np.shape(scale.data.numpy()), "int32"))
            if isinstance(scale, Constant)
            else const(0)
        )
        attrs = {k: expr.attrs[k] for k in expr.attrs.keys() if k != "out_dtype"}
        if kind == "batch_matmul":
            attrs = {}
        out = getattr(qnn, kind)(
            x, w, x_t.zero_point, w_t.zero_point, x_t.scale, w_t.scale, **attrs
        )
        if kind.startswith("conv2d"):
            layout = attrs["out_layout"] or attrs["data_layout"]
            axis = str(layout).index("C")
        else:
            axis = 1 if kind == "dense" else x_t.axis
        if kind == "batch_matmul":
            zero = const(0)
        return [out, TensorAffineType(scale, zero, out.attrs.out_dtype, axis)]

    return rule


for _kind in ("conv2d", "conv2d_transpose", "dense", "batch_matmul"):
    _rule_row(f"nn.{_kind}", _linear(_kind))


def _requantized(arg: Expr, t: TensorAffineType, to: TensorAffineType) -> Expr:
    if t == TensorAffineType(to.scale, to.zero_point, to.dtype, t.axis):
        return arg
    return qnn.requantize(
        arg, t.scale, t.zero_point, to.scale, to.zero_point, axis=t.axis, out_dtype=to.dtype
    )


def _binary_types(expr: Any, types: Types) -> tuple[Expr, Expr, Any, Any, Any]:
    left, right = expr.args
    left_t: Any = types.get(left)
    right_t: Any = types.get(right)
    out_t = types[expr]
    if left_t is None and right_t is None:
        raise TypeError("neither input of the binary op is quantized")
    if left_t is None:
        left, left_t = qnn.quantize(left, right_t.scale, right_t.zero_point,
                                    out_dtype=right_t.dtype), right_t  # fmt: skip
    if right_t is None:
        right, right_t = qnn.quantize(right, left_t.scale, left_t.zero_point,
                                      out_dtype=left_t.dtype), left_t  # fmt: skip
    if left_t.dtype != out_t.dtype:
        out_t = left_t
    return left, right, left_t, right_t, out_t


def _binary_qnn(name: str) -> Any:
    def rule(expr: Any, types: Types) -> list[Any]:
        left, right, left_t, right_t, out_t = _binary_types(expr, types)
        zero_out = (
            isinstance(out_t.zero_point, Constant) and not out_t.zero_point.data.numpy().any()
        )
        if (
            name == "add" and _same_params(left_t, right_t) and left_t.dtype == "int32"
            and zero_out and _same_params(left_t, TensorAffineType(*_sz(out_t), "int32"))
        ):  # fmt: skip
            return [builder("add")(left, right), left_t]  # a bias add after qnn.dense/conv2d
        for what, value in (("scale", out_t.scale), ("zero point", out_t.zero_point)):
            if not isinstance(value, Constant) or value.data.numpy().ndim != 0:
                raise ValueError(f"the output {what} of qnn.{name} must be a scalar")
        out = getattr(qnn, name)(
            left, right, left_t.scale, left_t.zero_point, right_t.scale, right_t.zero_point,
            out_t.scale, out_t.zero_point, left_t.axis, right_t.axis,
        )  # fmt: skip
        return [out, out_t]

    return rule


for _op, _qnn in (("add", "add"), ("multiply", "mul"), ("subtract", "subtract")):
    _rule_row(_op, _binary_qnn(_qnn))


def _binary_same(name: str) -> Any:
    def rule(expr: Any, types: Types) -> list[Any]:
        left, right, left_t, right_t, out_t = _binary_types(expr, types)
        out = builder(name)(_requantized(left, left_t, out_t), _requantized(right, right_t, out_t))
        return [out, out_t]

    return rule


for _op in ("minimum", "maximum"):
    _rule_row(_op, _binary_same(_op))


def _unary_qnn(name: str) -> Any:
    def rule(expr: Any, types: Types) -> list[Any]:
        x_t, out_t = types[expr.args[0]], types[expr]
        out = getattr(qnn, name)(expr.args[0], *_sz(x_t), *_sz(out_t))
        return [out, out_t]

    return rule


for _op in ("sqrt", "rsqrt", "exp", "erf", "sigmoid", "hardswish", "tanh", "abs", "log"):
    _rule_row(_op, _unary_qnn(_op))


def _channel_values(t: TensorAffineType, values: np.ndarray, rank: int) -> Expr:
    """Per-tensor or per-channel integer constants, shaped to broadcast on ``t.axis``."""
    if values.ndim == 1 and values.size > 1:
        shape = [1] * rank
        shape[t.axis] = -1
        values = values.reshape(shape)
    return const(values.astype(t.dtype))


def _rank(expr: Expr) -> int:
    from compile_engine_compat.relay._impl.to_relax import infer

    if expr._checked_type is None:
        infer(expr)
    return len(expr.checked_type.shape)  # type: ignore[attr-defined]


def _relu(expr: Any, types: Types) -> list[Any]:
    arg = expr.args[0]
    t = types[arg]
    zp = np.broadcast_to(t.zero_point.data.numpy(), np.shape(t.scale.data.numpy()))
    return [builder("maximum")(arg, _channel_values(t, zp, _rank(arg))), t]


def _clip(expr: Any, types: Types) -> list[Any]:
    arg = expr.args[0]
    t = types[arg]
    scale, zp = t.scale.data.numpy(), t.zero_point.data.numpy()
    lo, hi = float(expr.attrs.a_min), float(expr.attrs.a_max)
    if scale.size == 1 and zp.size == 1:
        s, z = float(scale.reshape(())), int(zp.reshape(()))
        return [builder("clip")(arg, int(lo / s + z), int(hi / s + z)), t]
    info = np.iinfo(t.dtype)

    def bound(v: float) -> np.ndarray:  # qnn.quantize's rounding and saturation
        return np.clip(np.round(v / scale) + zp, info.min, info.max)

    rank = _rank(arg)
    low = _channel_values(t, bound(lo), rank)
    high = _channel_values(t, bound(hi), rank)
    return [builder("minimum")(builder("maximum")(arg, low), high), t]


_rule_row("nn.relu", _relu)
_rule_row("clip", _clip)


def _avg_pool2d(expr: Any, types: Types) -> list[Any]:
    arg = expr.args[0]
    t = types[arg]
    out_t = types[expr] if types[expr].direct else t
    a = expr.attrs
    out = qnn.avg_pool2d(
        arg, t.scale, t.zero_point, out_t.scale, out_t.zero_point, a.pool_size, a.strides,
        a.padding, a.dilation, a.ceil_mode, a.count_include_pad, a.layout,
    )  # fmt: skip
    return [out, out_t]


def _concatenate(expr: Any, types: Types) -> list[Any]:
    fields = types[expr.args[0]].types
    out_t = types[expr]
    from ..expr import Tuple

    out = qnn.concatenate(
        expr.args[0], Tuple([f.scale for f in fields]), Tuple([f.zero_point for f in fields]),
        out_t.scale, out_t.zero_point, axis=expr.attrs.axis,
    )  # fmt: skip
    return [out, out_t]


def _mean(expr: Any, types: Types) -> list[Any]:
    t = types[expr.args[0]]
    attrs = {k: expr.attrs[k] for k in expr.attrs.keys()}
    out = builder("mean")(builder("cast")(expr.args[0], "int32"), **attrs)
    return [builder("cast")(out, t.dtype), t]


def _leaky_relu(expr: Any, types: Types) -> list[Any]:
    x_t, out_t = types[expr.args[0]], types[expr]
    out = qnn.leaky_relu(expr.args[0], expr.attrs.alpha, *_sz(x_t), *_sz(out_t))
    return [out, out_t]


def _softmax(expr: Any, types: Types) -> list[Any]:
    x_t, out_t = types[expr.args[0]], types[expr]
    out = qnn.softmax(expr.args[0], *_sz(x_t), *_sz(out_t), axis=expr.attrs.axis)
    return [out, out_t]


def _int32_pool(op_name: str) -> Any:
    """``adaptive_avg_pool1d``/``global_avg_pool2d``: the input requantized to the output's
    parameters in int32 (or cast when they agree), pooled in int32."""

    def rule(expr: Any, types: Types) -> list[Any]:
        t, out_t = types[expr.args[0]], types[expr]
        to = TensorAffineType(out_t.scale, out_t.zero_point, "int32", t.axis)
        arg = expr.args[0]
        if TensorAffineType(*_sz(t), "int32", t.axis) == to and t.dtype == out_t.dtype:
            arg = builder("cast")(arg, "int32")
        else:
            arg = _requantized(arg, t, to)
        attrs = {k: expr.attrs[k] for k in expr.attrs.keys()}
        out = builder(op_name)(arg, **attrs)
        return [out, TensorAffineType(out_t.scale, out_t.zero_point, "int32", out_t.axis)]

    return rule


def _to_type_of(value: Expr, t: TensorAffineType, types: Types, axis: int) -> Expr:
    """A second operand (a bias, a pad value) in ``t``'s integers: requantized when it is
    quantized otherwise, quantized when it is a float constant."""
    if value in types:
        vt = types[value]
        if _same_params(vt, t):
            return value
        return qnn.requantize(
            value, vt.scale, vt.zero_point, t.scale, t.zero_point, axis=axis, out_dtype=t.dtype
        )
    if not isinstance(value, Constant) or value.data.numpy().dtype.kind != "f":
        raise TypeError(f"expected a quantized value or a float constant, got {value}")
    return qnn.quantize(value, t.scale, t.zero_point, axis=axis, out_dtype=t.dtype)


def _bias_add(expr: Any, types: Types) -> list[Any]:
    x, b = expr.args
    t = types[x]
    b = _to_type_of(b, t, types, 0)
    return [builder("nn.bias_add")(x, b, axis=expr.attrs.axis), t]


def _pad(expr: Any, types: Types) -> list[Any]:
    x = expr.args[0]
    t = types[x]
    value: Any = expr.args[1] if len(expr.args) > 1 else const(float(expr.attrs.pad_value))
    real, scale, zp = _scalar(value), _scalar(t.scale), _scalar(t.zero_point)
    if value not in types and None not in (real, scale, zp):
        # a float pad value: qnn.quantize's rounding (half away from zero) and saturation
        info = np.iinfo(t.dtype)
        q = np.sign(real / scale) * np.floor(abs(real / scale) + 0.5) + zp  # type: ignore[operator]
        value = int(np.clip(q, info.min, info.max))
    else:
        value = _to_type_of(value, t, types, types[value].axis if value in types else -1)
    attrs = {k: expr.attrs[k] for k in expr.attrs.keys() if k != "pad_value"}
    return [builder("nn.pad")(x, pad_value=value, **attrs), t]


_rule_row("nn.avg_pool2d", _avg_pool2d)
_rule_row("nn.adaptive_avg_pool1d", _int32_pool("nn.adaptive_avg_pool1d"))
_rule_row("nn.global_avg_pool2d", _int32_pool("nn.global_avg_pool2d"))
_rule_row("nn.bias_add", _bias_add)
_rule_row("nn.pad", _pad)
_rule_row("concatenate", _concatenate)
_rule_row("mean", _mean)
_rule_row("nn.leaky_relu", _leaky_relu)
_rule_row("nn.softmax", _softmax, optional=True)


_installed: list[bool] = []


def install_rules() -> None:
    """Register the built-in rules (once; a rule a user registered first is kept)."""
    if _installed:
        return
    for op_name, rule, optional in BUILT_IN_RULES:
        try:
            op = get_op(op_name)
        except ValueError:
            continue  # an op the front end does not build (hardswish) needs no rule
        attr = OPTIONAL_FQ2I_ATTR if optional else FQ2I_ATTR
        if op.get_attr(attr) is None:
            op.set_attr(attr, rule)
    _installed.append(True)


@legacy_api("relay.transform")
def FakeQuantizationToInteger(
    hard_fail: bool = False, use_qat: bool = False, optional_qnn_ops: Any = None
) -> Any:
    """``relay.transform.FakeQuantizationToInteger(hard_fail=False, use_qat=False,
    optional_qnn_ops=None)``: ``dequantize -> ops -> quantize`` regions become QNN integer ops,
    on the Relay graph (see :mod:`.fake_quantization`).

    ``use_qat=True`` (regions not ending in a quantize) is not served and raises.
    """
    if use_qat:
        raise NotImplementedError(
            "FakeQuantizationToInteger(use_qat=True) is not served: only regions ending in "
            "qnn.quantize are rewritten; run it with use_qat=False, or write the integer "
            "graph with relay.qnn.op"
        )
    install_rules()
    if optional_qnn_ops is None:
        optional_qnn_ops = []
    if isinstance(optional_qnn_ops, str) or not all(isinstance(o, str) for o in optional_qnn_ops):
        raise TypeError(f"optional_qnn_ops takes a list of op names, got {optional_qnn_ops!r}")
    return fake_quantization_pass(bool(hard_fail), optional_qnn_ops)
