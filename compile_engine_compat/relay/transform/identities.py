"""Relay passes that are identities on the front end's modules, each with its reason.

Every one is a real ``tvm.transform.Pass`` with Relay's name and opt level (so ``Sequential``,
``disabled_pass`` and ``required_pass`` treat it as Relay did) whose body returns the module
unchanged. Each was a layout, scheduling or normal-form step whose job is done elsewhere on TVM
0.27 or has nothing to act on; results are the same without it. :data:`IDENTITY_KINDS` says why,
per pass, for the docs page and the tests.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.passes import identity_pass

__all__ = [
    "IDENTITY_KINDS",
    "AlterOpLayout",
    "BackwardFoldScaleAxis",
    "BatchingOps",
    "CanonicalizeCast",
    "CapturePostDfsIndexInSpans",
    "CombineParallelConv2D",
    "DefuseOps",
    "FlattenAtrousConv",
    "FoldExplicitPadding",
    "ForwardFoldScaleAxis",
    "LazyGradientInit",
    "Legalize",
    "ManifestLifetimes",
    "PlanDevices",
    "SplitArgs",
]

#: Relay pass -> "identity: <why>".
IDENTITY_KINDS: dict[str, str] = {
    "AlterOpLayout": "identity: Relay swapped in target-specific data layouts per op; the "
    "shim's schedules pick their own tiling and packing, so results are unchanged",
    "Legalize": "identity: Relay rewrote ops a target could not run; relay.build legalizes "
    "every op (relax.transform.LegalizeOps) when it compiles",
    "CanonicalizeCast": "identity: Relay moved casts out of fused elementwise groups; the "
    "front end's casts are plain Relax astype calls that relay.build fuses itself",
    "DefuseOps": "identity: FuseOps groups nothing before relay.build legalizes, so there "
    "are no fused functions to undo",
    "ForwardFoldScaleAxis": "identity: Relax has no scale-axis folding; it only moved a "
    "multiply into conv/dense weights, so results are unchanged",
    "BackwardFoldScaleAxis": "identity: Relax has no scale-axis folding; it only moved a "
    "multiply into conv/dense weights, so results are unchanged",
    "CombineParallelConv2D": "identity: Relax has no conv2d combining; parallel convolutions "
    "run separately, with the same results",
    "BatchingOps": "identity: Relay's CombineParallelConv2D/Dense/BatchMatmul in sequence; "
    "relay.transform.CombineParallelDense runs Relax's CombineParallelMatmul on its own",
    "LazyGradientInit": "identity: Relay made gradient buffers lazily; the gradients of "
    "relay.transform.gradient are computed by relax.transform.Gradient, eagerly",
    "PlanDevices": "identity: relay.build compiles for one device; there is nothing to plan",
    "ManifestLifetimes": "identity: the Relax VM plans memory (StaticPlanBlockMemory, "
    "KillAfterLastUse) when relay.build compiles",
    "FoldExplicitPadding": "identity: nn.pad stays a separate op before the convolution; the "
    "results are the same",
    "FlattenAtrousConv": "identity: space_to_batch/batch_to_space around a conv stay as they "
    "are; the results are the same",
    "SplitArgs": "identity: the CPU target takes any number of arguments; nothing to split",
    "CapturePostDfsIndexInSpans": "identity: Relay recorded node indices for Collage; Relax "
    "nodes keep the spans they were built with",
}


@legacy_api("relay.transform.more_passes")
def AlterOpLayout() -> Any:
    """``relay.transform.AlterOpLayout()``: an identity (opt level 3); see IDENTITY_KINDS."""
    return identity_pass("AlterOpLayout", 3)


@legacy_api("relay.transform.more_passes")
def Legalize(legalize_map_attr_name: str = "FTVMLegalize") -> Any:
    """``relay.transform.Legalize()``: an identity (opt level 1); ``relay.build`` legalizes."""
    return identity_pass("Legalize", 1)


@legacy_api("relay.transform.more_passes")
def CanonicalizeCast() -> Any:
    """``relay.transform.CanonicalizeCast()``: an identity (opt level 3)."""
    return identity_pass("CanonicalizeCast", 3)


@legacy_api("relay.transform.more_passes")
def DefuseOps() -> Any:
    """``relay.transform.DefuseOps()``: an identity (opt level 3)."""
    return identity_pass("DefuseOps", 3)


@legacy_api("relay.transform.more_passes")
def ForwardFoldScaleAxis() -> Any:
    """``relay.transform.ForwardFoldScaleAxis()``: an identity (opt level 3)."""
    return identity_pass("ForwardFoldScaleAxis", 3)


@legacy_api("relay.transform.more_passes")
def BackwardFoldScaleAxis() -> Any:
    """``relay.transform.BackwardFoldScaleAxis()``: an identity (opt level 3)."""
    return identity_pass("BackwardFoldScaleAxis", 3)


@legacy_api("relay.transform.more_passes")
def CombineParallelConv2D(min_num_branches: int = 3) -> Any:
    """``relay.transform.CombineParallelConv2D(min_num_branches=3)``: an identity (opt
    level 4)."""
    return identity_pass("CombineParallelConv2D", 4)


@legacy_api("relay.transform.more_passes")
def BatchingOps() -> Any:
    """``relay.transform.BatchingOps()``: an identity (opt level 1)."""
    return identity_pass("BatchingOps", 1)


@legacy_api("relay.transform.more_passes")
def LazyGradientInit() -> Any:
    """``relay.transform.LazyGradientInit()``: an identity (opt level 1)."""
    return identity_pass("LazyGradientInit", 1)


@legacy_api("relay.transform.more_passes")
def PlanDevices(config: Any = None) -> Any:
    """``relay.transform.PlanDevices(config)``: an identity (opt level 0)."""
    return identity_pass("PlanDevices", 0)


@legacy_api("relay.transform.more_passes")
def ManifestLifetimes() -> Any:
    """``relay.transform.ManifestLifetimes()``: an identity (opt level 0)."""
    return identity_pass("ManifestLifetimes", 0)


@legacy_api("relay.transform.more_passes")
def FoldExplicitPadding() -> Any:
    """``relay.transform.FoldExplicitPadding()``: an identity (opt level 0)."""
    return identity_pass("FoldExplicitPadding", 0)


@legacy_api("relay.transform.more_passes")
def FlattenAtrousConv() -> Any:
    """``relay.transform.FlattenAtrousConv()``: an identity (opt level 0)."""
    return identity_pass("FlattenAtrousConv", 0)


@legacy_api("relay.transform.more_passes")
def SplitArgs(max_function_args: int = 0) -> Any:
    """``relay.transform.SplitArgs(max_function_args)``: an identity (opt level 1)."""
    return identity_pass("SplitArgs", 1)


@legacy_api("relay.transform.more_passes")
def CapturePostDfsIndexInSpans() -> Any:
    """``relay.transform.CapturePostDfsIndexInSpans()``: an identity (opt level 0)."""
    return identity_pass("CapturePostDfsIndexInSpans", 0)
