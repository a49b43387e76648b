"""GPU targets: the ``s_tir.dlight`` rules, so a function builds into valid device code."""

from __future__ import annotations

import tvm
from tvm import s_tir

__all__ = ["schedule_gpu"]


def schedule_gpu(sch: s_tir.Schedule, target: tvm.target.Target) -> s_tir.Schedule:
    from tvm.s_tir import dlight

    name = sch.func_working_on
    rules = dlight.ApplyDefaultSchedule(
        dlight.gpu.Matmul(),
        dlight.gpu.GEMV(),
        dlight.gpu.Reduction(),
        dlight.gpu.GeneralReduction(),
        dlight.gpu.Fallback(),
    )
    with target:
        mod = rules(sch.mod)
    scheduled = s_tir.Schedule(mod)
    if name is not None:
        scheduled.work_on(name.name_hint if hasattr(name, "name_hint") else str(name))
    return scheduled
