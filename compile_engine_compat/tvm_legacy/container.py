"""``tvm.runtime.container`` of TVM <=0.19 (served by ``install()``).

TVM 0.27 moved the runtime containers to ``tvm_ffi``: ``ShapeTuple`` is
``tvm.runtime.ShapeTuple``, ``String`` is ``str`` (FFI strings convert to it), ``Map`` and
``Array`` are ``tvm_ffi``'s (``tvm.container.Map`` of TVM 0.19, served as ``tvm.container``), and
``tuple_object(fields)`` builds an FFI ``Array`` (what the Relax VM returns for a tuple; the ADT
tuple of Relay's VM is gone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
import tvm_ffi

from compile_engine_compat.relay.backend.interpreter import ConstructorValue

__all__ = ["ADT", "Array", "Map", "ShapeTuple", "String", "getitem_helper", "tuple_object"]

ShapeTuple = tvm.runtime.ShapeTuple
String = str
Map = tvm_ffi.Map
Array = tvm_ffi.Array


class _ADTKind(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, tvm_ffi.Array | ConstructorValue)


class ADT(metaclass=_ADTKind):
    """Relay's VM value of a tuple or constructor: ``isinstance(result, ADT)`` holds for the
    Relax VM's tuple (an FFI ``Array``) and for a constructor value the Relay VM returns for a
    program run by the interpreter (a ``ConstructorValue``: ``tag``, ``len``, indexing).
    ``ADT(tag, fields)`` builds a tuple (tag 0) or a constructor value of that tag."""

    def __new__(cls, tag: int, fields: Sequence[Any]) -> Any:
        if int(tag) == 0:
            return tuple_object(fields)
        return ConstructorValue(int(tag), list(fields), None)


def tuple_object(fields: Sequence[Any] | None = None) -> Any:
    """A runtime tuple of ``fields``: an FFI ``Array`` (TVM 0.19 built an ADT tuple)."""
    return tvm_ffi.convert(list(fields or ()))


def getitem_helper(obj: Any, elem_getter: Any, length: int, idx: Any) -> Any:
    """``obj[idx]`` for a container of ``length`` read by ``elem_getter(obj, i)`` (slices too)."""
    if isinstance(idx, slice):
        return [elem_getter(obj, i) for i in range(*idx.indices(length))]
    if idx < -length or idx >= length:
        raise IndexError(f"index out of range, size: {length}, got index {idx}")
    return elem_getter(obj, idx + length if idx < 0 else idx)
