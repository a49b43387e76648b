"""Relay's ``TOpPattern`` of each op (what ``has_attr({"TOpPattern": K_ELEMWISE})`` reads).

TVM 0.27's Relax ops carry no such attribute (Relax finds fusion kinds from the TIR), so the
kinds Relay registered are kept here by op name; one set with ``TempOpAttr`` or
``relay.op.get(name).set_attr("TOpPattern", k)`` wins.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BROADCAST", "COMM_REDUCE", "ELEMWISE", "INJECTIVE", "OPAQUE", "OUT_EWISE_FUSABLE"]
__all__ += ["op_pattern"]

ELEMWISE, BROADCAST, INJECTIVE, COMM_REDUCE, OUT_EWISE_FUSABLE, OPAQUE = 0, 1, 2, 3, 4, 8

_UNARY = """abs acos acosh asin asinh atan atanh ceil copy cos cosh erf exp fast_erf fast_exp
fast_tanh floor isfinite isinf isnan log log10 log2 logical_not negative nn.fast_softmax nn.relu
nn.leaky_relu nn.prelu round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc clip cast
cast_like zeros_like ones_like bitwise_not""".split()
_BINARY = """add subtract multiply divide floor_divide floor_mod mod power maximum minimum equal
not_equal less less_equal greater greater_equal logical_and logical_or logical_xor bitwise_and
bitwise_or bitwise_xor left_shift right_shift nn.bias_add where trunc_divide trunc_mod
atan2 expand_dims""".split()
_INJECTIVE = """reshape transpose squeeze concatenate stack split strided_slice take
broadcast_to reverse tile repeat gather gather_nd full full_like zeros ones arange
layout_transform nn.batch_flatten nn.pad image.resize2d one_hot reshape_like slice_like
collapse_sum_like broadcast_to_like flip sequence_mask nn.depth_to_space nn.space_to_depth
scatter_elements scatter_nd nn.upsampling nn.upsampling3d""".split()
_REDUCE = """sum mean max min prod argmax argmin all any variance std logsumexp""".split()
_OUT_FUSABLE = """nn.conv1d nn.conv2d nn.conv3d nn.conv2d_transpose nn.conv1d_transpose
nn.conv3d_transpose nn.dense nn.matmul nn.batch_matmul nn.batch_norm nn.softmax nn.max_pool1d
nn.max_pool2d nn.max_pool3d nn.avg_pool1d nn.avg_pool2d nn.avg_pool3d nn.global_max_pool2d
nn.global_avg_pool2d nn.adaptive_max_pool2d nn.adaptive_avg_pool2d""".split()

_KINDS: dict[str, int] = {
    **dict.fromkeys(_UNARY, ELEMWISE),
    **dict.fromkeys(_BINARY, BROADCAST),
    **dict.fromkeys(_INJECTIVE, INJECTIVE),
    **dict.fromkeys(_REDUCE, COMM_REDUCE),
    **dict.fromkeys(_OUT_FUSABLE, OUT_EWISE_FUSABLE),
}


def op_pattern(op: Any) -> int:
    """The ``TOpPattern`` of ``op`` (a Relay op): the one set on it, else Relay's, else opaque."""
    getter = getattr(op, "get_attr", None)
    chosen = getter("TOpPattern") if getter is not None else None
    if chosen is not None:
        return int(chosen)
    return _KINDS.get(getattr(op, "name", ""), OPAQUE)
