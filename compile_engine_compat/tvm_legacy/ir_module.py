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
from tvm import relax

from compile_engine_compat.boundary import give_type
from compile_engine_compat.relay._impl.printer import irmodule_text
from compile_engine_compat.relay.expr import Call, Expr
from compile_engine_compat.relay.function import named_relax_function
from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError, removed_message

__all__ = [
    "TVM_GLOBALVAR_CALL",
    "TVM_IRMODULE_ADD",
    "irmodule_astext",
    "irmodule_import_from_std",
    "irmodule_str",
    "legacy_global_call",
    "legacy_irmodule_add",
]

#: TVM's own ``IRModule._add`` and ``GlobalVar.__call__`` (taken before any patch: install()
#: imports this module before it sets them).
TVM_IRMODULE_ADD = tvm.ir.IRModule._add
TVM_GLOBALVAR_CALL = tvm.ir.GlobalVar.__call__


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
    if hasattr(val, "__relax_function__"):
        # Exported under the name it is stored by (the front end names every function "main").
        val = named_relax_function(val, var if isinstance(var, str) else var.name_hint)
    if not isinstance(val, tvm.ir.BaseFunc | tvm.ir.Type):
        raise TypeError(
            f"IRModule[{var!r}] = ... takes a function (relay.Function, relax.Function, "
            f"tirx.PrimFunc) or a type, got {type(val).__name__}"
        )
    result = TVM_IRMODULE_ADD(self, var, val, update)
    if isinstance(val, relax.Function):
        # A call to this function from another front-end function types from its GlobalVar
        # (Relay's module typed it so); TVM 0.27 leaves a GlobalVar made by hand untyped.
        gvar = self.get_global_var(var) if isinstance(var, str) else var
        if not isinstance(gvar.ty, relax.FuncType):
            give_type(gvar, val.ty)
    return result


def legacy_global_call(self: Any, *args: Any) -> Any:
    """``GlobalVar.__call__``: with Relay expressions among ``args``, Relay's
    ``relay.Call(gvar, args)`` (a call to that function of the module); TVM's own otherwise."""
    if any(isinstance(a, Expr) for a in args):
        return Call(self, list(args))
    return TVM_GLOBALVAR_CALL(self, *args)


def irmodule_astext(self: Any, show_meta_data: bool = True, annotate: Any = None) -> str:
    """``IRModule.astext()`` (TVM <=0.19): Relay's text of a module the front end built.

    Parameters
    ----------
    show_meta_data : bool
        Append the ``#[metadata]`` section naming the tensor constants.
    annotate : ignored
        Relay's per-node comment hook.

    Returns
    -------
    str
        ``#[version = "0.0.5"]`` and a ``def @name(...)`` per function, when every function of
        the module came from a Relay function; otherwise TVM's own print of the module (its
        Relax TVMScript, as ``mod.script()``, which always prints the Relax form).
    """
    return irmodule_text(self, show_meta_data)


def irmodule_str(self: Any) -> str:
    """``str(mod)``: Relay's text for a module the front end built (:func:`irmodule_astext`),
    TVM's own print (the Relax TVMScript) for any other module."""
    return irmodule_astext(self)


def irmodule_import_from_std(self: Any, file_to_import: str) -> None:
    """``IRModule.import_from_std("prelude.rly")``: refused at the call, naming why.

    Raises
    ------
    RelayRemovedCallError
        Always: Relay's standard library is written in Relay's ADTs and recursion, which Relax
        cannot run (``relay.adt``'s nodes are built, but ``relay.build`` refuses them).
    """
    raise RelayRemovedCallError(
        removed_message(
            "tvm.IRModule.import_from_std",
            f"Relay's standard library ({file_to_import!r}: the prelude's lists, options and "
            "trees) is written with ADTs and recursion, which Relax cannot run: hold the values "
            "in relax.Tuple s and loop in Python or TIR",
        )
    )
