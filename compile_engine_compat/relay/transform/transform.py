"""``relay.transform.transform``: the module Relay kept its passes in (``tvm.relay.transform``
re-exported it). The passes live in :mod:`.passes`, the pass infrastructure in
:mod:`.pass_infra`; this module is the legacy path to both.
"""

from __future__ import annotations

from compile_engine_compat.relay._impl.pass_infra import (
    PassContext,
    Sequential,
    build_config,
    function_pass,
    module_pass,
)
from compile_engine_compat.relay._impl.passes import (
    AnnotateSpans,
    CanonicalizeOps,
    ConvertLayout,
    DeadCodeElimination,
    DynamicToStatic,
    EliminateCommonSubexpr,
    FoldConstant,
    FoldScaleAxis,
    FuseOps,
    InferType,
    InferTypeLocal,
    RemoveUnusedFunctions,
    SimplifyInference,
    ToMixedPrecision,
)

__all__ = [
    "AnnotateSpans",
    "CanonicalizeOps",
    "ConvertLayout",
    "DeadCodeElimination",
    "DynamicToStatic",
    "EliminateCommonSubexpr",
    "FoldConstant",
    "FoldScaleAxis",
    "FuseOps",
    "InferType",
    "InferTypeLocal",
    "PassContext",
    "RemoveUnusedFunctions",
    "Sequential",
    "SimplifyInference",
    "ToMixedPrecision",
    "build_config",
    "function_pass",
    "module_pass",
]
