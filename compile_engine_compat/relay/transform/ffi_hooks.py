"""The FFI functions of ``relay.transform`` that Relay's own tests call (its ``_ffi_api``
module), served in Python.

TVM 0.19 filled this module with the C++ globals ``relay._transform.*``; the public ones are
the passes of :mod:`.transform`. What is left is ``AnnotateUsedMemory``, a pass of TVM 0.19's
backends that only its ``_ffi_api`` named (:mod:`.annotate_used_memory`). Any other name is
refused at the call, naming where its public pass lives.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.ffi_globals import unserved_globals

from . import annotate_used_memory

__all__ = ["AnnotateUsedMemory"]


@legacy_api("relay.transform.more_passes")
def AnnotateUsedMemory() -> Any:
    """``_ffi_api.AnnotateUsedMemory()`` (opt level 0): ``used_memory`` on each fused function
    ``main`` binds, ``io_used_memory`` on ``main``; run after ``ToANormalForm`` and
    ``InferType``."""
    return annotate_used_memory.AnnotateUsedMemory()


__getattr__ = unserved_globals("transform", "pass", "the relax.transform pass")
