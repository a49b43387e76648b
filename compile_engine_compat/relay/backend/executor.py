"""``relay.backend.executor``: the module TVM 0.19 defined ``Executor`` in (``relay.backend``
re-exported it); the configuration ``relay.build(..., executor=Executor("graph"))`` accepts."""

from __future__ import annotations

from compile_engine_compat.relay._impl.runtime_config import Executor

__all__ = ["Executor"]
