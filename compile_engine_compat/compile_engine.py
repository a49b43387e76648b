"""Backend code generation engine.

Drop-in replacement for ``tvm.relay.backend.compile_engine`` (removed in TVM 0.8)::

    from compile_engine_compat import compile_engine   # was: from tvm.relay.backend import ...

    engine = compile_engine.get()
    cached = engine.lower(relax_func, "llvm")          # CachedFunc: inputs/outputs are TE tensors
    kernel = engine.jit(relax_func, "llvm")            # kernel(*inputs, *outputs)

Source functions are Relax functions (or an IRModule holding one). Every call warns with a
:class:`~compile_engine_compat.CompileEngineDeprecationWarning` naming the modern replacement.
"""

from __future__ import annotations

import logging

from compile_engine_compat.cache.keys import CachedFunc, CCacheKey, CCacheValue
from compile_engine_compat.facade.engine import CompileEngine, LoweringError
from compile_engine_compat.pipeline.strategy import (
    LoweredOutput,
    OpImplementation,
    register_implementation,
    temp_strategy,
    unregister_implementation,
)

# Registers the relay.backend.* globals and config keys.
from compile_engine_compat.surfaces import globals as _globals  # noqa: F401
from compile_engine_compat.surfaces.deprecation import legacy_surface

# Shadow mode wraps jit's kernels when COMPILE_ENGINE_COMPAT_SHADOW is on (it wires itself).
from compile_engine_compat.testing import shadow as _shadow  # noqa: F401

__all__ = [
    "CCacheKey",
    "CCacheValue",
    "CachedFunc",
    "CompileEngine",
    "LoweredOutput",
    "LoweringError",
    "OpImplementation",
    "autotvm_logger",
    "get",
    "get_shape",
    "get_valid_implementations",
    "logger",
    "lower_call",
    "register_implementation",
    "select_implementation",
    "temp_strategy",
    "unregister_implementation",
]

logger = logging.getLogger("compile_engine")

# get, lower_call, get_shape, select_implementation, get_valid_implementations: the API table's
# rows, each made from its un-warned core (the same cores serve te_compiler's functions).
globals().update(legacy_surface("compile_engine"))
autotvm_logger = logging.getLogger("autotvm")
