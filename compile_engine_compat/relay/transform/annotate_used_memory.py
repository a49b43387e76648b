"""``AnnotateUsedMemory`` (TVM 0.19's ``relay.transform`` FFI function of that name), on the
Relay graph: the memory live around each call of a fused function, from the liveness of
``main``'s variables.

``main`` is in A-normal form and typed (``ToANormalForm``, ``InferType``), its fused
(``Primitive``) functions bound by ``let``. At each call of such a function the sizes of the
variables live before or after the call (the function itself aside) are added up; the function
gets the list of those sums, one per call in program order, as its ``used_memory`` attribute,
and ``main`` gets ``io_used_memory``, the size of its parameters and its result. A size is the
bytes of a tensor type (elements times the bytes of its dtype), summed over a tuple's fields.
"""

from __future__ import annotations

import math
from typing import Any

import tvm

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Let, Var
from ..function import Function
from ..ty import TensorType, TupleType
from .liveness import Liveness, on_device_body
from .manifest_lifetimes import LetChains
from .module_functions import Functions, module_graph_pass

__all__ = ["AnnotateUsedMemory", "size_in_bytes"]

_DYNAMIC = "AnnotateUsedMemory does not support dynamic shapes"


def size_in_bytes(ty: Any) -> int:
    """The bytes of a value of Relay type ``ty`` (a tensor type or a tuple of them).

    Raises
    ------
    relay.UnsupportedRelayError
        For a shape with an unknown (``relay.Any()``) or symbolic dimension, or an untyped value.
    """
    if isinstance(ty, TupleType):
        return sum(size_in_bytes(field) for field in ty.fields)
    if not isinstance(ty, TensorType):
        raise UnsupportedRelayError(f"{_DYNAMIC}: a value of type {ty} (run InferType first)")
    dims = [getattr(d, "value", d) for d in ty.shape]  # IntImm or int
    if not all(isinstance(d, int) for d in dims):
        raise UnsupportedRelayError(f"{_DYNAMIC}: a tensor of shape {list(ty.shape)}")
    dtype = tvm.DataType(str(ty.dtype))
    return math.prod(dims) * ((dtype.bits * dtype.lanes + 7) // 8)


def _type(var: Var) -> Any:
    return getattr(var, "checked_type", None)


class _Annotate(LetChains):
    """Finds the calls of let-bound fused functions, then annotates the functions."""

    def __init__(self, liveness: Liveness) -> None:
        self.liveness = liveness
        self.used: dict[int, list[int]] = {}
        self.fused: set[int] = set()

    def record(self, let: Let) -> None:
        value = on_device_body(let.value)
        if isinstance(value, Function):
            if not int(value.attrs.get("Primitive", 0) or 0):
                raise UnsupportedRelayError(
                    f"AnnotateUsedMemory expects the functions main binds to be fused "
                    f"(Primitive); %{let.var.name_hint} is not"
                )
            self.fused.add(id(let.var))
        elif isinstance(value, Call) and id(value.op) in self.fused:
            live = {id(v): v for v in self.liveness.live_in(let)}
            live.update({id(v): v for v in self.liveness.live_out(let)})
            live.pop(id(value.op), None)
            total = sum(size_in_bytes(_type(v)) for v in live.values())
            self.used.setdefault(id(value.op), []).append(total)

    def binding(self, let: Let, value: Any) -> Any:
        if isinstance(value, Function) and id(let.var) in self.used:
            return value.with_attr("used_memory", self.used[id(let.var)])
        return value


def annotate_used_memory(func: Function) -> Function:
    """``main`` with ``io_used_memory`` and its fused functions with ``used_memory``."""
    func = infer(func)
    io_used = sum(size_in_bytes(_type(p)) for p in func.params)
    io_used += size_in_bytes(getattr(func.body, "checked_type", None))
    liveness = Liveness(func)
    annotate = _Annotate(liveness)
    for let in liveness.bindings():
        annotate.record(let)
    out: Function = annotate.visit(func)
    return out.with_attr("io_used_memory", io_used)


def _run(functions: Functions) -> Functions:
    out = dict(functions)
    for gvar, func in functions.items():
        if gvar.name_hint == "main" and isinstance(func, Function):
            out[gvar] = annotate_used_memory(func)
    return out


def AnnotateUsedMemory() -> tvm.transform.Pass:
    """``AnnotateUsedMemory()`` (opt level 0): ``used_memory`` on each fused function ``main``
    calls, ``io_used_memory`` on ``main``."""
    return module_graph_pass("AnnotateUsedMemory", 0, _run)
