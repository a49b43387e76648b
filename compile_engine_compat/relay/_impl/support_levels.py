"""TVM 0.19's support level of each Relay op (``relay.op.get(name).support_level``).

Relay grouped its ops in levels: 1 the basic tensor and network ops, 2 convolutions and pools,
3 the other tensor and transform ops, 4 comparisons, reductions and bit operations, 5 vision
and image, 10 what it called temporary. The levels are documentation, as they were: nothing
reads them. An op this table does not list answers 10.
"""

from __future__ import annotations

__all__ = ["support_level"]

_LEVELS: dict[int, str] = {
    1: (
        "log log2 log10 tan cos cosh sin sinh acos acosh asin asinh atan atanh exp fast_exp "
        "erf fast_erf sqrt rsqrt sigmoid tanh fast_tanh add subtract multiply divide "
        "floor_divide trunc_divide mod floor_mod trunc_mod concatenate expand_dims "
        "nn.dense nn.relu nn.softmax nn.log_softmax nn.dropout nn.batch_norm nn.bias_add "
        "nn.layer_norm nn.instance_norm nn.group_norm"
    ),
    2: (
        "nn.conv1d nn.conv2d nn.conv3d nn.conv1d_transpose nn.conv2d_transpose "
        "nn.conv3d_transpose nn.max_pool1d nn.max_pool2d nn.max_pool3d nn.avg_pool1d "
        "nn.avg_pool2d nn.avg_pool3d nn.global_max_pool2d nn.global_avg_pool2d "
        "nn.adaptive_max_pool2d nn.adaptive_avg_pool2d nn.upsampling nn.upsampling3d nn.pad "
        "nn.batch_flatten nn.lrn nn.l2_normalize"
    ),
    3: (
        "ceil floor trunc round sign abs negative copy clip isnan isfinite isinf cast "
        "cast_like reshape reshape_like transpose squeeze take full full_like zeros zeros_like "
        "ones ones_like split reverse reverse_sequence repeat tile arange stack gather "
        "gather_nd layout_transform nn.leaky_relu nn.prelu"
    ),
    4: (
        "equal not_equal less less_equal greater greater_equal maximum minimum power "
        "right_shift left_shift logical_and logical_or logical_xor logical_not bitwise_and "
        "bitwise_or bitwise_xor bitwise_not where strided_slice broadcast_to broadcast_to_like "
        "sum max min mean prod variance std argmax argmin all any"
    ),
    5: (
        "image.resize1d image.resize2d image.resize3d image.crop_and_resize "
        "vision.multibox_prior vision.get_valid_counts vision.non_max_suppression "
        "vision.roi_align vision.roi_pool"
    ),
}

_BY_NAME: dict[str, int] = {
    name: level for level, names in _LEVELS.items() for name in names.split()
}


def support_level(op_name: str) -> int:
    """TVM 0.19's support level of the Relay op ``op_name`` (10 for an op not listed)."""
    return _BY_NAME.get(op_name, 10)
