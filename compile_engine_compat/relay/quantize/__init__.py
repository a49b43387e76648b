"""``relay.quantize``: TVM 0.19's automatic quantization (:func:`.quantize.quantize` under a
:func:`.qconfig.qconfig`), producing int8 convolutions and dense layers with int32
accumulation. The stages live in :mod:`.annotation`, :mod:`.calibration` and :mod:`.realization`.
"""

from __future__ import annotations

from . import kl_divergence
from .qconfig import QAnnotateKind, QConfig, current_qconfig, qconfig
from .quantize import (
    annotate,
    calibrate,
    partition,
    prerequisite_optimize,
    quantize,
    realize,
    register_annotate_function,
)

__all__ = [
    "QAnnotateKind",
    "QConfig",
    "annotate",
    "calibrate",
    "current_qconfig",
    "kl_divergence",
    "partition",
    "prerequisite_optimize",
    "qconfig",
    "quantize",
    "realize",
    "register_annotate_function",
]
