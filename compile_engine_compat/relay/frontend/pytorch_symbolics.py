"""ONNX symbolics for the aten ops that torch's TorchScript ONNX exporter lacks.

``from_pytorch`` imports a TorchScript module through ``torch.onnx.export(dynamo=False)``; TVM
0.19's TorchScript importer converted these ops itself. Each function here writes an op as
standard ONNX nodes that Relax's ONNX importer reads; :func:`~compile_engine_compat.boundary.
onnx_export_symbolics` registers them for the length of one export only.

``cosh``/``sinh`` are written through ``Exp``: TVM 0.27's LLVM code generator has no
``tirx.cosh``/``tirx.sinh`` intrinsic. ``max_pool3d`` replaces torch's own symbolic, which
pooled an unbatched ``C, D, H, W`` input as if it were ``N, C, H, W``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SYMBOLICS"]

#: ``torch.nn.functional`` reduction codes (``none``, ``mean``, ``sum``).
_REDUCTIONS = {1: "ReduceMean", 2: "ReduceSum"}


def _helper() -> Any:
    from torch.onnx import symbolic_helper

    return symbolic_helper


def _is_bool(value: Any) -> bool:
    return bool(value.type().scalarType() == "Bool")


def _concat(g: Any, tensors: Any, dim: Any) -> Any:
    """``aten::concat`` (``torch.concat``, kept so in a nested traced module) as ``Concat``."""
    helper = _helper()
    return g.op("Concat", *helper._unpack_list(tensors), axis_i=helper._get_const(dim, "i", "dim"))


def _hyperbolic(combine: str) -> Callable[[Any, Any], Any]:
    """``(exp(x) combine exp(-x)) / 2``: ``cosh`` with ``Add``, ``sinh`` with ``Sub``."""

    def symbolic(g: Any, x: Any) -> Any:
        import torch

        pair = g.op(combine, g.op("Exp", x), g.op("Exp", g.op("Neg", x)))
        two = g.op("Constant", value_t=torch.tensor(2.0))
        return g.op("Div", pair, g.op("CastLike", two, x))

    return symbolic


def _bitwise(logical: str, bitwise: str) -> Callable[[Any, Any, Any], Any]:
    """A binary bitwise op: the logical ONNX op on bools, the ``Bitwise*`` op on integers."""

    def symbolic(g: Any, x: Any, y: Any) -> Any:
        return g.op(logical if _is_bool(x) else bitwise, x, y)

    return symbolic


def _bitwise_not(g: Any, x: Any) -> Any:
    """``aten::bitwise_not``: ``Not`` on bools, ``BitwiseNot`` on integers."""
    return g.op("Not" if _is_bool(x) else "BitwiseNot", x)


def _addcdiv(g: Any, x: Any, t1: Any, t2: Any, value: Any = None) -> Any:
    """``x + value * t1 / t2``."""
    import torch

    quotient = g.op("Div", t1, t2)
    scale = 1.0 if value is None else _helper()._get_const(value, "f", "value")
    if scale != 1.0:
        constant = g.op("Constant", value_t=torch.tensor(float(scale)))
        quotient = g.op("Mul", quotient, g.op("CastLike", constant, quotient))
    return g.op("Add", x, quotient)


def _l1_loss(g: Any, x: Any, target: Any, reduction: Any) -> Any:
    """``|x - target|``, its mean or its sum."""
    difference = g.op("Abs", g.op("Sub", x, target))
    code = _helper()._get_const(reduction, "i", "reduction")
    if code == 0:
        return difference
    return g.op(_REDUCTIONS[code], difference, keepdims_i=0)


def _threshold(g: Any, x: Any, threshold: Any, value: Any) -> Any:
    """``x`` where ``x > threshold``, else ``value`` (torch's own refuses a non-zero threshold)."""
    import torch

    helper = _helper()
    bounds = [helper._get_const(v, "f", "threshold") for v in (threshold, value)]
    low, fill = (g.op("CastLike", g.op("Constant", value_t=torch.tensor(b)), x) for b in bounds)
    return g.op("Where", g.op("Greater", x, low), x, fill)


def _constant(g: Any, number: float, like: Any) -> Any:
    import torch

    return g.op("CastLike", g.op("Constant", value_t=torch.tensor(float(number))), like)


def _log1p_exp(g: Any, x: Any) -> Any:
    """``log(1 + exp(x))``."""
    return g.op("Log", g.op("Add", _constant(g, 1.0, x), g.op("Exp", x)))


def _softplus(g: Any, x: Any, beta: Any, threshold: Any) -> Any:
    """``log(1 + exp(beta * x)) / beta``, ``x`` itself where ``beta * x > threshold`` (ONNX's
    ``Softplus`` has neither ``beta`` nor the threshold)."""
    helper = _helper()
    scale = helper._get_const(beta, "f", "beta")
    limit = helper._get_const(threshold, "f", "threshold")
    scaled = g.op("Mul", x, _constant(g, scale, x))
    smooth = g.op("Div", _log1p_exp(g, scaled), _constant(g, scale, x))
    return g.op("Where", g.op("Greater", scaled, _constant(g, limit, x)), x, smooth)


def _log_sigmoid(g: Any, x: Any) -> Any:
    """``min(x, 0) - log(1 + exp(-|x|))``: finite where ``Log(Sigmoid(x))`` gives ``-inf``."""
    low = g.op("Min", x, _constant(g, 0.0, x))
    return g.op("Sub", low, _log1p_exp(g, g.op("Neg", g.op("Abs", x))))


def _trunc(g: Any, x: Any) -> Any:
    """``sign(x) * floor(|x|)`` (ONNX has no ``Trunc``)."""
    return g.op("Mul", g.op("Sign", x), g.op("Floor", g.op("Abs", x)))


def _max_pool3d(
    g: Any, x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: Any
) -> Any:
    """``aten::max_pool3d``, whose input may be unbatched (``C, D, H, W``): torch's symbolic
    wrote a ``MaxPool`` on the rank-4 tensor, which ONNX reads as ``N, C, H, W`` with a 3-d
    kernel; here such an input gets its batch axis for the pool and loses it after."""
    from torch.onnx._internal.torchscript_exporter import symbolic_opset10

    pool = symbolic_opset10._max_pool("max_pool3d", 3, return_indices=False)
    if x.type().dim() != 4:
        return pool(g, x, kernel, stride, padding, dilation, ceil_mode)
    import torch

    axis = g.op("Constant", value_t=torch.tensor([0], dtype=torch.int64))
    batched = g.op("Unsqueeze", x, axis)
    return g.op("Squeeze", pool(g, batched, kernel, stride, padding, dilation, ceil_mode), axis)


#: aten op name -> its ONNX symbolic.
SYMBOLICS: dict[str, Callable[..., Any]] = {
    "aten::concat": _concat,
    "aten::cosh": _hyperbolic("Add"),
    "aten::sinh": _hyperbolic("Sub"),
    "aten::bitwise_xor": _bitwise("Xor", "BitwiseXor"),
    "aten::__ixor_": _bitwise("Xor", "BitwiseXor"),
    "aten::__ior_": _bitwise("Or", "BitwiseOr"),
    "aten::__iand_": _bitwise("And", "BitwiseAnd"),
    "aten::bitwise_not": _bitwise_not,
    "aten::addcdiv": _addcdiv,
    "aten::l1_loss": _l1_loss,
    "aten::threshold": _threshold,
    "aten::softplus": _softplus,
    "aten::trunc": _trunc,
    "aten::log_sigmoid": _log_sigmoid,
    "aten::max_pool3d": _max_pool3d,
}
