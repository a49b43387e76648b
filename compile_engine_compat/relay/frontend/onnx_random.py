"""ONNX's random ops, which Relax's importer does not convert, on TVM 0.19's Threefry generator.

``RandomUniform``, ``RandomNormal``, their ``...Like`` forms, ``Bernoulli`` and ``Multinomial``
draw from a key made of the node's ``seed`` (a fresh ``numpy.random.randint(1e6)`` at import
where the node has none), as TVM 0.19's Relay importer did: the same seed gives TVM 0.19's
values, bit for bit (:mod:`..._impl.threefry`). One difference: ``Multinomial``'s input is
taken as ONNX defines it, unnormalized log-probabilities (softmax over the last axis), where
TVM 0.19 took it as probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax

from compile_engine_compat.relay._impl import threefry
from compile_engine_compat.relay.expr import Attrs

__all__ = ["CONVERTERS", "RandomOpError"]

R = relax.op


class RandomOpError(ValueError):
    """An ONNX random op the converter cannot serve (named in the message)."""


def _key(attrs: dict[str, Any]) -> Any:
    seed = attrs.get("seed")
    seed = int(np.random.randint(1_000_000)) if seed is None else int(seed)
    return relax.const(threefry.key_words(seed))


def _dtype(attrs: dict[str, Any], default: str, op_type: str, floats_only: bool = True) -> str:
    """The ``dtype`` attribute (an ONNX ``TensorProto`` code) as a TVM dtype string."""
    code = attrs.get("dtype")
    if code is None:
        dtype = default
    else:
        from onnx import helper

        dtype = str(np.dtype(helper.tensor_dtype_to_np_dtype(int(code))))
    if floats_only and dtype not in ("float32", "float64"):
        raise RandomOpError(f"{op_type} generates float32 or float64 values, not {dtype}")
    return dtype


def _static_shape(expr: Any, op_type: str) -> list[int]:
    shape = expr.ty.shape
    if shape is None or not all(hasattr(d, "value") for d in shape):
        raise RandomOpError(f"{op_type} needs its input's shape known at import, got {shape}")
    return [int(d) for d in shape]


def _draw(bb: Any, kind: str, attrs: dict[str, Any], shape: list[int], dtype: str) -> Any:
    """``kind`` (``uniform`` or ``normal``) values of ``shape``, by the node's parameters."""
    if kind == "uniform":
        first, second = float(attrs.get("low", 0.0)), float(attrs.get("high", 1.0))
        emit = threefry.uniform
    else:
        first, second = float(attrs.get("mean", 0.0)), float(attrs.get("scale", 1.0))
        emit = threefry.normal
    fields = {"out_shape": shape, "out_dtype": dtype}
    args = [_key(attrs), relax.const(first, dtype), relax.const(second, dtype)]
    drawn = bb.emit(emit(bb, args, Attrs(f"relay.attrs.{kind.title()}Attrs", fields)))
    return relax.TupleGetItem(drawn, 1)


def _random(kind: str, like: bool) -> Any:
    op_type = f"Random{kind.title()}{'Like' if like else ''}"

    def convert(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
        if like:
            shape = _static_shape(inputs[0], op_type)
            dtype = _dtype(attrs, str(inputs[0].ty.dtype), op_type)
        else:
            shape = [int(d) for d in attrs["shape"]]
            dtype = _dtype(attrs, "float32", op_type)
        return _draw(bb, kind, attrs, shape, dtype)

    return convert


def _bernoulli(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """1 where a uniform draw falls under the input's probability (TVM 0.19's rule)."""
    probs = inputs[0]
    in_dtype = str(probs.ty.dtype)
    if in_dtype not in ("float32", "float64"):
        raise RandomOpError(f"Bernoulli takes float32 or float64 probabilities, not {in_dtype}")
    out_dtype = _dtype(attrs, in_dtype, "Bernoulli", floats_only=False)
    uniform = _draw(bb, "uniform", attrs, _static_shape(probs, "Bernoulli"), in_dtype)
    return R.astype(R.less(uniform, probs), out_dtype)


def _multinomial(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """``sample_size`` class indices per row, drawn from the softmax of the input's logits."""
    out_dtype = _dtype(attrs, "int32", "Multinomial", floats_only=False)
    probs = bb.emit(R.nn.softmax(R.astype(inputs[0], "float32"), axis=-1))
    samples = int(attrs.get("sample_size", 1))
    fields = Attrs("relay.attrs.MultinomialAttrs", {"num_samples": samples})
    drawn = bb.emit(threefry.multinomial(bb, [_key(attrs), probs], fields))
    return R.astype(relax.TupleGetItem(drawn, 1), out_dtype)


#: The shim's random-op converters, by ONNX op type.
CONVERTERS = {
    "RandomUniform": _random("uniform", like=False),
    "RandomUniformLike": _random("uniform", like=True),
    "RandomNormal": _random("normal", like=False),
    "RandomNormalLike": _random("normal", like=True),
    "Bernoulli": _bernoulli,
    "Multinomial": _multinomial,
}
