"""``tvm.autotvm.tuner`` (served by ``install()``): the AutoTVM tuners, refused at construction.

``from tvm.autotvm.tuner import XGBTuner`` works, so a file that tunes behind a flag imports;
``XGBTuner(task)`` raises :class:`~compile_engine_compat.tvm_legacy.tuning.TuningRemovedError`.
"""

from __future__ import annotations

from ..tuning import refused_class

__all__ = ["DropoutTuner", "GATuner", "GridSearchTuner", "RandomTuner", "Tuner", "XGBTuner"]

Tuner, XGBTuner, GATuner, RandomTuner, GridSearchTuner, DropoutTuner = (
    refused_class(f"autotvm.tuner.{name}")
    for name in ("Tuner", "XGBTuner", "GATuner", "RandomTuner", "GridSearchTuner", "DropoutTuner")
)
