"""``relay.backend``: the legacy engine modules, and what ``relay.build`` returns.

``compile_engine`` and ``te_compiler`` are the shim's modules of those names, imported on first
use so that building Relay graphs does not register the engine's globals.
:mod:`.executor_factory` holds the result of ``relay.build`` (Relay's executor factory);
:mod:`.runtime_config` the ``Runtime``/``Executor`` configurations it accepts and ignores.
"""

from __future__ import annotations

import importlib
from typing import Any

from compile_engine_compat.relay._impl.runtime_config import Executor, Runtime

__all__ = ["Executor", "Runtime", "compile_engine", "te_compiler"]
_ENGINE_MODULES = ("compile_engine", "te_compiler")


def __getattr__(name: str) -> Any:
    if name in _ENGINE_MODULES:
        module = importlib.import_module(f"compile_engine_compat.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'compile_engine_compat.relay.backend' has no attribute {name!r}")
