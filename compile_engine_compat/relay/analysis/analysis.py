"""``relay.analysis.analysis``: the module Relay kept its analysis functions in (``relay.analysis``
re-exports it). The functions live in the modules of this package named by what they do."""

from __future__ import annotations

from .checks import (
    check_basic_block_normal_form,
    check_constant,
    check_kind,
    unmatched_cases,
    well_formed,
)
from .counts import (
    extract_intermdeiate_expr,
    get_total_mac_number,
    list_op_freqs,
    search_fc_transpose,
)
from .fake_quantized import list_fake_quantized_op_freqs
from .feature import detect_feature
from .fused import extract_fused_functions
from .graph import post_order_visit
from .refused import get_calibration_data
from .vars import (
    all_dtypes,
    all_type_vars,
    all_vars,
    bound_type_vars,
    bound_vars,
    free_type_vars,
    free_vars,
)

__all__ = [
    "all_dtypes",
    "all_type_vars",
    "all_vars",
    "bound_type_vars",
    "bound_vars",
    "check_basic_block_normal_form",
    "check_constant",
    "check_kind",
    "detect_feature",
    "extract_fused_functions",
    "extract_intermdeiate_expr",
    "free_type_vars",
    "free_vars",
    "get_calibration_data",
    "get_total_mac_number",
    "list_fake_quantized_op_freqs",
    "list_op_freqs",
    "post_order_visit",
    "search_fc_transpose",
    "unmatched_cases",
    "well_formed",
]
