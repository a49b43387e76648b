"""``relay.analysis``: Relay's analyses, on the front end's Relay graph.

Each function takes a Relay expression, or the Relax function TVM holds for a function the
front end built (``mod["main"]``, walked as the Relay function it came from: see
the wing's ``relay/_impl/origin.py``). The modules are named by what they hold:
:mod:`.vars` (free/bound/all variables, dtypes), :mod:`.graph` (post-order walks), :mod:`.checks`
(well-formedness, normal forms, kinds), :mod:`.counts` (MACs, op frequencies), :mod:`.feature`,
:mod:`.count_layers`, :mod:`.call_graph`, :mod:`.fused` (``extract_fused_functions``, by Relax's
fusion), :mod:`.annotated_regions` (``AnnotatedRegionSet``, for BYOC), and :mod:`.refused`
(calibration, QNN and sparse helpers, refused at the call); :mod:`.analysis` is Relay's module
path to the functions.
"""

from __future__ import annotations

from tvm import IRModule, cpu  # re-exported, as TVM 0.19's relay.analysis did

from . import (
    analysis,
    annotated_regions,
    call_graph,
    feature,
    sparse_conv2d,
    sparse_dense,
)
from . import ffi_hooks as _ffi_api  # noqa: F401 (TVM 0.19's test hooks, by their old name)
from .analysis import *  # noqa: F403 (Relay's names: analysis.__all__)
from .annotated_regions import AnnotatedRegionSet
from .call_graph import CallGraph
from .checks import TypeKind
from .count_layers import count_layers
from .feature import Feature

__all__ = [
    *analysis.__all__,
    "AnnotatedRegionSet",
    "CallGraph",
    "Feature",
    "IRModule",
    "TypeKind",
    "analysis",
    "annotated_regions",
    "call_graph",
    "count_layers",
    "cpu",
    "feature",
    "sparse_conv2d",
    "sparse_dense",
]
