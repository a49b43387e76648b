"""``relay.transform.FlattenAtrousConv``: ``space_to_batch_nd -> conv2d -> batch_to_space_nd``
as one dilated ``conv2d``, on the Relay graph (TVM 0.19's pass).

TensorFlow writes an atrous (dilated) convolution as a plain convolution between
``space_to_batch_nd`` and ``batch_to_space_nd`` with the same ``block_shape``; the pass gives the
convolution ``dilation = block_shape`` and the padding ``paddings - crops`` and drops the two
reshuffles. ``nn.conv2d`` and ``qnn.conv2d`` in ``NHWC`` (the layout TensorFlow's pattern has)
with unit strides and dilation and no padding of their own are rewritten; anything else is kept.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api

from ..expr import Call, Expr
from .graph_rewrites import graph_pass, op_name, rewrite_calls

__all__ = ["FlattenAtrousConv"]

#: The convolutions the pattern may hold.
_CONVOLUTIONS = ("nn.conv2d", "qnn.conv2d")


def _ints(values: Any) -> list[int]:
    return [int(v) for v in values]


def _flattened(conv: Call, block: list[int], paddings: Any, crops: Any) -> Expr | None:
    """The dilated convolution, or None when ``conv`` is not one the pattern allows."""
    attrs: Any = conv.attrs
    if str(attrs.data_layout) != "NHWC" or len(block) != 2:
        return None
    if (
        _ints(attrs.strides) != [1, 1]
        or _ints(attrs.dilation) != [1, 1]
        or any(_ints(attrs.padding))
    ):
        return None
    before = [int(paddings[i][0]) - int(crops[i][0]) for i in range(2)]
    after = [int(paddings[i][1]) - int(crops[i][1]) for i in range(2)]
    if min(before + after) < 0:
        return None
    fields = {name: attrs[name] for name in attrs.keys()}
    fields.update(padding=(*before, *after), dilation=tuple(block))
    space_to_batch: Any = conv.args[0]
    return Call(conv.op, [space_to_batch.args[0], *conv.args[1:]], conv.op.row.make_attrs(fields))


def _flatten(call: Call) -> Expr:
    conv: Any = call.args[0] if op_name(call) == "nn.batch_to_space_nd" else None
    if op_name(conv) not in _CONVOLUTIONS or op_name(conv.args[0]) != "nn.space_to_batch_nd":
        return call
    space_to_batch: Any = conv.args[0].attrs
    block = _ints(space_to_batch.block_shape)
    if block != _ints(call.attrs.block_shape):  # type: ignore[union-attr]
        return call
    flat = _flattened(conv, block, space_to_batch.paddings, call.attrs.crops)  # type: ignore[union-attr]
    return call if flat is None else flat


@legacy_api("relay.transform.more_passes")
def FlattenAtrousConv() -> Any:
    """``relay.transform.FlattenAtrousConv()`` (opt level 0), on the Relay graph.

    ``batch_to_space_nd(conv2d(space_to_batch_nd(x, block, paddings), w), block, crops)``
    becomes ``conv2d(x, w, dilation=block, padding=paddings - crops)`` (``nn.conv2d`` or
    ``qnn.conv2d``, ``NHWC``); other graphs are left as they are.
    """
    return graph_pass("FlattenAtrousConv", 0, rewrite_calls(_flatten))
