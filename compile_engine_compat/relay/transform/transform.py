"""``relay.transform.transform``: the module Relay kept its passes in (``tvm.relay.transform``
re-exported it). The passes live in modules named by how they are served: :mod:`.passes` (the
first ones), :mod:`.graph_rewrites` (rewrites of the Relay graph), :mod:`.identities`,
:mod:`.refused` (refused at the call); the pass infrastructure in :mod:`.pass_infra` and
:mod:`.infra_classes`; the partitioning passes of external compilers (BYOC) in
:mod:`.merge_composite`, :mod:`.annotate_target`, :mod:`.merge_compiler_regions` and
:mod:`.partition_graph`. This module is the legacy path to all of them.
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
    InferType,
    InferTypeLocal,
)

from . import refused
from .alter_op_layout import AlterOpLayout
from .annotate_target import AnnotateTarget
from .canonicalize_cast import CanonicalizeCast
from .combine_parallel import (
    BatchingOps,
    CombineParallelBatchMatmul,
    CombineParallelConv2D,
    CombineParallelDense,
)
from .dead_code import DeadCodeElimination
from .div_to_mul import DivToMul
from .dynamic_to_static import DynamicToStatic
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .eta_expand import EtaExpand
from .fake_quantization_to_integer import FakeQuantizationToInteger
from .fast_math import FastMath
from .flatten_atrous_conv import FlattenAtrousConv
from .flexible_shape import FlexibleShapeDispatch
from .fold_constant import FoldConstant
from .fold_explicit_padding import FoldExplicitPadding
from .fold_scale_axis import BackwardFoldScaleAxis, FoldScaleAxis, ForwardFoldScaleAxis
from .fuse_ops import DefuseOps, FuseOps
from .graph_rewrites import ChangeBatch, SimplifyFCTranspose
from .helpers import FoldConstantExpr, mangle_module_name
from .identities import (
    CapturePostDfsIndexInSpans,
    LazyGradientInit,
    PlanDevices,
)
from .infra_classes import FunctionPass, LayoutConfig, ToANormalFormExpr
from .inline import Inline
from .lambda_lift import LambdaLift
from .legalize import Legalize
from .manifest_lifetimes import ManifestLifetimes
from .merge_compiler_regions import MergeCompilerRegions
from .merge_composite import MergeComposite
from .normal_forms import ToANormalForm, ToBasicBlockNormalForm, ToGraphNormalForm
from .partial_eval import PartialEvaluate
from .partition_graph import PartitionGraph
from .remove_unused_functions import RemoveUnusedFunctions
from .simplify_expr import SimplifyExpr
from .simplify_inference import SimplifyInference
from .split_args import SplitArgs
from .to_mixed_precision import ToMixedPrecision

# The passes refused at the call (partitioning, CPS, sparse, QNN): stand-ins named here too.
globals().update({name: getattr(refused, name) for name in refused.REFUSED_PASSES})


__all__ = [
    "AlterOpLayout",
    "AnnotateSpans",
    "AnnotateTarget",
    "BackwardFoldScaleAxis",
    "BatchingOps",
    "CanonicalizeCast",
    "CanonicalizeOps",
    "CapturePostDfsIndexInSpans",
    "ChangeBatch",
    "CombineParallelBatchMatmul",
    "CombineParallelConv2D",
    "CombineParallelDense",
    "ConvertLayout",
    "DeadCodeElimination",
    "DefuseOps",
    "DivToMul",
    "DynamicToStatic",
    "EliminateCommonSubexpr",
    "EtaExpand",
    "FakeQuantizationToInteger",
    "FastMath",
    "FlattenAtrousConv",
    "FlexibleShapeDispatch",
    "FoldConstant",
    "FoldConstantExpr",
    "FoldExplicitPadding",
    "FoldScaleAxis",
    "ForwardFoldScaleAxis",
    "FunctionPass",
    "FuseOps",
    "InferType",
    "InferTypeLocal",
    "MergeCompilerRegions",
    "MergeComposite",
    "PartitionGraph",
    "Inline",
    "LambdaLift",
    "LayoutConfig",
    "LazyGradientInit",
    "Legalize",
    "ManifestLifetimes",
    "PartialEvaluate",
    "PassContext",
    "PlanDevices",
    "RemoveUnusedFunctions",
    "Sequential",
    "SimplifyExpr",
    "SimplifyFCTranspose",
    "SimplifyInference",
    "SplitArgs",
    "ToANormalForm",
    "ToANormalFormExpr",
    "ToBasicBlockNormalForm",
    "ToGraphNormalForm",
    "ToMixedPrecision",
    "build_config",
    "function_pass",
    "mangle_module_name",
    "module_pass",
    *sorted(refused.REFUSED_PASSES),
]
