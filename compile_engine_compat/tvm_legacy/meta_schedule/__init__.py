"""``tvm.meta_schedule`` (served by ``install()``): MetaSchedule where TVM 0.12-0.19 had it.

TVM 0.27 moved MetaSchedule to ``tvm.s_tir.meta_schedule``: every name of that module is served
from there under its old path (``tvm.meta_schedule.tune_tir`` is
``tvm.s_tir.meta_schedule.tune_tir``, with the deprecation warning). ``relay_integration``
(``extract_tasks``, ``tune_relay``, ``compile_relay``), gone with Relay, is served by the shim's
tuning core on the module's Relax form (:mod:`.relay_integration`).
"""

from __future__ import annotations

import importlib
from typing import Any

from compile_engine_compat.deprecations import warn_legacy

__all__: list[str] = []

#: The API table row of this module's names.
ROW = "tvm.meta_schedule.relay_integration"


def __getattr__(name: str) -> Any:
    # Loaded on first use, not bound at import: install() serves the submodule by its path, and
    # uninstall() removes that binding again.
    if name == "relay_integration":
        return importlib.import_module(f"{__name__}.relay_integration")
    if name.startswith("__"):
        raise AttributeError(name)
    from tvm.s_tir import meta_schedule

    try:
        value = getattr(meta_schedule, name)
    except AttributeError:
        raise AttributeError(
            f"tvm.meta_schedule.{name}: TVM 0.27's MetaSchedule (tvm.s_tir.meta_schedule) has no "
            f"{name!r}; see its names with dir(tvm.s_tir.meta_schedule)"
        ) from None
    warn_legacy(ROW, f"tvm.s_tir.meta_schedule.{name}")
    return value
