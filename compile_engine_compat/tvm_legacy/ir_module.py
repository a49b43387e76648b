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

from compile_engine_compat.boundary import give_type, handle_of
from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.carried import settle_function, settle_module
from compile_engine_compat.relay._impl.interpret.definitions import interpreted_reason
from compile_engine_compat.relay._impl.printer import irmodule_text
from compile_engine_compat.relay.adt import TypeData
from compile_engine_compat.relay.analysis import free_vars
from compile_engine_compat.relay.backend.interpreter import (
    declare_type,
    module_form,
    module_types,
    relay_definition,
)
from compile_engine_compat.relay.expr import Call, Expr
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.prelude import import_std
from compile_engine_compat.relay.ty import GlobalTypeVar

__all__ = [
    "TVM_GLOBALVAR_CALL",
    "TVM_IRMODULE_ADD",
    "TVM_IRMODULE_FROM_EXPR",
    "irmodule_astext",
    "irmodule_get_constructor",
    "irmodule_get_global_type_var",
    "irmodule_get_global_type_vars",
    "irmodule_get_type",
    "irmodule_import_from_std",
    "irmodule_relay_view",
    "irmodule_str",
    "legacy_global_call",
    "legacy_irmodule_add",
    "legacy_irmodule_from_expr",
]

#: TVM's own ``IRModule._add``, ``IRModule.from_expr`` and ``GlobalVar.__call__`` (taken before
#: any patch: install() imports this module before it sets them).
TVM_IRMODULE_ADD = tvm.ir.IRModule._add
TVM_IRMODULE_FROM_EXPR = tvm.ir.IRModule.from_expr
TVM_GLOBALVAR_CALL = tvm.ir.GlobalVar.__call__


def legacy_irmodule_from_expr(expr: Any, functions: Any = None) -> tvm.IRModule:
    """``IRModule.from_expr(expr, functions=None)``: TVM's own, then the kernels its front-end
    functions carry stored in the module beside them
    (:mod:`compile_engine_compat.relay._impl.carried`), so the module is well-formed and prints.

    Set on the class as a plain function, as the other rows set theirs: called on the class
    (``tvm.IRModule.from_expr``), as TVM's own static method is.

    Parameters
    ----------
    expr : relay.Expr or relax.Expr
        The entry point, ``main``.
    functions : dict, optional
        GlobalVar -> function, the module's other functions.

    Returns
    -------
    tvm.IRModule
    """
    return settle_module(TVM_IRMODULE_FROM_EXPR(expr, functions))


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
    if isinstance(val, TypeData):
        if not isinstance(var, GlobalTypeVar) or var is not val.header:
            raise TypeError(
                f"IRModule[...] = TypeData takes the TypeData's own header as key, got {var!r}"
            )
        declare_type(self, var, val)
        return None
    if isinstance(val, Expr) and not hasattr(val, "__relax_function__"):
        # TVM 0.19's Module_Add: an expression is stored as a function of its free variables.
        val = Function(free_vars(val), val)
    if hasattr(val, "__relax_function__"):
        # Exported under the name it is stored by (the front end names every function "main");
        # a function Relax cannot express is kept for the interpreter (create_executor).
        val = module_form(val, var if isinstance(var, str) else var.name_hint, self)
    if not isinstance(val, tvm.ir.BaseFunc | tvm.ir.Type):
        raise TypeError(
            f"IRModule[{var!r}] = ... takes a function (relay.Function, relax.Function, "
            f"tirx.PrimFunc) or a type, got {type(val).__name__}"
        )
    # The kernels a front-end function carries go into the module beside it (well-formed,
    # printable); the function is stored without them.
    val = settle_function(self, val)
    result = TVM_IRMODULE_ADD(self, var, val, update)
    if isinstance(val, relax.Function):
        # A call to this function from another front-end function types from its GlobalVar
        # (Relay's module typed it so); TVM 0.27 leaves a GlobalVar made by hand untyped.
        gvar = self.get_global_var(var) if isinstance(var, str) else var
        if not isinstance(gvar.ty, relax.FuncType):
            give_type(gvar, val.ty)
    return result


#: Relax object address -> (the function read, what Relay-era code gets for it): a read is one
#: lookup (``mod["main"]`` sits in loops). Cleared when it holds :data:`_VIEWS_LIMIT` entries.
_VIEWS: dict[int, tuple[Any, Any]] = {}
_VIEWS_LIMIT = 1024


