"""``tvm.runtime.load_module`` that reloads ``relay.build``'s export (served by ``install()``).

A library written by ``lib.export_library(path)`` for ``lib = relay.build(...)`` loads as a
factory whose ``["default"](dev)`` feeds ``graph_executor.GraphModule``; every other library
loads exactly as TVM's own ``load_module`` loads it (the same object, untouched).
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import tvm

from compile_engine_compat.boundary import tvm_warnings_dropped
from compile_engine_compat.deprecations import warn_legacy
from compile_engine_compat.relay.backend.executor_factory import (
    MARKER_SUFFIX,
    LoadedFactory,
    load_marked,
)

__all__ = ["executable_time_evaluator", "load_module", "tvm_load_module"]

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
    """
    # relay.build's export (its marker beside it) reloads without TVM's C++ log of the VM's
    # sections, as Relay's did; any other library loads exactly as TVM loads it.
    name = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    marked = isinstance(name, str) and os.path.exists(name + MARKER_SUFFIX)
    with tvm_warnings_dropped() if marked else contextlib.nullcontext():
        module = tvm_load_module(path)
    loaded = load_marked(path, module)
    if isinstance(loaded, LoadedFactory):
        warn_legacy("tvm.runtime.load_module")
    return loaded


def executable_time_evaluator(
    self: Any, func_name: str, dev: Any, *args: Any, **kwargs: Any
) -> Any:
    """``Executable.time_evaluator``: TVM 0.19's ``tvm.build`` returned a ``runtime.Module``,
    which has it; TVM 0.27's ``tvm.compile`` returns an ``Executable`` (a jit kernel's
    ``module``), timed through its jitted module."""
    return self.jit().time_evaluator(func_name, dev, *args, **kwargs)
