"""``relay.transform.transform``: the module Relay kept its passes in (``tvm.relay.transform``
re-exported it). The passes live in :mod:`.passes`, the pass infrastructure in
:mod:`.pass_infra`; the partitioning passes of external compilers (BYOC) are in
:mod:`.merge_composite`, :mod:`.annotate_target`, :mod:`.merge_compiler_regions` and
:mod:`.partition_graph`; this module is the legacy path to all of them.
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

from .annotate_target import AnnotateTarget
from .merge_compiler_regions import MergeCompilerRegions
from .merge_composite import MergeComposite
from .partition_graph import PartitionGraph

__all__ = [
    "AnnotateSpans",
    "AnnotateTarget",
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
    "MergeCompilerRegions",
    "MergeComposite",
    "PartitionGraph",
    "PassContext",
    "RemoveUnusedFunctions",
    "Sequential",
    "SimplifyInference",
    "ToMixedPrecision",
    "build_config",
    "function_pass",
    "module_pass",
]
