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

from compile_engine_compat.conflicts import require_tvm

require_tvm(__name__)  # before anything imports tvm: an ImportError naming the [tvm] extra

from compile_engine_compat.deprecations import legacy_surface
from compile_engine_compat.facade import ffi_globals
from compile_engine_compat.facade.engine import CompileEngine, LoweringError
from compile_engine_compat.facade.legacy_strategy import LoweredOutput
from compile_engine_compat.facade.objects import CachedFunc, CCacheKey, CCacheValue
from compile_engine_compat.pipeline.implementations import (
    OpImplementation,
    register_implementation,
    temp_strategy,
    unregister_implementation,
)

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
# The legacy module registered the relay.backend.* globals when imported (TVM's _init_api):
# so does this one, and PassContext accepts the legacy keys from here on.
ffi_globals.register()

globals().update(legacy_surface("compile_engine"))
autotvm_logger = logging.getLogger("autotvm")
