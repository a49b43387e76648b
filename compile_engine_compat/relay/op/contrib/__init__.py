"""``relay.op.contrib``: the pattern-table registry of external compilers, and TVM <=0.19's
vendor modules.

``register_pattern_table``/``get_pattern_table`` are served (:mod:`.register`). The vendor
modules (``dnnl``, ``tensorrt``, ``arm_compute_lib``, ``mrvl``, ...) held pattern tables and
``partition_for_<vendor>`` functions for codegens TVM 0.27 does not ship: importing one works,
calling it raises, naming the route (a Relax BYOC backend through
``relax.transform.FuseOpsByPattern``/``RunCodegen``, or the shim's own partitioning passes with a
codegen registered as ``relay.ext.<name>``).
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.surfaces.import_alias import VENDOR_MODULES

from . import register
from .register import get_pattern_table, register_pattern_table

__all__ = ["VENDOR_MODULES", "get_pattern_table", "register", "register_pattern_table"]


def __getattr__(name: str) -> Any:
    """A vendor module is a stand-in refused when used; anything else is an unknown name."""
    from compile_engine_compat.surfaces.import_alias import (
        RelayRemovedError,
        refused_name,
        removed_message,
    )

    if name in VENDOR_MODULES:
        return refused_name(f"tvm.relay.op.contrib.{name}")
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise RelayRemovedError(removed_message(f"tvm.relay.op.contrib.{name}"))
