"""``tvm.target.datatype`` of TVM <=0.19 (Bring Your Own Datatypes), served by ``install()``.

TVM 0.27 has no custom data types: ``custom[<name>]<bits>`` dtypes, their lowering pass
(``tvm.tir.transform.LowerCustomDatatypes``) and the ``tvm.datatype.lower.*`` hooks are gone.
Registering one is accepted, as TVM 0.19 accepted it at import (upstream test files call
:func:`register` and :func:`register_op` at module level): the names and lowering functions are
kept in this module's registry, and :func:`get_type_code` / :func:`get_type_name` /
:func:`get_type_registered` read it back. The *use* that needs a custom dtype is refused: parsing
``"custom[myfloat]32"`` anywhere (a Relay variable, ``astype``, TVMScript, ``tvm.DataType``)
raises :class:`CustomDatatypeError` naming why, from the hook TVM's dtype parser asks
(``dtype.get_custom_type_code``, set by :func:`register`), and so do the lowering helpers
(:func:`create_lower_func`'s functions, :func:`lower_ite`, :func:`lower_call_pure_extern`) and
the pass :func:`LowerCustomDatatypes` when applied.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi

__all__ = [
    "CustomDatatypeError",
    "LowerCustomDatatypes",
    "create_lower_func",
    "create_min_lower_func",
    "get_type_code",
    "get_type_name",
    "get_type_registered",
    "lower_call_pure_extern",
    "lower_ite",
    "register",
    "register_min_func",
    "register_op",
]

#: Why every use of a custom dtype is refused, and what to write instead.
REASON = (
    "TVM 0.27 has no custom data types (Bring Your Own Datatypes: the custom[<name>]<bits> "
    "dtypes, tvm.target.datatype's lowering hooks and tir.transform.LowerCustomDatatypes were "
    "removed after TVM 0.19). Registering one is accepted, but nothing can be typed, lowered or "
    "compiled with it: compute in a built-in dtype (float16, bfloat16, float8_*) or call the "
    "datatype's library through T.call_pure_extern on its storage type (uint8/16/32)"
)

#: The hook TVM 0.27's dtype parser calls for a ``custom[...]`` dtype.
_PARSER_HOOK = "dtype.get_custom_type_code"

_lock = threading.Lock()
_codes: dict[str, int] = {}
_names: dict[int, str] = {}
#: ``(op_name, target, src_type_name, dest_type_name, intrinsic_name)`` -> lowering function.
_lowerings: dict[tuple[str, str, str, str | None, str | None], Callable[..., Any]] = {}
#: type name -> the function giving its minimum value.
_min_funcs: dict[str, Callable[..., Any]] = {}


class CustomDatatypeError(TypeError):
    """A custom data type (``custom[<name>]<bits>``) was used: TVM 0.27 has none."""


def _refusal(what: str) -> CustomDatatypeError:
    return CustomDatatypeError(f"{what}: {REASON}.")


def _refuse_parse(type_name: str) -> int:
    """TVM's dtype parser asks this for ``custom[type_name]``: refused, naming why."""
    known = "registered with tvm.target.datatype.register" if type_name in _codes else "unknown"
    raise _refusal(f"the custom dtype 'custom[{type_name}]' ({known})")


def register(type_name: str, type_code: int) -> None:
    """Register a custom datatype name and code (kept; using the dtype is refused).

    Parameters
    ----------
    type_name : str
        The name used in ``custom[<name>]<bits>`` dtypes.
    type_code : int
        Its type code; TVM 0.19 asked for one above 128, and so does this registry.

    Raises
    ------
    ValueError
        For a code of 128 or less, or a name or code already registered to another.
    """
    if not isinstance(type_name, str) or not type_name:
        raise ValueError(f"a custom datatype name is a non-empty str, got {type_name!r}")
    code = int(type_code)
    if code <= 128:
        raise ValueError(f"custom datatype codes are above 128 (TVM 0.19's rule), got {code}")
    with _lock:
        if _codes.get(type_name, code) != code or _names.get(code, type_name) != type_name:
            raise ValueError(
                f"custom datatype {type_name!r} / code {code} conflicts with the registered "
                f"{ {n: c for n, c in _codes.items() if n == type_name or c == code} }"
            )
        _codes[type_name] = code
        _names[code] = type_name
    tvm_ffi.register_global_func(_PARSER_HOOK, _refuse_parse, override=True)


