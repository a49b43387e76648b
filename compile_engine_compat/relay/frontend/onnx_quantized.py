"""The quantized ONNX ops Relax's ONNX importer lacks, as integer Relax ops; and the import
entry that gives them (and the folded QDQ groups of :mod:`.onnx_qdq`) to the importer.

TVM 0.19's Relay importer converted ``QLinearConv``, ``QLinearMatMul``, ``QGemm``,
``ConvInteger``, the element-wise ``QLinear*`` ops (com.microsoft) and ``MatMulInteger``;
TVM 0.27's converts ``QuantizeLinear``/``DequantizeLinear``/``MatMulInteger`` only, the latter
on int32 operands. Here convolutions and matmuls accumulate the 8-bit operands in int32
(:mod:`.onnx_integer`) and requantize as onnxruntime does; the element-wise ops, pooling,
softmax and concatenation dequantize, run the importer's own float converter, and quantize
again (onnxruntime's results, to one quantum where it uses lookup tables).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat import boundary

from .onnx_integer import (
    QuantizedOpError,
    conv_int32,
    dequantized,
    dtype_of,
    matmul_int32,
    quantized,
    requantized,
    value_of,
    zero_point,
)
from .onnx_ops import CONVERTERS as FLOAT_CONVERTERS
from .onnx_qattention import qattention
from .onnx_qdq import fold_qdq

__all__ = ["CONVERTERS", "QuantizedOpError", "import_onnx"]

R = relax.op
Converter = Callable[[Any, Any, dict[str, Any], Any, int], Any]


def _multiplier(*scales: Any, divide_by: Any = None, ndim: int = 0, axis: int = 1) -> Any:
    """The product of the scales (over ``divide_by``) in float32, a 1-D per-channel scale
    reshaped to broadcast along ``axis`` of an ``ndim`` output."""
    result = scales[0]
    for scale in scales[1:]:
        if ndim and int(scale.ty.ndim) == 1:
            shape = [1] * ndim
            shape[axis] = int(scale.ty.shape[0])
            scale = R.reshape(scale, shape)
        result = R.multiply(result, scale)
    return result if divide_by is None else R.divide(result, divide_by)


def _out_dtype(y_zero_point: Any) -> str:
    return dtype_of(y_zero_point) if y_zero_point is not None else "uint8"


def _qlinear_conv(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    x, xs, xz, w, ws, wz, ys, yz, bias = (inputs[i] for i in range(9))
    acc = conv_int32(
        x, w, zero_point(xz, dtype_of(x)), zero_point(wz, dtype_of(w)), attrs, params, bias
    )
    ndim = int(x.ty.ndim)
    if ys is None:  # a folded QDQ Conv whose output stays float (no QuantizeLinear after it)
        return R.multiply(R.astype(acc, "float32"), _multiplier(xs, ws, ndim=ndim))
    return requantized(acc, _multiplier(xs, ws, divide_by=ys, ndim=ndim), zero_point(yz, "uint8"),
                       _out_dtype(yz))  # fmt: skip


def _conv_integer(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    x, w, xz, wz = (inputs[i] for i in range(4))
    return conv_int32(x, w, zero_point(xz, dtype_of(x)), zero_point(wz, dtype_of(w)), attrs, params)


def _matmul_integer(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    a, b, az, bz = (inputs[i] for i in range(4))
    return matmul_int32(a, b, zero_point(az, dtype_of(a)), zero_point(bz, dtype_of(b)), params)


def _qlinear_matmul(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    a, a_s, az, b, bs, bz, ys, yz = (inputs[i] for i in range(8))
    acc = matmul_int32(a, b, zero_point(az, dtype_of(a)), zero_point(bz, dtype_of(b)), params)
    if ys is None:  # a folded QDQ MatMul whose output stays float
        return R.multiply(R.astype(acc, "float32"), _multiplier(a_s, bs))
    return requantized(acc, _multiplier(a_s, bs, divide_by=ys), zero_point(yz, "uint8"),
                       _out_dtype(yz))  # fmt: skip


def _qgemm(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """com.microsoft ``QGemm``: ``alpha * A' B' + C``, C an int32 bias in A*B's scale; a float
    output where ``y_scale`` is absent."""
    a, a_s, az, b, bs, bz, c, ys, yz = (inputs[i] for i in range(9))
    if attrs.get("transA", 0):
        a = R.permute_dims(a)
    if attrs.get("transB", 0):
        known = value_of(b, params)
        b = relax.const(known.T.copy()) if known is not None else bb.normalize(R.permute_dims(b))
    acc = matmul_int32(
        bb.normalize(a), b, zero_point(az, dtype_of(a)), zero_point(bz, dtype_of(b)), params
    )
    if c is not None:
        acc = R.add(acc, c)
    scale = _multiplier(a_s, bs)
    alpha = float(attrs.get("alpha", 1.0))
    if alpha != 1.0:
        scale = R.multiply(scale, relax.const(alpha, "float32"))
    if ys is None:
        return R.multiply(R.astype(acc, "float32"), scale)
    return requantized(acc, R.divide(scale, ys), zero_point(yz, "uint8"), _out_dtype(yz))


# -- through float: dequantize, the float op, quantize ---------------------------------------


def _pool(op_type: str) -> Converter:
    """com.microsoft ``QLinear[Global]AveragePool`` ``(X, X_scale, X_zp, Y_scale, Y_zp)``:
    ``X`` dequantized, the importer's float ``op_type``, the result quantized (NCHW only)."""

    def convert(bb: Any, nodes: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
        x, xs, xz, ys, yz = (nodes[i] for i in range(5))
        if attrs.get("channels_last", 0):
            raise QuantizedOpError(f"Q{op_type} with channels_last=1 is not supported")
        float_attrs = {k: v for k, v in attrs.items() if k != "channels_last"}
        real = bb.normalize(dequantized(x, xs, zero_point(xz, dtype_of(x))))
        result = boundary.onnx_float_converter(op_type, opset)(bb, [real], float_attrs, params)
        return quantized(result, ys, zero_point(yz, "uint8"), _out_dtype(yz))

    return convert


def _binary(op: Callable[[Any, Any], Any]) -> Converter:
    """com.microsoft ``QLinearAdd``/``QLinearMul``: ``(A, As, Az, B, Bs, Bz, Cs, Cz)``."""

    def convert(bb: Any, nodes: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
        a, a_s, az, b, bs, bz, cs, cz = (nodes[i] for i in range(8))
        real = op(dequantized(a, a_s, zero_point(az, dtype_of(a))),
                  dequantized(b, bs, zero_point(bz, dtype_of(b))))  # fmt: skip
        return quantized(real, cs, zero_point(cz, "uint8"), _out_dtype(cz))

    return convert


def _qlinear_sigmoid(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    x, xs, xz, ys, yz = (inputs[i] for i in range(5))
    real = R.sigmoid(dequantized(x, xs, zero_point(xz, dtype_of(x))))
    return quantized(real, ys, zero_point(yz, "uint8"), _out_dtype(yz))


def _qlinear_leaky_relu(
    bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int
) -> Any:
    x, xs, xz, ys, yz = (inputs[i] for i in range(5))
    real = R.nn.leakyrelu(dequantized(x, xs, zero_point(xz, dtype_of(x))),
                          float(attrs.get("alpha", 0.01)))  # fmt: skip
    return quantized(real, ys, zero_point(yz, "uint8"), _out_dtype(yz))


def _qlinear_softmax(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """com.microsoft ``QLinearSoftmax`` as onnxruntime computes it: the softmax times
    ``floor(1 / Y_scale)`` (not over ``Y_scale``), rounded, plus ``Y_zero_point``; ``opset``
    (an attribute) chooses Softmax's axis semantics (before 13: the axes from ``axis`` on)."""
    x, xs, xz, ys, yz = (inputs[i] for i in range(5))
    version = int(attrs.get("opset", opset))
    float_attrs = {k: v for k, v in attrs.items() if k != "opset"}
    if "axis" not in float_attrs:
        float_attrs["axis"] = 1 if version < 13 else -1
    real = bb.normalize(dequantized(x, xs, zero_point(xz, dtype_of(x))))
    probabilities = boundary.onnx_float_converter("Softmax", version)(
        bb, [real], float_attrs, params
    )
    steps = R.floor(R.divide(relax.const(1.0, "float32"), ys))
    return requantized(probabilities, steps, zero_point(yz, "uint8"), _out_dtype(yz))


def _qlinear_concat(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """com.microsoft ``QLinearConcat``: ``(Y_scale, Y_zp, X1, X1_scale, X1_zp, ...)``."""
    ys, yz = inputs[0], inputs[1]
    if (len(inputs) - 2) % 3:
        raise QuantizedOpError("QLinearConcat takes (X, X_scale, X_zero_point) triples")
    reals = [
        dequantized(inputs[i], inputs[i + 1], zero_point(inputs[i + 2], dtype_of(inputs[i])))
        for i in range(2, len(inputs), 3)
    ]
    real = R.concat(reals, axis=int(attrs["axis"]))
    return quantized(real, ys, zero_point(yz, "uint8"), _out_dtype(yz))


#: The shim's converters, by ONNX op type (com.microsoft's QLinear* ops included).
CONVERTERS: dict[str, Converter] = {
    "QLinearConv": _qlinear_conv,
    "ConvInteger": _conv_integer,
    "QLinearMatMul": _qlinear_matmul,
    "MatMulInteger": _matmul_integer,
    "QGemm": _qgemm,
    "QLinearAdd": _binary(R.add),
    "QLinearMul": _binary(R.multiply),
    "QLinearSigmoid": _qlinear_sigmoid,
    "QLinearLeakyRelu": _qlinear_leaky_relu,
    "QLinearSoftmax": _qlinear_softmax,
    "QLinearAveragePool": _pool("AveragePool"),
    "QLinearGlobalAveragePool": _pool("GlobalAveragePool"),
    "QLinearConcat": _qlinear_concat,
    "QAttention": qattention,
}


def _opset(model: Any, opset: int | None) -> int:
    if opset is not None:
        return opset
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return int(entry.version)
    return 1


def import_onnx(
    model: Any,
    shape_dict: Mapping[str, Any] | None,
    dtype_dict: Any,
    opset: int | None,
    keep_params_in_input: bool,
) -> tvm.IRModule:
    """``model`` as a Relax module: TVM's ONNX importer, with the shim's quantized converters
    and the QDQ groups folded into integer ops (and its float converters, :mod:`.onnx_ops`); a
    model with none of these goes to TVM's importer unchanged."""
    from tvm.relax.frontend.onnx import from_onnx as relax_from_onnx

    op_types = {node.op_type for node in model.graph.node}
    shapes = dict(shape_dict) if shape_dict else None
    converters = {**FLOAT_CONVERTERS, **CONVERTERS}
    if not op_types & (set(converters) | {"DequantizeLinear"}):
        return relax_from_onnx(model, shape_dict=shapes, dtype_dict=dtype_dict, opset=opset,
                               keep_params_in_input=keep_params_in_input,
                               sanitize_input_names=False)  # fmt: skip
    return boundary.onnx_import_with(
        converters, fold_qdq(model.graph), _opset(model, opset), shapes, dtype_dict,
        keep_params_in_input, False,
    )  # fmt: skip
