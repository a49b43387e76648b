"""``relay.analysis.extract_fused_functions``: the primitive functions TVM 0.19's fusion makes
of a module (``SimplifyInference`` then ``FuseOps(3)``, on the Relay graph)."""

from __future__ import annotations

from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.fusion import fuse, is_primitive
from compile_engine_compat.relay._impl.graph_walk import GraphVisitor
from compile_engine_compat.relay._impl.structural_hash import structural_hash

__all__ = ["extract_fused_functions"]


class _Primitives(GraphVisitor):
    """The ``Primitive`` functions of a graph, by structural hash (the first of equal ones)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[int, Any] = {}

    def visit_function(self, func: Any) -> Any:
        if is_primitive(func):
            self.found.setdefault(structural_hash(func), func)
            return
        self._visit_children(func)


@legacy_api("relay.analysis")
def extract_fused_functions(mod: Any) -> dict[int, Any]:
    """Relay's ``extract_fused_functions``: each fused primitive function of ``mod``.

    As in TVM 0.19, the module's functions go through ``SimplifyInference`` and
    ``FuseOps(fuse_opt_level=3)`` on the Relay graph, and each ``Primitive`` function is
    returned once, by its structural hash. A module with no Relay graph (a Relax module) is
    decomposed for inference, legalized and fused by Relax's ``FuseOps``; its fused functions
    are Relax functions.

    Parameters
    ----------
    mod : tvm.IRModule
        A module the front end built (or any Relax module).

    Returns
    -------
    dict of int to relay.Function
        Each function by its structural hash.
    """
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"extract_fused_functions takes a tvm.IRModule, got {type(mod).__name__}")
    from ..transform.simplify_inference import simplify_inference  # transform imports analysis

    graphs = [origin.relay_of(func) for func in mod.functions.values()]
    if all(graph is None for graph in graphs):
        return _relax_fused(mod)
    found = _Primitives()
    with tvm.transform.PassContext(opt_level=3):
        for graph in graphs:
            if graph is not None:
                found.visit(fuse(simplify_inference(graph), 3, _max_depth()))
    return found.found


def _max_depth() -> int:
    config = tvm.transform.PassContext.current().config
    return int(config.get("relax.FuseOps.max_depth", 256))


def _relax_fused(mod: tvm.IRModule) -> dict[int, Any]:
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
