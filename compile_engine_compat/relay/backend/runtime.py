"""``relay.backend.runtime``: the module TVM 0.19 defined ``Runtime`` in (``relay.backend``
re-exported it); the configuration ``relay.build(..., runtime=Runtime("cpp"))`` accepts."""

from __future__ import annotations

from compile_engine_compat.relay._impl.runtime_config import Runtime

__all__ = ["Runtime"]
