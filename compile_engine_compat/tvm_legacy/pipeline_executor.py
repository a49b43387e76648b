"""``tvm.contrib.pipeline_executor`` of TVM <=0.19, served by ``install()``: its feature check.

TVM 0.19's pipeline executor (subgraphs of a Relay model run on a chain of executors, one
thread each) needed a runtime built with ``USE_PIPELINE_EXECUTOR``; without it
``pipeline_executor_enabled()`` and ``pipeline_executor_build_enabled()`` answered False and
legacy code took its other branch. TVM 0.27 has no pipeline executor in any build, so both answer
False here (``pipeline_executor_build_enabled`` in :mod:`.pipeline_executor_build`); the rest
of the two modules (``PipelineConfig``, ``build``, ``PipelineModule``, ...) is refused at the
call, naming why.
"""

from __future__ import annotations

from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = ["PipelineExecutorFactoryModule", "PipelineModule", "pipeline_executor_enabled"]

#: Why the pipeline executor's objects are refused, and what replaces them.
PIPELINE_WHY = (
    "TVM 0.27 has no pipeline executor (USE_PIPELINE_EXECUTOR is in no build): build the "
    "model whole with relay.build (or tvm.compile) and run it on one executor, or run each "
    "part's tvm.compile'd module in a thread of your own"
)

PipelineModule = refused_name("tvm.contrib.pipeline_executor.PipelineModule", PIPELINE_WHY)
PipelineExecutorFactoryModule = refused_name(
    "tvm.contrib.pipeline_executor.PipelineExecutorFactoryModule", PIPELINE_WHY
)


def pipeline_executor_enabled() -> bool:
    """Whether the runtime has the pipeline executor: never in TVM 0.27 (False)."""
    return False
