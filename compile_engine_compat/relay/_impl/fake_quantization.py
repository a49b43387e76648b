"""What ``relay.transform.FakeQuantizationToInteger`` reads on the Relay graph: the affine
types, the op attributes holding the rules (``FTVMFakeQuantizationToInteger``) and the regions.

For each ``qnn.quantize`` the pass walks back to the ``qnn.dequantize`` calls feeding it. When
every op on the way has a rule (constants, tuples and tuple items pass), the region is rebuilt
bottom-up: each rule gets the call (its arguments already integer) and the map of affine types,
and returns ``[integer expression, affine type]``, as TVM 0.19's rules did. A region with an op
that has no rule, a variable, or a rule that raises is left in float (``hard_fail=True``
raises instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay.expr import Call, Constant, Expr, Tuple, TupleGetItem

__all__ = [
    "BUILT_IN_RULE_OPS",
    "FQ2I_ATTR",
    "OPTIONAL_FQ2I_ATTR",
    "OPTIONAL_RULE_OPS",
    "Rule",
    "TensorAffineType",
    "TupleAffineType",
    "is_op",
    "region_calls",
    "rule_of",
]

#: The op attribute holding an op's rule, as in TVM 0.19.
FQ2I_ATTR = "FTVMFakeQuantizationToInteger"
#: The op attribute of the rules applied only when named in ``optional_qnn_ops``.
OPTIONAL_FQ2I_ATTR = "FTVMOptionalFakeQuantizationToInteger"

Rule = Callable[[Call, dict[Any, Any]], Sequence[Any]]

#: The ops TVM 0.19 gave a rule (``relay.transform.fake_quantization_to_integer`` registers
#: them on the pass's first use; ``list_fake_quantized_op_freqs`` counts them before that).
BUILT_IN_RULE_OPS = frozenset(
    {
        *("qnn.quantize", "qnn.dequantize", "reshape", "squeeze", "strided_slice", "transpose"),
        *("expand_dims", "max", "min", "image.resize2d", "topk", "take", "broadcast_to"),
        *("split", "clip", "concatenate", "mean", "add", "multiply", "subtract"),
        *("minimum", "maximum", "abs", "erf", "exp", "log", "rsqrt", "sigmoid", "sqrt"),
        *("tanh", "hardswish", "nn.max_pool2d", "nn.batch_flatten", "nn.depth_to_space"),
        *("nn.conv2d", "nn.conv2d_transpose", "nn.dense", "nn.batch_matmul", "nn.relu"),
        *("nn.leaky_relu", "nn.pad", "nn.bias_add", "nn.avg_pool2d"),
        *("nn.adaptive_avg_pool1d", "nn.global_avg_pool2d"),
    }
)
#: The ops with a rule applied only when named in ``optional_qnn_ops``.
OPTIONAL_RULE_OPS = frozenset({"nn.softmax"})


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, Constant) and isinstance(b, Constant):
        x, y = a.data.numpy(), b.data.numpy()
        try:  # a per-channel vector of one value equals that scalar, as in TVM 0.19
            return bool(np.allclose(x, y))
        except ValueError:
            return False
    return a is b


class TensorAffineType:
    """``tvm.ir.TensorAffineType``: ``real = scale * (q - zero_point)`` of a ``dtype`` tensor,
    per channel on ``axis`` when the scale is a vector (TVM 0.27 has no such node).

    ``direct`` is False on the region's output type given to a call that does not feed the
    quantize directly (TVM 0.19's ``avg_pool2d`` rule searched the graph for this).
    """

    direct = True

    def __init__(self, scale: Expr, zero_point: Expr, dtype: str, axis: int = -1) -> None:
        self.scale = scale
        self.zero_point = zero_point
        self.dtype = str(dtype)
        self.axis = int(axis)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorAffineType)
            and _same_value(self.scale, other.scale)
            and _same_value(self.zero_point, other.zero_point)
            and self.dtype == other.dtype
            and self.axis == other.axis
        )

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"TensorAffineType({self.scale}, {self.zero_point}, {self.dtype}, {self.axis})"


class TupleAffineType:
    """``tvm.ir.TupleAffineType``: the affine types of a tuple's fields."""

    def __init__(self, types: Sequence[TensorAffineType]) -> None:
        self.types = list(types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleAffineType) and self.types == other.types

    __hash__ = object.__hash__


def rule_of(node: Any, optional: frozenset[str]) -> Rule | None:
    """The rule of a call's op (the optional one when the op is in ``optional``), or None."""
    if not (isinstance(node, Call) and isinstance(node.op, RelayOp)):
        return None
    rule = node.op.get_attr(FQ2I_ATTR)
    if rule is None and node.op.name in optional:
        rule = node.op.get_attr(OPTIONAL_FQ2I_ATTR)
    return rule


def _has_rule(node: Any, optional: frozenset[str], built_in: bool) -> bool:
    if rule_of(node, optional) is not None:
        return True
    name = str(node.op.name) if isinstance(node, Call) and isinstance(node.op, RelayOp) else ""
    return built_in and (name in BUILT_IN_RULE_OPS or name in optional & OPTIONAL_RULE_OPS)


def is_op(node: Any, name: str) -> bool:
    return isinstance(node, Call) and isinstance(node.op, RelayOp) and node.op.name == name


def region_calls(
    root: Expr, optional: frozenset[str] = frozenset(), built_in: bool = False
) -> list[Call] | None:
    """The calls from ``root`` back to the dequantize calls (these excluded), or None when one
    of them has no rule (``built_in``: counting the built-in rules, registered or not) or the
    region reaches a variable."""
    stack: list[Any] = [root]
    seen: set[int] = set()
    calls: list[Call] = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Constant) or is_op(node, "qnn.dequantize"):
            continue
        if isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
        elif _has_rule(node, optional, built_in):
            calls.append(node)
            stack.extend(node.args)
        else:
            return None
    return calls
