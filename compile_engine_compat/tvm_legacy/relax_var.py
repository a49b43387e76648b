"""``name_hint`` on a Relax variable (served by ``install()``).

A front-end module holds Relax functions, so Relay-era code reads Relay's names off their
parameters: ``mod["main"].params[0].name_hint`` (TVM 0.27 calls it ``name``), and
``type_annotation`` (served by :func:`compile_engine_compat.relay.ty.relax_checked_type`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["name_hint"]


@property  # type: ignore[misc]
def name_hint(self: Any) -> str:
    """``Var.name_hint`` (TVM <= 0.19): the variable's name, ``name`` in TVM 0.27."""
    return str(self.name)
