"""onnxruntime's ``QAttention`` (com.microsoft): the self-attention of quantized BERTs.

TVM 0.19's Relay importer converted it (``OrtAttentionBase``); TVM 0.27's Relax importer has no
converter for it (its float ``Attention`` refuses ``unidirectional`` and ``past``). Here the
input projection is the 8-bit matmul accumulated in int32 (:func:`.onnx_integer.matmul_int32`,
the zero points as correction terms), dequantized by ``input_scale * weight_scale`` plus the
float bias; the attention itself runs in float32 as onnxruntime's does::

    Q, K, V = split(dequantized(input @ weight) + bias), each [batch, heads, seq, head_size]
    K, V    = concat(past[0], K), concat(past[1], V)        (with a ``past`` input)
    present = stack(K, V)                                    [2, batch, heads, total, head_size]
    scores  = Q @ K^T * scale + mask terms                   scale: 1 / sqrt(head_size)
    output  = softmax(scores) @ V, heads merged              [batch, seq, heads * head_size]

The mask (``mask_index``, int32) is a raw 0/1 attention mask of shape ``[batch, total]`` or
``[batch, seq, total]`` (0 adds ``mask_filter_value``, -10000 by default) or the ``[batch]``
end positions of right-padded keys; ``unidirectional`` leaves each query's future keys out of
its softmax, as onnxruntime does. TVM 0.19 gave them the mask value (-10000) plus the padding
mask instead: the same result except where all of a query's own keys are masked, where
onnxruntime (and the shim) weigh its own keys and TVM 0.19 also weighed future ones.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from tvm import relax

from .onnx_integer import QuantizedOpError, dtype_of, matmul_int32, zero_point

__all__ = ["attention", "qattention"]

R = relax.op

_REFUSED_ATTRIBUTES = ("do_rotary", "past_present_share_buffer")


def _shape(expr: Any, what: str) -> list[int]:
    try:
        return [int(d) for d in expr.ty.shape]
    except (TypeError, AttributeError) as exc:
        raise QuantizedOpError(f"QAttention needs a static {what} shape, got {expr.ty}") from exc


def _heads(x: Any, batch: int, seq: int, heads: int, head_size: int) -> Any:
    """``[batch, seq, heads * head_size]`` -> ``[batch, heads, seq, head_size]``."""
    return R.permute_dims(R.reshape(x, [batch, seq, heads, head_size]), [0, 2, 1, 3])


def _mask_terms(mask: Any, batch: int, seq: int, total: int, filter_value: float) -> Any:
    """The additive mask, ``[batch, 1, seq or 1, total]``: ``filter_value`` where masked."""
    shape = _shape(mask, "mask_index")
    if shape == [batch]:  # end positions: keys at or after the end are masked
        positions = relax.const(np.arange(total, dtype="int32")[None, :])
        keep = R.less(positions, R.reshape(mask, [batch, 1]))
        terms = R.where(keep, relax.const(0.0), relax.const(filter_value))
        return R.reshape(terms, [batch, 1, 1, total])
    if shape not in ([batch, total], [batch, seq, total]):
        raise QuantizedOpError(
            f"QAttention's mask_index of shape {shape} is not supported: give [batch] end "
            f"positions, a [batch, total] or [batch, seq, total] 0/1 mask (batch {batch}, "
            f"seq {seq}, total {total})"
        )
    masked = R.subtract(relax.const(1.0), R.astype(mask, "float32"))
    terms = R.multiply(masked, relax.const(filter_value))
    return R.reshape(terms, [batch, 1, 1 if len(shape) == 2 else seq, total])


def _causal(seq: int, past: int) -> Any:
    """``[1, 1, seq, past + seq]``, True where a key is not after the query (``past`` keys
    before the first query)."""
    keys = np.arange(past + seq)[None, :]
    queries = np.arange(seq)[:, None] + past
    return relax.const((keys <= queries)[None, None])


def qattention(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """Convert a ``QAttention`` node (module doc): returns ``(output, present)``."""
    for name in _REFUSED_ATTRIBUTES:
        if attrs.get(name):
            raise QuantizedOpError(f"QAttention with {name}=1 is not supported")
    x, weight, bias, x_scale, w_scale, mask, xz, wz, past = (inputs[i] for i in range(9))
    if x is None or weight is None or bias is None or x_scale is None or w_scale is None:
        raise QuantizedOpError("QAttention needs input, weight, bias, input_scale, weight_scale")
    batch, seq, hidden, heads = _dims(x, weight, attrs, "QAttention")
    x_zero, w_zero = zero_point(xz, dtype_of(x)), zero_point(wz, dtype_of(weight))
    acc = matmul_int32(x, weight, x_zero, w_zero, params)
    qkv = R.add(R.multiply(R.astype(acc, "float32"), R.multiply(x_scale, w_scale)), bias)
    return _attend(bb, qkv, (batch, seq, hidden, heads), mask, past, attrs)


def attention(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    """com.microsoft's float ``Attention`` (``input @ weight + bias``, then as ``QAttention``),
    for the ``unidirectional`` and ``past`` forms that Relax's converter refuses."""
    for name in _REFUSED_ATTRIBUTES:
        if attrs.get(name):
            raise QuantizedOpError(f"Attention with {name}=1 is not supported")
    x, weight, bias, mask, past = (inputs[i] for i in range(5))
    if x is None or weight is None or bias is None:
        raise QuantizedOpError("Attention needs input, weight and bias")
    dims = _dims(x, weight, attrs, "Attention")
    qkv = R.add(R.matmul(x, weight), bias)
    return _attend(bb, qkv, dims, mask, past, attrs)


