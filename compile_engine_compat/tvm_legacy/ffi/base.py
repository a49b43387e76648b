"""``tvm._ffi.base`` of TVM <=0.19 (served by ``install()``): its public names over ``tvm_ffi``.

In TVM 0.19 ``TVMError`` was the ``RuntimeError`` subclass every error raised by TVM's C++
derived from. TVM 0.27's errors (``tvm.error.InternalError``, ``DiagnosticError``, ``OpError``,
and the plain ``RuntimeError`` of an unregistered kind) derive from ``RuntimeError`` itself, so
``TVMError`` is ``RuntimeError``: ``except tvm.error.TVMError`` catches what it caught (and, as
before, not the ``ValueError``/``TypeError``/``IndexError`` TVM raises as Python's own).

The ctypes helpers (``py_str``, ``c_str``, ``c_array``), the type tuples, ``decorate`` and the
error-text translations (``c2pyerror``, ``py2cerror``: a C++ message with its ``Stack trace:``
block <-> a Python traceback, the innermost frame last) are TVM 0.19's;
``register_error`` is ``tvm_ffi``'s. The C API itself (``_LIB``, ``check_call``) is not served:
TVM 0.27's FFI has no ``TVMGetLastError`` to check (call ``tvm_ffi`` functions instead).
"""

from __future__ import annotations

import ctypes
import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm_ffi

__all__ = [
    "TVMError",
    "c2pyerror",
    "c_array",
    "c_str",
    "decorate",
    "integer_types",
    "numeric_types",
    "py2cerror",
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


def decorate(func: Callable[..., Any], fwrapped: Callable[..., Any]) -> Callable[..., Any]:
    """``fwrapped`` with ``func``'s name, docstring and signature (``functools.wraps``)."""
    return functools.wraps(func)(fwrapped)


#: The first line of an error message: ``ErrorKind: message``.
_KIND = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*(?:Error|Exception|Interrupt))\s*:")


def c2pyerror(err_msg: str) -> tuple[str, str | None]:
    """A C++ error message as Python writes one: its ``Stack trace:`` frames first, as a
    ``Traceback (most recent call last):`` block, innermost last; and the error kind named on
    its first line (None when it names none)."""
    message: list[str] = []
    frames: list[str] = []
    in_trace = False
    for line in err_msg.rstrip("\n").split("\n"):
        if in_trace and line.startswith("        ") and frames:
            frames[-1] += "\n" + line
            continue
        if in_trace and line.startswith("  "):
            frames.append(line)
            continue
        in_trace = line.startswith("Stack trace")
        if not in_trace:
            message.append(line)
    kind = _KIND.match(message[0]) if message else None
    head = ["Traceback (most recent call last):", *reversed(frames)] if frames else []
    return "\n".join([*head, *message]), kind.group(1) if kind else None


def py2cerror(err_msg: str) -> str:
    """A Python traceback message as TVM's C++ writes one: the message first, then its frames
    under ``Stack trace:``, innermost first (the inverse of :func:`c2pyerror`)."""
    lines = err_msg.rstrip("\n").split("\n")
    if not lines or not lines[0].startswith("Traceback"):
        return err_msg
    frames: list[str] = []
    rest = 1
    while rest < len(lines) and lines[rest].startswith("  "):
        if lines[rest].startswith("    ") and frames:
            frames[-1] += "\n" + lines[rest]
        else:
            frames.append(lines[rest])
        rest += 1
    return "\n".join([*lines[rest:], "Stack trace:", *reversed(frames)])