def irmodule_relay_view(func: Any) -> Any:
    """What ``mod[name]`` gives Relay-era code: the Relay function behind ``func``, typed.

    TVM 0.19's modules held Relay, so ``mod["main"].body``, ``.checked_type`` and
    ``assert_structural_equal(mod["main"], expected)`` read Relay. A front-end Relax function
    (or an interpreted function's stand-in) comes back as its Relay function with its types
    inferred and its return type annotated, as ``run_infer_type`` (Relay's ``InferType``) gives
    it; anything else (a PrimFunc, a function a Relax pass made) comes back as it is. Each
    answer is remembered, so a second read is one lookup and gives the same object. Installed
    by ``install()`` (``boundary.install_module_view``).
    """
    if not isinstance(func, relax.Function):
        return func
    key = handle_of(func)
    known = _VIEWS.get(key)
    if known is not None and known[0].same_as(func):
        return known[1]
    view = _typed_relay(func)
    if len(_VIEWS) >= _VIEWS_LIMIT:
        _VIEWS.clear()
    _VIEWS[key] = (func, view)
    return view


def _typed_relay(func: Any) -> Any:
    """The typed Relay function behind ``func`` (a front-end function's, or an interpreted
    function's behind its stand-in), or ``func`` where there is none to give: a function with a
    parameter left unannotated (TVM 0.19's inference annotated it; this one does not), or one
    Relay's inference cannot type."""
    relay_func = relay_definition(func)
    if relay_func is None:
        return func
    if interpreted_reason(func) is not None:  # typed as its stand-in is (the interpreter's)
        if relay_func.__dict__.get("_checked_type") is None:
            try:
                relay_func._checked_type = func.checked_type
            except (ValueError, TypeError, RuntimeError):
                pass
        return relay_func
    if type(relay_func) is not Function:
        return relay_func
    if any(p.type_annotation is None for p in relay_func.params):
        return func
    if relay_func.ret_type is not None:
        return relay_func
    from compile_engine_compat.relay.testing import run_infer_type

    try:
        return run_infer_type(relay_func)
    except Exception:  # Relay's inference cannot type it: the Relax form, as before
        return func


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


@legacy_api("relay.prelude")
def irmodule_import_from_std(self: Any, file_to_import: str) -> None:
    """``IRModule.import_from_std("prelude.rly")``: declare a file of Relay's standard library
    (``prelude.rly``, ``nat.rly``, ``core.rly``) in the module; its functions are evaluated by
    the interpreter (``relay.create_executor("debug")``)."""
    import_std(self, file_to_import)


def irmodule_get_type(self: Any, name: str) -> tuple[Any, ...]:
    """``IRModule.get_type(name)``: ``(GlobalTypeVar, *constructors)`` of a declared ADT."""
    for header, data in module_types(self).items():
        if header.name_hint == name:
            return (header, *data.constructors)
    raise ValueError(f"IRModule.get_type: the module declares no type {name!r}")


def irmodule_get_global_type_var(self: Any, name: str) -> Any:
    """``IRModule.get_global_type_var(name)``: the header of a declared ADT."""
    return irmodule_get_type(self, name)[0]


def irmodule_get_global_type_vars(self: Any) -> list[Any]:
    """``IRModule.get_global_type_vars()``: the headers of the declared ADTs."""
    return list(module_types(self))


def irmodule_type_data(self: Any, key: Any) -> Any:
    """``mod[global_type_var]``: the ``TypeData`` the module declares under that header.

    Raises
    ------
    KeyError
        When the module declares no such type (or the key is not a ``GlobalTypeVar``).
    """
    if isinstance(key, GlobalTypeVar):
        for header, data in module_types(self).items():
            if header is key or header.name_hint == key.name_hint:
                return data
    raise KeyError(f"IRModule[{key!r}]: the module has no function or type of that key")


def irmodule_get_constructor(self: Any, tag: int) -> Any:
    """``IRModule.get_constructor(tag)``: a constructor of a declared ADT, by its tag (TVM
    0.19's tags: the ADT's name hashed into the high byte, the position in the low bytes)."""
    for data in module_types(self).values():
        for ctor in data.constructors:
            if ctor.tag == tag:
                return ctor
    raise ValueError(f"IRModule.get_constructor: no constructor has tag {tag}")
