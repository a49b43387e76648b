"""TE compiler engine (replacing legacy compile_engine).

Drop-in replacement for ``tvm.relay.backend.te_compiler`` (TVM 0.8-0.19, removed in 0.20)::

    from compile_engine_compat import te_compiler   # was: from tvm.relay.backend import ...

    compiler = te_compiler.get()
    cached = compiler.lower(relax_func, "llvm")     # CachedFunc; symbol tvmgen_default_fused_...
    kernel = compiler.jit(relax_func, "llvm")       # kernel(*inputs, *outputs)

``TECompiler`` is a view of the one engine behind ``compile_engine.get()``: code that mixes the two
modules during a migration sees one cache. Like upstream, a te_compiler cache entry counts from 1
(``use_count`` is 1 after the first lowering), and ``dump``, ``lower_shape_func``,
``shape_func_items`` and ``get_current_ccache_key`` do not exist here.
"""

from __future__ import annotations

from compile_engine_compat.conflicts import require_tvm

require_tvm(__name__)  # before anything imports tvm: an ImportError naming the [tvm] extra

from compile_engine_compat.deprecations import legacy_surface
from compile_engine_compat.facade import ffi_globals
from compile_engine_compat.facade.objects import CachedFunc
from compile_engine_compat.facade.te_compiler_impl import (
    CCacheKey,
    CCacheValue,
    LoweredOutput,
    TECompiler,
    autotvm_logger,
    logger,
)
from compile_engine_compat.facade.te_compiler_impl import global_compiler as global_compiler
from compile_engine_compat.pipeline.implementations import OpImplementation

# get, lower_call, get_shape, select_implementation, get_valid_implementations and
# lower_to_primfunc: the API table's rows, each made from its un-warned core.
# The legacy module registered the relay.backend.* globals when imported (TVM's _init_api):
# so does this one, and PassContext accepts the legacy keys from here on.
ffi_globals.register()

globals().update(legacy_surface("te_compiler"))

__all__ = [
    "CCacheKey",
    "CCacheValue",
    "CachedFunc",
    "LoweredOutput",
    "OpImplementation",
    "TECompiler",
    "autotvm_logger",
    "get",
    "get_shape",
    "get_valid_implementations",
    "logger",
    "lower_call",
    "lower_to_primfunc",
    "select_implementation",
]
