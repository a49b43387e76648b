"""Relay passes with no meaning on TVM 0.27's Relax modules: each refused when called (not
when imported), naming what replaces it."""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = ["REFUSED_PASSES", "SPARSE_WHY"]

_BYOC = (
    "served here are MergeComposite, AnnotateTarget, MergeCompilerRegions and PartitionGraph "
    "(docs/byoc.md); the rest of BYOC partitioning runs on Relax: "
    "tvm.relax.transform.FuseOpsByPattern, MergeCompositeFunctions and RunCodegen"
)
_HIGHER_ORDER = (
    "Relay's higher-order transforms (continuations, defunctionalization) have no Relax "
    "counterpart: Relax functions are first-order dataflow"
)
#: Why sparse weight conversions are refused (relay.data_dep_optimization's too).
SPARSE_WHY = "sparse weight conversion has no Relax pass: keep the weights dense, or call TIR"

#: Relay pass -> why it is refused, and what to use instead.
REFUSED_PASSES: dict[str, str] = {
    "OutlineCompilerFunctionsWithExistingGlobalSymbols": _BYOC,
    "MarkCompilerFunctionsAsExtern": _BYOC,
    "InlineCompilerFunctionsBoundTo": _BYOC,
    "CollagePartition": _BYOC,
    "ToCPS": _HIGHER_ORDER,
    "to_cps": _HIGHER_ORDER,
    "un_cps": _HIGHER_ORDER,
    "Defunctionalization": _HIGHER_ORDER,
    "DenseToSparse": SPARSE_WHY,
    "Conv2dToSparse": SPARSE_WHY,
    "Conv2dToSparse2": SPARSE_WHY,
    "FirstOrderGradient": "the module's functions are differentiated by "
    "relay.transform.gradient(func) (relax.transform.Gradient); there is no module-wide pass",
}

globals().update(
    {name: refused_name(f"tvm.relay.transform.{name}", why) for name, why in REFUSED_PASSES.items()}
)
