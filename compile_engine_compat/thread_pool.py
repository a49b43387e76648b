"""The documented path of :mod:`compile_engine_compat.runtime.thread_pool`, where the pool lives.

Kept so that ``compile_engine_compat.thread_pool.status()`` (docs/performance.md) goes on working;
new code imports :mod:`compile_engine_compat.runtime.thread_pool`.
"""

from __future__ import annotations

from compile_engine_compat.runtime.thread_pool import (
    POOL_ENV,
    SOURCE,
    SPIN_MICROSECONDS,
    WAIT_MICROSECONDS,
    PoolStatus,
    launches,
    start,
    status,
    worker_tasks,
)

__all__ = [
    "POOL_ENV",
    "SOURCE",
    "SPIN_MICROSECONDS",
    "WAIT_MICROSECONDS",
    "PoolStatus",
    "launches",
    "start",
    "status",
    "worker_tasks",
]