def _dims(x: Any, weight: Any, attrs: dict[str, Any], op: str) -> tuple[int, int, int, int]:
    """``(batch, seq, hidden, heads)``, checked."""
    if "num_heads" not in attrs:
        raise QuantizedOpError(f"{op} needs its num_heads attribute")
    heads = int(attrs["num_heads"])
    x_shape, w_shape = _shape(x, "input"), _shape(weight, "weight")
    if len(x_shape) != 3 or len(w_shape) != 2 or w_shape[0] != x_shape[2] or w_shape[1] % 3:
        raise QuantizedOpError(
            f"{op} takes input [batch, seq, hidden] and weight [hidden, 3 * out], got "
            f"{x_shape} and {w_shape}"
        )
    batch, seq, _ = x_shape
    hidden = w_shape[1] // 3
    if heads <= 0 or hidden % heads:
        raise QuantizedOpError(f"{op}: num_heads {heads} does not divide {hidden}")
    return batch, seq, hidden, heads


def _attend(
    bb: Any, qkv: Any, dims: tuple[int, int, int, int], mask: Any, past: Any, attrs: dict[str, Any]
) -> Any:
    """The attention over the projected ``qkv`` [batch, seq, 3 * hidden]: (output, present)."""
    batch, seq, hidden, heads = dims
    head_size = hidden // heads
    parts = [R.strided_slice(qkv, [2], [i * hidden], [(i + 1) * hidden]) for i in range(3)]
    q, k, v = (bb.emit(_heads(part, batch, seq, heads, head_size)) for part in parts)
    past_len = 0
    if past is not None:
        past_shape = _shape(past, "past")
        if (
            len(past_shape) != 5
            or past_shape[:3] != [2, batch, heads]
            or (past_shape[4] != head_size)
        ):
            raise QuantizedOpError(
                f"(Q)Attention's past must be [2, {batch}, {heads}, past_seq, {head_size}], got "
                f"{past_shape}"
            )
        past_len = past_shape[3]
        k = R.concat([R.squeeze(R.strided_slice(past, [0], [0], [1]), [0]), k], axis=2)
        v = R.concat([R.squeeze(R.strided_slice(past, [0], [1], [2]), [0]), v], axis=2)
        k, v = bb.emit(k), bb.emit(v)
    total = past_len + seq
    present = R.stack([k, v], axis=0)
    scale = float(attrs.get("scale", 0.0)) or 1.0 / math.sqrt(head_size)
    scores = R.multiply(R.matmul(q, R.permute_dims(k, [0, 1, 3, 2])), relax.const(scale))
    filter_value = float(attrs.get("mask_filter_value", -10000.0))
    terms = None
    if mask is not None:
        terms = _mask_terms(mask, batch, seq, total, filter_value)
    if terms is not None:
        scores = R.add(scores, terms)
    if attrs.get("unidirectional", 0):
        # onnxruntime leaves the future keys out of the softmax (TVM 0.19 added the mask value
        # to them instead, which differs where all of a query's own keys are masked).
        lowest = relax.const(float(np.finfo("float32").min))
        scores = R.where(_causal(seq, past_len), scores, lowest)
    probs = R.nn.softmax(scores, axis=-1)
    out = R.permute_dims(R.matmul(probs, v), [0, 2, 1, 3])
    return relax.Tuple([bb.emit(R.reshape(out, [batch, seq, hidden])), bb.emit(present)])
