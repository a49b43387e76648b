"""``tvm.IRModule`` taking a front-end ``relay.Function`` (served by ``install()``).

Relay code fills a module by assignment (``mod = tvm.IRModule(); mod["main"] = func``). TVM 0.27's
``IRModule.__setitem__`` only stores what is already a ``tvm.ir.BaseFunc`` and silently drops
anything else, so a front-end function vanished and the build later reported a module without
``main``. :func:`legacy_irmodule_add` stores the function's Relax form, as
``tvm.IRModule.from_expr(func)`` and ``tvm.IRModule({"main": func})`` already do, and refuses what
is neither a function nor a type instead of dropping it.
"""

from __future__ import annotations

from typing import Any

import tvm

__all__ = ["TVM_IRMODULE_ADD", "legacy_irmodule_add"]

#: TVM's own ``IRModule._add`` (taken before any patch: install() imports this module first).
TVM_IRMODULE_ADD = tvm.ir.IRModule._add


def legacy_irmodule_add(self: Any, var: Any, val: Any, update: bool = True) -> Any:
    """``IRModule._add`` (behind ``mod[name] = value``) accepting a front-end Relay function.

    Parameters
    ----------
    var : str or tvm.ir.GlobalVar
        The name.
    val : relay.Function, tvm.ir.BaseFunc or tvm.ir.Type
        The definition; a front-end function is stored as its Relax function.
    update : bool
        Replace an existing definition (TVM's own flag).

    Raises
    ------
    TypeError
        If ``val`` is none of those (TVM 0.27 would drop it silently).
    """
    to_relax = getattr(val, "__relax_function__", None)
    if to_relax is not None:
        val = to_relax()
    if not isinstance(val, tvm.ir.BaseFunc | tvm.ir.Type):
        raise TypeError(
            f"IRModule[{var!r}] = ... takes a function (relay.Function, relax.Function, "
            f"tirx.PrimFunc) or a type, got {type(val).__name__}"
        )
    return TVM_IRMODULE_ADD(self, var, val, update)
