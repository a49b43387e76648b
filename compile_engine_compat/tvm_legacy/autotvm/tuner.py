"""``tvm.autotvm.tuner`` (served by ``install()``): the AutoTVM tuners, tuning on MetaSchedule.

Each tuner tunes one task of ``autotvm.task.extract_from_program`` with MetaSchedule's
``tune_tir``; the search each maps to is in :mod:`compile_engine_compat.tvm_legacy.tune.search`
(``XGBTuner``: evolutionary search on the xgb cost model, ``GATuner``: evolutionary search,
``RandomTuner``: random replay, ``GridSearchTuner``: seeded replay).
"""

from __future__ import annotations

from compile_engine_compat.deprecations import legacy_api

from .tuning import Tuner as _TunerBase

__all__ = ["DropoutTuner", "GATuner", "GridSearchTuner", "RandomTuner", "Tuner", "XGBTuner"]


@legacy_api("tvm.autotvm.tuning")
class Tuner(_TunerBase):
    """``autotvm.tuner.Tuner(task)``: the base of the tuners (tunes as :class:`XGBTuner`)."""


class XGBTuner(Tuner):
    """``XGBTuner(task, plan_size=64, feature_type="itervar", loss_type="reg", ...)``."""

    strategy = "XGBTuner"


class GATuner(Tuner):
    """``GATuner(task, pop_size=100, elite_num=3, mutation_prob=0.1)``."""

    strategy = "GATuner"


class RandomTuner(Tuner):
    """``RandomTuner(task, range_idx=None)``."""

    strategy = "RandomTuner"


class GridSearchTuner(Tuner):
    """``GridSearchTuner(task, range_idx=None)``."""

    strategy = "GridSearchTuner"


class DropoutTuner(Tuner):
    """``DropoutTuner(task, ...)``: tunes as :class:`XGBTuner`."""

    strategy = "DropoutTuner"
