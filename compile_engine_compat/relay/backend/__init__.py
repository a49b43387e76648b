"""``relay.backend``: the legacy engine modules, and what ``relay.build`` returns.

``compile_engine`` and ``te_compiler`` are the shim's modules of those names, imported on first
use so that building Relay graphs does not register the engine's globals.
:mod:`.executor_factory` holds the result of ``relay.build`` (Relay's executor factory).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["compile_engine", "te_compiler"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        module = importlib.import_module(f"compile_engine_compat.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'compile_engine_compat.relay.backend' has no attribute {name!r}")
