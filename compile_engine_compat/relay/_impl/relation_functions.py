"""Relay's built-in type relations, and the global names TVM 0.19 registered them under.

Relay's ops were typed by relations: ``Broadcast`` (``add``, ``multiply``...),
``BroadcastComp`` (``equal``, ``less``...: a ``bool`` result) and ``Identity`` (the output is
the input's type). Programs and tests reached them as ``tvm.ir.EnvFunc.get(
"tvm.relay.type_relation.Broadcast")`` to build a ``relay.TypeRelation``; each is a Python
function ``func(types, num_inputs, attrs, reporter) -> bool`` here, registered as a TVM global
function of that name (:func:`register_globals`, run on the first such ``EnvFunc.get``), and the
type solver (:mod:`.type_solver`) maps a relation's ``EnvFunc`` back to it (:func:`relation_of`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm import tirx

from compile_engine_compat.relay.ty import TensorType, Type

from .type_solver import TypeReporter, unify_dim

__all__ = ["GLOBAL_PREFIX", "RELATIONS", "concrete_broadcast", "register_globals", "relation_of"]

#: The global names Relay registered its relations under: ``GLOBAL_PREFIX + "Broadcast"``.
GLOBAL_PREFIX = "tvm.relay.type_relation."

Relation = Callable[[Sequence[Type], int, Any, TypeReporter], bool]

_registered = threading.Event()
_register_lock = threading.Lock()


def _is_one(dim: Any) -> bool:
    return isinstance(dim, tirx.IntImm) and int(dim.value) == 1


def _is_any(dim: Any) -> bool:
    return isinstance(dim, tirx.Var) and str(dim.name).startswith("any_dim")


def concrete_broadcast(lhs: TensorType, rhs: TensorType, dtype: str) -> TensorType:
    """The type NumPy broadcasting gives two tensor types (Relay's ``ConcreteBroadcast``).

    Raises
    ------
    tvm.error.DiagnosticError
        When a dimension pair is neither equal nor 1 (``Incompatible broadcast type``).
    """
    out: list[Any] = []
    for a, b in zip(reversed(lhs.shape), reversed(rhs.shape)):
        if _is_any(a) and _is_any(b):
            out.append(a)
        elif (not _is_any(a) and not _is_any(b)) and unify_dim(a, b) is not None:
            out.append(a if not isinstance(a, tirx.Var) else b)
        elif _is_one(a):
            out.append(b)
        elif _is_one(b) or _is_any(b):
            out.append(a)
        elif _is_any(a):
            out.append(b)
        else:
            raise tvm.error.DiagnosticError(f"Incompatible broadcast type {lhs!r} and {rhs!r}")
    longer = lhs.shape if len(lhs.shape) > len(rhs.shape) else rhs.shape
    out.extend(reversed(longer[: len(longer) - len(out)]))
    result = TensorType((), dtype)
    result.shape = tuple(reversed(out))  # the dimensions as they are (an Any stays itself)
    return result


def _broadcast(output_dtype: str | None) -> Relation:
    def relation(types: Sequence[Type], num_inputs: int, attrs: Any, reporter: Any) -> bool:
        if len(types) != 3:
            raise TypeError(f"the broadcast relation takes 3 types, got {len(types)}")
        lhs, rhs = types[0], types[1]
        if not (isinstance(lhs, TensorType) and isinstance(rhs, TensorType)):
            return False
        if lhs.dtype != rhs.dtype:
            raise TypeError(f"data types {lhs.dtype} and {rhs.dtype} do not match in BroadcastRel")
        reporter.Assign(types[2], concrete_broadcast(lhs, rhs, output_dtype or lhs.dtype))
        return True

    return relation


def _identity(types: Sequence[Type], num_inputs: int, attrs: Any, reporter: Any) -> bool:
    for other in types[1:]:
        reporter.Assign(other, types[0])
    return True


#: Relation name (after :data:`GLOBAL_PREFIX`) -> the relation.
RELATIONS: dict[str, Relation] = {
    "Broadcast": _broadcast(None),
    "BroadcastComp": _broadcast("bool"),
    "Identity": _identity,
}


def register_globals() -> None:
    """Register each relation of :data:`RELATIONS` as the TVM global function Relay had.

    Idempotent; a global of that name registered by someone else is left in place.
    """
    if _registered.is_set():
        return
    with _register_lock:
        for name, relation in RELATIONS.items():
            if tvm.get_global_func(GLOBAL_PREFIX + name, allow_missing=True) is None:
                tvm.register_global_func(GLOBAL_PREFIX + name, relation)
        _registered.set()


def relation_of(func: Any) -> Relation:
    """The Python relation behind a ``TypeRelation``'s ``func``.

    Parameters
    ----------
    func : tvm.ir.EnvFunc or callable
        ``EnvFunc.get("tvm.relay.type_relation.<name>")``, or a function itself.

    Returns
    -------
    callable
        ``relation(types, num_inputs, attrs, reporter) -> bool``.

    Raises
    ------
    TypeError
        For a relation with no function.
    """
    if isinstance(func, tvm.ir.EnvFunc):
        name = str(func.name)
        if name.startswith(GLOBAL_PREFIX) and name[len(GLOBAL_PREFIX) :] in RELATIONS:
            return RELATIONS[name[len(GLOBAL_PREFIX) :]]
        packed = func.func
        return lambda types, num_inputs, attrs, reporter: bool(
            packed(list(types), num_inputs, attrs, reporter)
        )
    if callable(func):
        return func
    raise TypeError(f"a relay.TypeRelation needs a relation function, got {func!r}")
