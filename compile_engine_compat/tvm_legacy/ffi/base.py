"""``tvm._ffi.base`` of TVM <=0.19 (served by ``install()``): ``TVMError``.

In TVM 0.19 ``TVMError`` was the ``RuntimeError`` subclass every error raised by TVM's C++
derived from. TVM 0.27's errors (``tvm.error.InternalError``, ``DiagnosticError``, ``OpError``,
and the plain ``RuntimeError`` of an unregistered kind) derive from ``RuntimeError`` itself, so
``TVMError`` is ``RuntimeError``: ``except tvm.error.TVMError`` catches what it caught (and, as
before, not the ``ValueError``/``TypeError``/``IndexError`` TVM raises as Python's own).
"""

from __future__ import annotations

__all__ = ["TVMError"]

TVMError = RuntimeError
