"""``tvm._ffi.base`` of TVM <=0.19 (served by ``install()``): its public names over ``tvm_ffi``.

In TVM 0.19 ``TVMError`` was the ``RuntimeError`` subclass every error raised by TVM's C++
derived from. TVM 0.27's errors (``tvm.error.InternalError``, ``DiagnosticError``, ``OpError``,
and the plain ``RuntimeError`` of an unregistered kind) derive from ``RuntimeError`` itself, so
``TVMError`` is ``RuntimeError``: ``except tvm.error.TVMError`` catches what it caught (and, as
before, not the ``ValueError``/``TypeError``/``IndexError`` TVM raises as Python's own).

The ctypes helpers (``py_str``, ``c_str``, ``c_array``) and the type tuples are TVM 0.19's;
``register_error`` is ``tvm_ffi``'s. The C API itself (``_LIB``, ``check_call``) is not served:
TVM 0.27's FFI has no ``TVMGetLastError`` to check (call ``tvm_ffi`` functions instead).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm_ffi

__all__ = [
    "TVMError",
    "c_array",
    "c_str",
    "integer_types",
    "numeric_types",
    "py_str",
    "register_error",
    "string_types",
]

TVMError = RuntimeError
string_types = (str,)
integer_types = (int, np.int32)
numeric_types = (*integer_types, float, np.float16, np.float32)
register_error = tvm_ffi.register_error


def py_str(x: bytes) -> str:
    """A C string's bytes as ``str`` (UTF-8)."""
    return x.decode("utf-8")


def c_str(string: str) -> ctypes.c_char_p:
    """A Python string as a ctypes ``char *`` (UTF-8)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_array(ctype: Any, values: Sequence[Any]) -> Any:
    """A ctypes array of ``ctype`` holding ``values``."""
    return (ctype * len(values))(*values)