def get_type_name(type_code: int) -> str:
    """The name registered for ``type_code`` (KeyError naming it when none is)."""
    with _lock:
        if int(type_code) not in _names:
            raise KeyError(f"no custom datatype is registered with code {type_code}")
        return _names[int(type_code)]


def get_type_code(type_name: str) -> int:
    """The code registered for ``type_name`` (KeyError naming it when none is)."""
    with _lock:
        if type_name not in _codes:
            raise KeyError(f"no custom datatype is registered as {type_name!r}")
        return _codes[type_name]


def get_type_registered(type_code: int) -> bool:
    """Whether a custom datatype is registered with ``type_code``."""
    with _lock:
        return int(type_code) in _names


def register_op(
    lower_func: Callable[..., Any],
    op_name: str,
    target: str,
    src_type_name: str,
    dest_type_name: str | None = None,
    intrinsic_name: str | None = None,
) -> None:
    """Record the lowering of ``op_name`` for a custom datatype (kept; never applied).

    Parameters
    ----------
    lower_func : callable
        The lowering function (:func:`create_lower_func`'s result, :func:`lower_ite`, ...).
    op_name : str
        The TIR node it lowers (``"Add"``, ``"Cast"``, ``"Call"``, ...).
    target : str
        The target kind (``"llvm"``).
    src_type_name, dest_type_name : str
        The datatype (and for ``"Cast"``, the one cast to).
    intrinsic_name : str, optional
        For ``"Call"``, the intrinsic lowered (``"tir.sqrt"``).
    """
    if not callable(lower_func):
        raise TypeError(f"register_op takes a lowering function first, got {lower_func!r}")
    key = (str(op_name), str(target), str(src_type_name), dest_type_name, intrinsic_name)
    with _lock:
        _lowerings[key] = lower_func


def register_min_func(func: Callable[..., Any], type_name: str) -> None:
    """Record the function giving ``type_name``'s minimum value (kept; never applied)."""
    if not callable(func):
        raise TypeError(f"register_min_func takes a function first, got {func!r}")
    with _lock:
        _min_funcs[str(type_name)] = func


def create_lower_func(extern_func_map: dict[Any, str]) -> Callable[[Any], Any]:
    """A lowering function calling the extern functions of ``extern_func_map``; refused when
    applied (nothing of a custom dtype exists to lower)."""
    names = sorted(set(extern_func_map.values()))

    def lower(op: Any) -> Any:
        raise _refusal(f"lowering {type(op).__name__} to {names}")

    return lower


def create_min_lower_func(extern_func_map: dict[int, str], type_name: str) -> Callable[[int], Any]:
    """The minimum-value function of ``type_name``; refused when applied."""

    def lower(num_bits: int) -> Any:
        raise _refusal(f"the minimum of custom[{type_name}]{num_bits}")

    return lower


def lower_ite(ite_op: Any) -> Any:
    """TVM 0.19's lowering of ``tir.if_then_else`` on a custom datatype; refused when applied."""
    raise _refusal("lower_ite (tir.if_then_else of a custom dtype)")


def lower_call_pure_extern(op: Any) -> Any:
    """TVM 0.19's lowering of ``call_pure_extern`` on a custom datatype; refused when applied."""
    raise _refusal("lower_call_pure_extern (call_pure_extern of a custom dtype)")


def LowerCustomDatatypes() -> Any:
    """``tvm.tir.transform.LowerCustomDatatypes()``: a pass, refused when it runs.

    Making it is accepted (upstream tests make it at class definition); applying it raises
    :class:`CustomDatatypeError` (TVM's pass infrastructure may wrap it in its own error, with
    the message kept).
    """

    def transform(func: Any, mod: Any, ctx: Any) -> Any:
        raise _refusal("tir.transform.LowerCustomDatatypes")

    return tvm.tirx.transform.prim_func_pass(transform, opt_level=0, name="LowerCustomDatatypes")
