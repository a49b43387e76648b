"""The values a Relay program computes in the interpreter, as TVM 0.19's interpreter named them.

A tensor is a ``tvm.runtime.Tensor``; a tuple is a Python tuple while the program runs and an
FFI ``Array`` when it holds only tensors and leaves the interpreter (what the Relax VM returns,
``tvm.runtime.container.ADT`` under ``install()``); the rest are the classes below.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import tvm
import tvm_ffi

__all__ = [
    "Closure",
    "ConstructorValue",
    "RecClosure",
    "RefValue",
    "from_python",
    "to_python",
]


class ConstructorValue:
    """``relay.backend.interpreter.ConstructorValue(tag, fields, constructor)``: a value built
    by an ADT constructor (``Cons(x, xs)``)."""

    def __init__(self, tag: int, fields: Sequence[Any], constructor: Any) -> None:
        self.tag = int(tag)
        self.fields = list(fields)
        self.constructor = constructor

    def __repr__(self) -> str:
        name = getattr(self.constructor, "name_hint", self.tag)
        return f"{name}({', '.join(map(repr, self.fields))})"

    # Relay's VM returned such a value as an ``ADT`` (``len``, indexing, iteration over fields).
    def __len__(self) -> int:
        return len(self.fields)

    def __getitem__(self, index: int) -> Any:
        return self.fields[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fields)


class RefValue:
    """``relay.backend.interpreter.RefValue(value)``: a mutable reference."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"RefValue({self.value!r})"


class Closure:
    """A function value: a ``relay.Function`` with the variables it closes over.

    Calling it from Python runs it in the interpreter that made it (``evaluate()`` returns
    the module's ``main`` this way).
    """

    def __init__(self, func: Any, env: dict[Any, Any], call: Callable[..., Any]) -> None:
        self.func = func
        self.env = env
        self._call = call

    def __call__(self, *args: Any) -> Any:
        return to_python(self._call(self, [from_python(a) for a in args]))

    def __repr__(self) -> str:
        return f"Closure({self.func!r})"


#: TVM 0.19's name for a closure that can call itself (a ``let``-bound recursive function):
#: here every closure can, as its environment holds the binding.
RecClosure = Closure

_SCALAR_DTYPES = ((bool, "bool"), (int, "int32"), (float, "float32"))


def from_python(value: Any) -> Any:
    """An argument given from Python as an interpreter value (Relay's executor rule: a Python
    ``bool``/``int``/``float`` is a 0-d ``bool``/``int32``/``float32`` tensor)."""
    if isinstance(value, tvm.runtime.Tensor | ConstructorValue | RefValue | Closure):
        return value
    if isinstance(value, tuple | list | tvm_ffi.Array):
        return tuple(from_python(v) for v in value)
    if hasattr(value, "data") and isinstance(value.data, tvm.runtime.Tensor):
        return value.data  # a relay.Constant
    for kind, dtype in _SCALAR_DTYPES:
        if type(value) is kind:
            return tvm.runtime.tensor(np.array(value, dtype=dtype))
    if callable(value) and not isinstance(value, np.ndarray):
        return value
    return tvm.runtime.tensor(np.asarray(value))


def to_python(value: Any) -> Any:
    """A value leaving the interpreter: a tuple of tensors (nested) as an FFI ``Array``, a
    tuple holding other values as a Python tuple; constructor fields converted likewise."""
    if isinstance(value, tuple):
        fields = [to_python(v) for v in value]
        try:
            return tvm_ffi.convert(fields)
        except (TypeError, ValueError):
            return tuple(fields)
    if isinstance(value, ConstructorValue):
        return ConstructorValue(value.tag, [to_python(v) for v in value.fields], value.constructor)
    if isinstance(value, RefValue):
        # The cell itself leaves (closures may share it); what it holds is converted in place.
        value.value = to_python(value.value)
    return value
