"""``relay.qnn``: TVM 0.19's QNN dialect (:mod:`.op`, whose builders ``relay.qnn`` also holds)
and its passes (:mod:`.transform`: ``CanonicalizeOps``/``Legalize`` lower QNN calls to plain
ops). The lowerings themselves live in :mod:`.lowering`.
"""

from __future__ import annotations

from typing import Any as _AnyT

from . import lowering, op, transform
from .op import *  # noqa: F403  (Relay's relay.qnn re-exported relay.qnn.op's builders)
from .op import __all__ as _op_names

#: ``relay.qnn.op``'s names that are not builders or configs (its row modules).
_NOT_REEXPORTED = {
    "ROWS",
    "binary",
    "canonicalizations",
    "conversions",
    "elementwise",
    "legalizations",
    "linear",
}
for _name in _NOT_REEXPORTED:
    globals().pop(_name, None)
__all__ = ["lowering", "op", "transform", *(n for n in _op_names if n not in _NOT_REEXPORTED)]


def __getattr__(name: str) -> _AnyT:
    if name.startswith("_"):
        raise AttributeError(name)
    from compile_engine_compat.surfaces.import_alias import RelayRemovedError, removed_message

    raise RelayRemovedError(removed_message(f"tvm.relay.qnn.{name}", None))
