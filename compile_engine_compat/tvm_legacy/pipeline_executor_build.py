"""``tvm.contrib.pipeline_executor_build`` of TVM <=0.19, served by ``install()``: its feature
check (see :mod:`.pipeline_executor`); ``PipelineConfig``, ``build`` and ``export_library`` are
refused at the call, naming why."""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name
from compile_engine_compat.tvm_legacy.pipeline_executor import (
    PIPELINE_WHY,
    pipeline_executor_enabled,
)

__all__ = ["PipelineConfig", "build", "export_library", "pipeline_executor_build_enabled"]

_MODULE = "tvm.contrib.pipeline_executor_build"
PipelineConfig = refused_name(f"{_MODULE}.PipelineConfig", PIPELINE_WHY)
build = refused_name(f"{_MODULE}.build", PIPELINE_WHY)
export_library = refused_name(f"{_MODULE}.export_library", PIPELINE_WHY)


def pipeline_executor_build_enabled() -> bool:
    """Whether pipeline modules can be built: never in TVM 0.27 (False)."""
    return pipeline_executor_enabled()
