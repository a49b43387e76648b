"""``tvm.runtime.load_module`` that reloads ``relay.build``'s export, and TVM 0.19's ``String``
and ``ObjectTypes`` (served by ``install()``).

A library written by ``lib.export_library(path)`` for ``lib = relay.build(...)`` loads as a
factory whose ``["default"](dev)`` feeds ``graph_executor.GraphModule``; every other library
loads exactly as TVM's own ``load_module`` loads it (the same object, untouched).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import tvm
import tvm_ffi

from compile_engine_compat.boundary import tvm_warnings_dropped
from compile_engine_compat.deprecations import warn_legacy
from compile_engine_compat.library_files import check_whole_library
from compile_engine_compat.relay.backend.executor_factory import LoadedFactory, read_marker

__all__ = ["ObjectTypes", "String", "executable_time_evaluator", "load_module", "tvm_load_module"]

#: ``tvm.runtime.String``: TVM 0.27's FFI hands strings to Python as ``str`` (TVM 0.19's
#: ``String`` was a ``str`` subclass), so a string it returns is one, and ``String("a")`` is
#: ``"a"``.
String = str
#: ``tvm.runtime.ObjectTypes``: the classes of what the FFI passes by reference (objects,
#: tensors, modules, functions), for ``isinstance`` checks as in TVM 0.19.
ObjectTypes = (tvm.runtime.Object, tvm.runtime.Tensor, tvm.runtime.Module, tvm_ffi.Function)

#: TVM's own ``load_module``, taken when this module is first imported (before install() sets
#: the name on tvm.runtime).
tvm_load_module = tvm.runtime.module.load_module


def load_module(path: Any, fmt: str = "") -> Any:
    """``tvm.runtime.load_module(path, fmt="")``: TVM's, plus Relay's ``["default"]`` factory.

    Parameters
    ----------
    path : str or os.PathLike
        The library.
    fmt : str
        TVM 0.19's format override; TVM 0.27 reads the format from the file, so it is unused.

    Returns
    -------
    tvm.runtime.Module or LoadedFactory
        A :class:`~compile_engine_compat.relay.backend.executor_factory.LoadedFactory` for a
        library exported from ``relay.build``'s result; TVM's module otherwise.

    Raises
    ------
    compile_engine_compat.library_files.UnsafeLibraryError
        (an ``OSError``) For an ELF file that ends before its headers or segments do (a
        truncated copy): TVM would map it and the process would die of SIGBUS.
    ValueError
        For a missing file (as TVM), or a ``.relay.json`` marker beside it that cannot be read.
    """
    marked = None
    if isinstance(path, (str, os.PathLike)) and os.path.isfile(path):
        check_whole_library(path)  # before TVM maps it
        marked = read_marker(path)  # before the library's code runs
    # relay.build's export (its marker beside it) reloads without TVM's C++ log of the VM's
    # sections, as Relay's did; any other library loads exactly as TVM loads it.
    with tvm_warnings_dropped() if marked is not None else contextlib.nullcontext():
        module = tvm_load_module(path)
    if marked is None:
        return module
    warn_legacy("tvm.runtime.load_module")
    names, input_info = marked
    return LoadedFactory(module, names, input_info)


def executable_time_evaluator(
    self: Any, func_name: str, dev: Any, *args: Any, **kwargs: Any
) -> Any:
    """``Executable.time_evaluator``: TVM 0.19's ``tvm.build`` returned a ``runtime.Module``,
    which has it; TVM 0.27's ``tvm.compile`` returns an ``Executable`` (a jit kernel's
    ``module``), timed through its jitted module."""
    return self.jit().time_evaluator(func_name, dev, *args, **kwargs)
