"""``relay.analysis``: Relay's analyses, on the front end's Relay graph.

Each function takes a Relay expression, or the Relax function TVM holds for a function the
front end built (``mod["main"]``, walked as the Relay function it came from: see
:mod:`compile_engine_compat.relay.origin`). The modules are named by what they hold:
:mod:`.vars` (free/bound/all variables, dtypes), :mod:`.graph` (post-order walks), :mod:`.checks`
(well-formedness, normal forms, kinds), :mod:`.counts` (MACs, op frequencies), :mod:`.feature`,
:mod:`.count_layers`, :mod:`.call_graph`, :mod:`.fused` (``extract_fused_functions``, by Relax's
fusion), and :mod:`.refused` (partitioning, calibration, QNN and sparse helpers, refused at the
call); :mod:`.analysis` is Relay's module path to the functions.
"""

from __future__ import annotations

from . import analysis, call_graph, feature, sparse_conv2d, sparse_dense
from .analysis import *  # noqa: F403 (Relay's names: analysis.__all__)
from .call_graph import CallGraph
from .checks import TypeKind
from .count_layers import count_layers
from .feature import Feature
from .refused import AnnotatedRegionSet

__all__ = [
    *analysis.__all__,
    "AnnotatedRegionSet",
    "CallGraph",
    "Feature",
    "TypeKind",
    "analysis",
    "call_graph",
    "count_layers",
    "feature",
    "sparse_conv2d",
    "sparse_dense",
]
