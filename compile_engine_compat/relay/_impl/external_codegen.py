"""External codegens at ``relay.build``: each partition to the codegen of its compiler.

``PartitionGraph`` leaves global functions whose Relax form carries ``Codegen`` (the compiler)
and ``global_symbol``. :func:`run_external_codegens`, called by ``relay.build`` before the
module is lowered, gives each one to its codegen and links the runtime module it returns into
the build, through ``relax.transform.RunCodegen`` (which replaces the calls by calls of the
module's symbol):

* a codegen registered as ``relay.ext.<compiler>`` with ``tvm.register_func`` (served by
  ``install()``, :func:`register_func`) receives the partition's Relay function, as in TVM
  <=0.19 (one registered some other way receives its Relax function through TVM's FFI);
* one registered as ``relax.ext.<compiler>`` by the user is TVM 0.27's own and receives the
  Relax functions (``RunCodegen``'s contract);
* ``ccompiler``, Relay's example codegen, is served by :mod:`.ccompiler` (C source).

A compiler with no codegen, a codegen that raises or returns something other than a runtime
module: :class:`ExternalCodegenError` naming the compiler and the partition. Nothing runs on the
host instead.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.relay._impl.origin import relay_origin
from compile_engine_compat.runtime import threads

from . import ccompiler

__all__ = ["ExternalCodegenError", "codegen_of", "register_func", "run_external_codegens"]

_PREFIX = "relay.ext."
#: compiler -> the Python codegen registered as relay.ext.<compiler> (called with Relay).
_CODEGENS: dict[str, Callable[[Any], Any]] = {}
#: The relax.ext.<compiler> functions this module registered (bridges to the above).
_BRIDGED: set[str] = set()
_lock = threads.fork_safe(threading.Lock())
#: The modules made for the build in progress, by symbol (read by the bridges).
_made = threading.local()

#: Codegens the shim serves itself (Relay's in-tree example).
BUILTIN: dict[str, Callable[[Any], Any]] = {"ccompiler": ccompiler.codegen}


class ExternalCodegenError(RuntimeError):
    """An external codegen is missing, failed, or returned no runtime module."""


def register_func(
    func_name: Any, f: Callable[..., Any] | None = None, override: bool = False
) -> Any:
    """``tvm.register_func`` (TVM <=0.19's name for ``tvm_ffi.register_global_func``).

    A ``relay.ext.<compiler>`` codegen is also kept as the Python function it is, so that
    ``relay.build`` hands it the partition's Relay function.

    Parameters
    ----------
    func_name : str or callable
        The global name; a function alone registers under its ``__name__``.
    f : callable, optional
        The function; without it, a decorator is returned.
    override : bool
        Replace an existing registration.
    """
    if callable(func_name) and f is None:
        f, func_name = func_name, func_name.__name__
    if not isinstance(func_name, str):
        raise TypeError(f"register_func takes a name (str), got {func_name!r}")
    name = func_name

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        tvm_ffi.register_global_func(name, fn, override=override)
        if name.startswith(_PREFIX):
            with _lock:
                _CODEGENS[name[len(_PREFIX) :]] = fn
        return fn

    return register(f) if f is not None else register


def codegen_of(compiler: str) -> Callable[[Any], Any] | None:
    """The codegen ``relay.build`` uses for ``compiler`` (None when there is none)."""
    with _lock:
        if compiler in _CODEGENS:
            return _CODEGENS[compiler]
    registered = tvm.get_global_func(_PREFIX + compiler, allow_missing=True)
    if registered is not None:
        return lambda func: registered(func)  # through the FFI: the function's Relax form
    return BUILTIN.get(compiler)


def _bridge(compiler: str) -> None:
    """Register ``relax.ext.<compiler>`` handing ``RunCodegen`` the modules made already."""
    with _lock:
        if compiler in _BRIDGED:
            return
        _BRIDGED.add(compiler)

    def bridge(functions: Any, _options: Any, _constants: Any) -> list[Any]:
        made = getattr(_made, "modules", {})
        return [made[str(f.attrs["global_symbol"])] for f in functions]

    tvm_ffi.register_global_func(f"relax.ext.{compiler}", bridge, override=True)


def _external_functions(mod: tvm.IRModule) -> dict[str, list[tuple[Any, Any]]]:
    found: dict[str, list[tuple[Any, Any]]] = {}
    for gvar, func in mod.functions.items():
        if isinstance(func, relax.Function) and func.attrs and "Codegen" in func.attrs:
            found.setdefault(str(func.attrs["Codegen"]), []).append((gvar, func))
    return found


def _compile(compiler: str, gvar: Any, func: Any, codegen: Callable[[Any], Any]) -> Any:
    symbol = str(func.attrs.get("global_symbol", gvar.name_hint))
    source = relay_origin(func)
    try:
        module = codegen(source if source is not None else func)
    except ExternalCodegenError:
        raise
    except Exception as err:
        raise ExternalCodegenError(
            f"external codegen relay.ext.{compiler} failed on partition {symbol!r}: "
            f"{type(err).__name__}: {err}"
        ) from err
    if not isinstance(module, tvm.runtime.Module):
        raise ExternalCodegenError(
            f"external codegen relay.ext.{compiler} returned {type(module).__name__} for "
            f"partition {symbol!r}: it must return a runtime module (for C source: "
            "tvm.get_global_func('runtime.CSourceModuleCreate')(code, 'c', [symbol], []))"
        )
    return symbol, module


def run_external_codegens(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` with its partitions compiled by their codegens and their calls redirected.

    Raises
    ------
    ExternalCodegenError
        For a compiler with no codegen, or a codegen that fails (see the module docstring).
    """
    external = _external_functions(mod)
    if not external:
        return mod
    made: dict[str, Any] = {}
    for compiler, functions in external.items():
        user_relax = tvm.get_global_func(f"relax.ext.{compiler}", allow_missing=True)
        if user_relax is not None and compiler not in _BRIDGED:
            continue  # TVM 0.27's own codegen contract: RunCodegen calls it
        codegen = codegen_of(compiler)
        if codegen is None:
            names = ", ".join(repr(str(f.attrs["global_symbol"])) for _, f in functions)
            raise ExternalCodegenError(
                f"no codegen for external compiler {compiler!r} (partitions {names}): register "
                f"one with tvm.register_func('relay.ext.{compiler}') (it takes the partition's "
                "Relay function and returns a runtime module), or relax.ext."
                f"{compiler} (TVM 0.27's contract)"
            )
        for gvar, func in functions:
            symbol, module = _compile(compiler, gvar, func, codegen)
            made[symbol] = module
        _bridge(compiler)
    _made.modules = made
    try:
        return relax.transform.RunCodegen()(mod)
    finally:
        _made.modules = {}
