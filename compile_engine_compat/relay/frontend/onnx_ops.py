"""Float ONNX ops that Relax's importer lacks or converts unlike TVM 0.19's Relay importer.

* ``Scatter`` (opset 9/10) with negative indices: Relax's converter builds ``scatter_nd``
  coordinates from the indices as given, and ``scatter_nd`` does not wrap negative ones, so
  the kernel wrote before the start of its output (heap corruption: the upstream ONNX file's
  later aborts and its segfault at exit). TVM 0.19 wrapped them (``scatter_elements``); here
  they are wrapped (``index + dim`` where negative) before the importer's own converter runs.
* ``Celu`` (opset 12), which Relax's importer does not convert:
  ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import relax

from compile_engine_compat import boundary

__all__ = ["CONVERTERS"]

R = relax.op
Converter = Callable[[Any, Any, dict[str, Any], Any, int], Any]


def _wrapped_indices(bb: Any, indices: Any, dim: Any) -> Any:
    """``indices`` with each negative value ``v`` as ``v + dim`` (ONNX's counting from the end)."""
    dtype = str(indices.ty.dtype)
    size = relax.const(int(dim), dtype)
    negative = R.less(indices, relax.const(0, dtype))
    return bb.normalize(R.where(negative, R.add(indices, size), indices))


def _scatter(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    data, indices, updates = inputs[0], inputs[1], inputs[2]
    shape = data.ty.shape
    axis = int(attrs.get("axis", 0))
    if shape is not None:
        dim = shape[axis % len(shape)]
        if isinstance(dim, int) or hasattr(dim, "value"):
            indices = _wrapped_indices(bb, indices, int(dim))
    convert = boundary.onnx_float_converter("Scatter", opset)
    return convert(bb, [data, indices, updates], attrs, params)


def _celu(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    x = inputs[0]
    dtype = str(x.ty.dtype)
    alpha = relax.const(float(attrs.get("alpha", 1.0)), dtype)
    zero = relax.const(0.0, dtype)
    one = relax.const(1.0, dtype)
    negative = R.multiply(alpha, R.subtract(R.exp(R.divide(x, alpha)), one))
    return R.add(R.maximum(zero, x), R.minimum(zero, negative))


#: The shim's float converters, by ONNX op type.
CONVERTERS: dict[str, Converter] = {
    "Scatter": _scatter,
    "Celu": _celu,
}
