"""``relay.analysis.extract_fused_functions``: the fused functions of a module, by Relax's
fusion (``relax.transform.FuseOps``)."""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.deprecations import legacy_api

__all__ = ["extract_fused_functions"]


@legacy_api("relay.analysis")
def extract_fused_functions(mod: Any) -> dict[int, Any]:
    """Relay's ``extract_fused_functions``: each fused primitive function of ``mod``.

    Relay ran ``SimplifyInference`` and ``FuseOps(3)`` and returned the primitive functions.
    Here the module is decomposed for inference, legalized to TIR, and fused by Relax's
    ``FuseOps``; the fused functions are Relax functions (marked ``Primitive``), so their number
    follows Relax's fusion rules, which group much as Relay's did.

    Parameters
    ----------
    mod : tvm.IRModule
        A module the front end built (or any Relax module).

    Returns
    -------
    dict of int to relax.Function
        Each function by its structural hash.
    """
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"extract_fused_functions takes a tvm.IRModule, got {type(mod).__name__}")
    fused = tvm.transform.Sequential(
        [
            relax.transform.DecomposeOpsForInference(),
            relax.transform.LegalizeOps(),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FuseOps(3),
        ]
    )(mod)
    out: dict[int, Any] = {}
    for func in fused.functions.values():
        if isinstance(func, relax.Function) and func.attrs and "Primitive" in func.attrs:
            out[int(tvm_ffi.structural_hash(func))] = func
    return out
