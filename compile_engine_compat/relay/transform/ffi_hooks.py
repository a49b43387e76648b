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

from . import annotate_used_memory

__all__ = ["AnnotateUsedMemory"]


@legacy_api("relay.transform.more_passes")
def AnnotateUsedMemory() -> Any:
    """``_ffi_api.AnnotateUsedMemory()`` (opt level 0): ``used_memory`` on each fused function
    ``main`` binds, ``io_used_memory`` on ``main``; run after ``ToANormalForm`` and
    ``InferType``."""
    return annotate_used_memory.AnnotateUsedMemory()


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"relay.transform's _ffi_api.{name} is a C++ global of TVM <=0.19 that "
        "compile-engine-compat does not serve: call the public pass of relay.transform "
        f"(relay.transform.{name.lstrip('_')}) or the relax.transform pass instead"
    )
