"""``relay.transform.FoldExplicitPadding``: TVM 0.19's ``SimplifyExplicitPad``, on the Relay
graph.

An ``nn.pad`` (constant mode) of only the spatial axes feeding a convolution, a pooling or a
``qnn.conv2d`` becomes that op's own padding, when padding with the pad value is what the op
does anyway: 0 for a convolution, the input zero point for ``qnn.conv2d``, the dtype's least
value for a max pooling, 0 for an average pooling that counts the padding (``count_include_pad``,
which the folded op gets when it had no padding of its own).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Constant, Expr
from ..expr_functor import ExprMutator
from ..function import Function
from .graph_rewrites import graph_pass

__all__ = ["FoldExplicitPadding", "fold_explicit_padding"]

_CONVS = {"nn.conv1d", "nn.conv2d", "nn.conv3d", "qnn.conv2d"}
_MAX_POOLS = {"nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d"}
_AVG_POOLS = {"nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d"}


def _op_name(node: Any) -> str:
    return str(node.op.name) if isinstance(node, Call) and isinstance(node.op, RelayOp) else ""


def _least(dtype: str) -> float:
    kind = np.dtype(dtype)
    return float(np.finfo(kind).min if kind.kind == "f" else np.iinfo(kind).min)


def _fill_value(call: Call, pad: Call) -> float | None:
    """The value padding must have for ``call`` to pad the same way itself, or None."""
    name = _op_name(call)
    if name == "qnn.conv2d":
        zero_point = call.args[2]
        return float(zero_point.data.numpy()) if isinstance(zero_point, Constant) else None
    if name in _CONVS or name in _AVG_POOLS:
        return 0.0
    dtype = getattr(getattr(pad, "_checked_type", None), "dtype", None)
    return _least(str(dtype)) if dtype is not None else None


def _folded_padding(call: Call, pad: Call) -> tuple[int, ...] | None:
    """The op's padding with the pad's added (before widths, then after widths, per spatial
    axis), or None when the pad touches a non-spatial axis."""
    attrs: Any = call.attrs
    layout = str(attrs.data_layout if "data_layout" in attrs else attrs.layout)
    widths = [[int(w) for w in pair] for pair in pad.attrs.pad_width]  # type: ignore[union-attr]
    if len(widths) != len(layout):
        return None
    spatial = [i for i, axis in enumerate(layout) if axis in "DHW"]
    if any(widths[i] != [0, 0] for i in range(len(layout)) if i not in spatial):
        return None
    added = [widths[i][0] for i in spatial] + [widths[i][1] for i in spatial]
    own = [int(p) for p in attrs.padding]
    if len(own) != len(added):
        return None
    return tuple(a + b for a, b in zip(added, own, strict=True))


def _fold(call: Call) -> Expr | None:
    name, pad = _op_name(call), call.args[0] if call.args else None
    if name not in _CONVS | _MAX_POOLS | _AVG_POOLS or _op_name(pad) != "nn.pad":
        return None
    pad_attrs: Any = pad.attrs  # type: ignore[union-attr]
    if len(pad.args) != 1 or str(pad_attrs.pad_mode) != "constant":  # type: ignore[union-attr]
        return None
    if float(pad_attrs.pad_value) != _fill_value(call, pad):  # type: ignore[arg-type]
        return None
    padding = _folded_padding(call, pad)  # type: ignore[arg-type]
    if padding is None:
        return None
    changes: dict[str, Any] = {"padding": padding}
    if name in _AVG_POOLS and not call.attrs.count_include_pad:  # type: ignore[union-attr]
        if any(int(p) for p in call.attrs.padding):  # type: ignore[union-attr]
            return None
        changes["count_include_pad"] = True
    attrs = call.attrs.with_fields(**changes)  # type: ignore[union-attr]
    return Call(call.op, [pad.args[0], *call.args[1:]], attrs, call.type_args, call.span)  # type: ignore[union-attr]


class _FoldPadding(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        folded = _fold(new) if isinstance(new, Call) else None
        return new if folded is None else folded


def fold_explicit_padding(func: Function) -> Function:
    """``func`` with each foldable ``nn.pad`` folded into the op it feeds."""
    infer(func)
    out: Function = _FoldPadding().visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def FoldExplicitPadding() -> Any:
    """``relay.transform.FoldExplicitPadding()`` (opt level 0): an ``nn.pad`` folded into the
    padding of the convolution or pooling it feeds, on the Relay graph, as TVM 0.19 did."""
    return graph_pass("FoldExplicitPadding", 0, fold_explicit_padding)
