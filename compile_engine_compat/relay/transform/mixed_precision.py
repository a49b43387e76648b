"""``relay.transform.mixed_precision``: TVM 0.19's op lists of ``ToMixedPrecision``.

Each Relay op is ALWAYS (computed in the mixed precision type: convolutions, ``dense``,
``batch_matmul``), FOLLOW (in the mixed type when all its floating-point inputs are) or NEVER
(kept in float32: ``softmax``, reductions, ``exp``, ...). A user's
``relay.op.register_mixed_precision_conversion(op_name, func)`` (the op attribute
``FTVMMixedPrecisionConversionType``) overrides an op's list; :func:`conversion_rule` is what the
pass reads. Nothing is registered on import: the lists are read when the pass runs.
``register_mixed_precision_conversion`` is re-exported from ``relay.op``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..op.op import MIXED_PRECISION_ATTR as ATTR  # the op attribute (TVM 0.19's name)
from ..op.op import register_mixed_precision_conversion

__all__ = [
    "ATTR",
    "DEFAULT_ALWAYS_LIST",
    "DEFAULT_FOLLOW_LIST",
    "DEFAULT_NEVER_LIST",
    "MIXED_PRECISION_ALWAYS",
    "MIXED_PRECISION_FOLLOW",
    "MIXED_PRECISION_NEVER",
    "conversion_rule",
    "generic_always_op",
    "generic_follow_op",
    "generic_never_op",
    "get_generic_out_dtypes",
    "register_func_to_op_list",
    "register_mixed_precision_conversion",
]

MIXED_PRECISION_ALWAYS = 0
MIXED_PRECISION_FOLLOW = 1
MIXED_PRECISION_NEVER = 2

#: ``func(call, mixed_precision_type) -> [category, accumulation dtype, output dtype]``.
ConversionRule = Callable[[Any, str], list[Any]]

DEFAULT_ALWAYS_LIST = [
    *("nn.conv1d", "nn.conv2d", "nn.conv3d"),
    *("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose"),
    *("nn.dense", "nn.batch_matmul"),
]
DEFAULT_FOLLOW_LIST = [
    # ops that add data or change shapes
    *("nn.pad", "nn.batch_flatten", "concatenate", "zeros", "split", "squeeze", "transpose"),
    *("expand_dims", "reshape", "dyn.reshape", "broadcast_to_like", "dyn.broadcast_to"),
    *("strided_slice", "dyn.strided_slice", "take", "argwhere", "where", "tile", "dyn.tile"),
    *("scatter", "scatter_elements", "scatter_nd", "full", "dyn.full", "nn.depth_to_space"),
    # comparisons, copies and casts
    *("less", "greater", "less_equal", "greater_equal", "copy", "cast", "cast_like"),
    # arithmetic
    *("add", "subtract", "multiply", "divide", "nn.bias_add", "nn.batch_norm", "sqrt"),
    "shape_of",
    # activations
    *("max", "min", "maximum", "minimum", "argmax", "argmin", "nn.relu", "nn.leaky_relu"),
    *("nn.prelu", "nn.dropout", "sigmoid", "tanh", "fast_tanh", "fast_exp", "fast_erf", "clip"),
    # pooling
    *("nn.max_pool1d", "nn.max_pool2d", "nn.max_pool3d"),
    *("nn.avg_pool1d", "nn.avg_pool2d", "nn.avg_pool3d", "nn.global_max_pool2d"),
    *("nn.adaptive_max_pool1d", "nn.adaptive_max_pool2d", "nn.adaptive_max_pool3d"),
    "image.resize2d",
]
DEFAULT_NEVER_LIST = [
    # |f(x)| >> |x|, erf (no float16 lowering in LLVM), arange (its end may not fit)
    *("exp", "power", "nn.cross_entropy", "nn.cross_entropy_with_logits", "nn.softmax"),
    *("nn.l2_normalize", "erf", "arange"),
    # large summations
    *("nn.global_avg_pool2d", "nn.adaptive_avg_pool1d", "nn.adaptive_avg_pool2d"),
    *("nn.adaptive_avg_pool3d", "sum", "mean", "variance", "nn.layer_norm"),
]


def get_generic_out_dtypes(call_node: Any, mixed_precision_type: str) -> list[str]:
    """``[accumulation dtype, output dtype]`` for most ops: both the mixed precision type.

    Parameters
    ----------
    call_node : relay.Call
        The call (unused by the generic rule, as in TVM 0.19).
    mixed_precision_type : str
        The target type (``"float16"``).
    """
    return [mixed_precision_type, mixed_precision_type]


def generic_always_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    """The rule of the ALWAYS list."""
    return [MIXED_PRECISION_ALWAYS, *get_generic_out_dtypes(call_node, mixed_precision_type)]


def generic_follow_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    """The rule of the FOLLOW list."""
    return [MIXED_PRECISION_FOLLOW, *get_generic_out_dtypes(call_node, mixed_precision_type)]


def generic_never_op(call_node: Any, mixed_precision_type: str) -> list[Any]:
    """The rule of the NEVER list."""
    return [MIXED_PRECISION_NEVER, *get_generic_out_dtypes(call_node, mixed_precision_type)]


_DEFAULT_RULES: dict[str, ConversionRule] = {
    **dict.fromkeys(DEFAULT_ALWAYS_LIST, generic_always_op),
    **dict.fromkeys(DEFAULT_FOLLOW_LIST, generic_follow_op),
    **dict.fromkeys(DEFAULT_NEVER_LIST, generic_never_op),
}


def register_func_to_op_list(list_ops: list[str]) -> Callable[[ConversionRule], None]:
    """A decorator registering its function for every op of ``list_ops`` (TVM 0.19's)."""

    def decorator(func: ConversionRule) -> None:
        for op_name in list_ops:
            register_mixed_precision_conversion(op_name, func=func)

    return decorator


def conversion_rule(op: Any) -> ConversionRule | None:
    """The rule of a Relay op: the one registered, else its default list's; None if neither."""
    registered = op.get_attr(ATTR) if hasattr(op, "get_attr") else None
    if registered is not None:
        return registered
    return _DEFAULT_RULES.get(str(op.name))
