"""What ``relay.build`` returns: Relay's executor factory, over one Relax VM executable.

``relay.build`` returns a :class:`GraphExecutorFactoryModule` (TVM 0.19's class name, so
``isinstance`` checks hold). ``lib["default"](dev)`` gives a module that
``tvm.contrib.graph_executor.GraphModule`` (served by ``install()``) runs, and unpacking it as
``graph, lib, params`` still works. There is no executor graph: ``get_graph_json()`` returns TVM
0.19's graph JSON for the inputs only (their ``nodes``, ``arg_nodes`` and the ``shape``/``dltype``
attributes), plus ``"inputs"`` and ``"executor"``.

``lib.export_library(path)`` writes the executable's shared library, and next to it a small
marker, ``path + ".relay.json"``. Under ``install()``, ``tvm.runtime.load_module`` of a path with
that marker returns a :class:`LoadedFactory` (``loaded["default"](dev)`` for ``GraphModule``);
any other library loads exactly as before.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import tvm

from compile_engine_compat import new_files
from compile_engine_compat.facade import model_builds
from compile_engine_compat.relay._impl.graph_runner import (
    InputInfo,
    VMRunner,
    graph_info,
    graph_json,
    main_input_info,
)
from compile_engine_compat.relay._impl.host_library import HostLibrary, host_library

__all__ = [
    "MARKER_SUFFIX",
    "AOTExecutorFactoryModule",
    "BuildResult",
    "ExecutorFactoryModule",
    "GraphExecutorFactoryModule",
    "InputInfo",
    "LoadedFactory",
    "VMRunner",
    "graph_input_info",
    "graph_json",
    "main_input_info",
    "read_marker",
    "write_marker",
]


#: The file ``export_library`` writes next to the library: it says the library came from
#: ``relay.build`` (and what ``["default"]`` serves).
MARKER_SUFFIX = ".relay.json"
_MARKER_FORMAT = "compile_engine_compat.relay.build/1"


class ExecutorFactoryModule:
    """TVM 0.19's base of what ``relay.build`` returns: ``get_executor_config``, ``get_params``,
    ``get_lib``, ``lib["default"]`` and the ``graph, lib, params`` unpacking."""

    def get_executor_config(self) -> Any:
        """The executor's configuration (the graph JSON for the graph executor)."""
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        """The parameters given to ``relay.build``."""
        raise NotImplementedError

    def get_lib(self) -> Any:
        """The compiled library."""
        raise NotImplementedError


class GraphExecutorFactoryModule(ExecutorFactoryModule):
    """What :func:`build` returns (TVM 0.19's ``GraphExecutorFactoryModule``), over one Relax VM
    executable.

    Attributes
    ----------
    ir_mod : tvm.IRModule
        The module built (Relax).
    lib : tvm.runtime.Executable
        The executable (``get_lib()``).
    params : dict
        The parameters given to ``build`` (bound into the executable).
    libmod_name : str
        ``"default"``.
    input_names : list of str
        The inputs of ``main`` left after binding ``params``.
    input_info : dict
        Input name -> (shape, dtype).
    """

    def __init__(
        self,
        executable: Any,
        mod: tvm.IRModule,
        params: dict[str, Any],
        library: Path | None = None,
        built: Any = None,
    ) -> None:
        # Relay's lib printed its kernels (get_source): the executable, with that added.
        self.executable = host_library(executable)
        #: The persistent cache's library the executable was loaded from (a cache hit), or None.
        self.library = library
        #: The executable this process built, stored and then loaded as ``library``, or None.
        self.built = built
        self.lib = self.executable
        self.ir_mod = mod
        self.params = params
        self.libmod_name = "default"
        self.iter_cnt = 0
        self.input_names = [p.name for p in mod["main"].params]
        self.input_info = main_input_info(mod)

    def __getitem__(self, name: str) -> Any:
        if name != "default":
            raise KeyError(f"the built module is named 'default', not {name!r}")
        return lambda dev: VMRunner(self.executable, dev, self.input_names, self.input_info)

    def get_lib(self) -> Any:
        """The compiled executable (``tvm.compile``'s result)."""
        return self.executable

    @property
    def graph_json(self) -> str:
        """TVM 0.19's ``graph_json`` attribute: :meth:`get_graph_json`."""
        return self.get_graph_json()

    def get_devices(self) -> list[Any]:
        """``[]``, as TVM 0.19's graph executor factory answered."""
        return []

    def get_source(self, fmt: str = "") -> str:
        """The kernels' code in ``fmt`` (``"asm"``, ``"ll"``), as Relay's module printed it.

        Raises
        ------
        ValueError
            For a build loaded from the persistent compile cache: a loaded library keeps no
            source.
        """
        if isinstance(self.executable, HostLibrary):
            return self.executable.get_source(fmt)
        if self.built is not None:
            return str(host_library(self.built).get_source(fmt))
        raise ValueError(
            f"this build was loaded from the compile cache ({self.library}), and a loaded "
            "library keeps no source: build without COMPILE_ENGINE_COMPAT_CACHE_DIR to read it"
        )

    def get_params(self) -> dict[str, Any]:
        """The parameters given to ``build`` (bound into the executable)."""
        return dict(self.params)

    def get_graph_json(self) -> str:
        """TVM 0.19's graph JSON of the inputs (:func:`graph_json`): no executor graph exists
        on the Relax VM."""
        return graph_json(self.input_names, self.input_info)

    def get_executor_config(self) -> str:
        """The graph JSON (:meth:`get_graph_json`), as TVM 0.19's graph executor factory."""
        return self.get_graph_json()

    def export_library(self, file_name: Any, *args: Any, **kwargs: Any) -> None:
        """Export the executable, and the marker ``tvm.runtime.load_module`` reads back."""
        model_builds.export_library(
            model_builds.BuiltModule(self.executable, self.library, self.built),
            file_name,
            *args,
            **kwargs,
        )
        write_marker(os.fspath(file_name), self.input_names, self.input_info)

    def time_evaluator(self, func_name: str, dev: Any, **kwargs: Any) -> Callable[..., Any]:
        """``lib.time_evaluator("default", dev, ...)(*inputs)``: time ``main`` on ``inputs``."""
        runner = VMRunner(self.executable, dev, self.input_names, self.input_info)
        timer = runner.time_evaluator(func_name, dev, **kwargs)

        def evaluate(*inputs: Any) -> Any:
            runner.inputs = [_tensor(v, dev) for v in inputs]
            return timer()

        return evaluate

    def __iter__(self) -> Iterator[Any]:
        # Relay warned here too: unpacking into (graph, lib, params) is the pre-0.7 form.
        # A build loaded from the persistent cache is a loaded library, which TVM cannot export
        # again: the lib of the tuple is then this result, whose export_library copies it.
        lib = self if self.library is not None else self.executable
        return iter((self.get_graph_json(), lib, self.params))


#: The shim's name for it before it took TVM 0.19's.
BuildResult = GraphExecutorFactoryModule


class AOTExecutorFactoryModule(ExecutorFactoryModule):
    """TVM 0.19's AOT executor factory: refused at construction (``relay.build`` never makes
    one here: every executor runs on the Relax VM)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "AOTExecutorFactoryModule is not served: the AOT executor was removed after TVM "
            "0.19, and relay.build returns a GraphExecutorFactoryModule for every executor. "
            "Use relay.build(...)['default'](dev) with graph_executor.GraphModule, or "
            "tvm.compile + tvm.relax.VirtualMachine. See MIGRATION.md#relay-build"
        )


def _tensor(value: Any, dev: Any) -> Any:
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return tvm.runtime.tensor(np.asarray(getattr(value, "numpy", lambda: value)()), dev)


class LoadedFactory:
    """``tvm.runtime.load_module(path)`` of a library ``relay.build``'s result exported.

    ``["default"](dev)`` is what ``GraphModule`` takes; every other attribute and function is the
    loaded ``tvm.runtime.Module``'s (:attr:`module`).
    """

    def __init__(
        self, module: Any, input_names: list[str], input_info: InputInfo | None = None
    ) -> None:
        self.module = module
        self.executable = module
        self.input_names = list(input_names)
        self.input_info: InputInfo = dict(input_info or {})

    def __getitem__(self, name: str) -> Any:
        if name == "default":
            return lambda dev: VMRunner(self.module, dev, self.input_names, self.input_info)
        return self.module[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def get_lib(self) -> Any:
        """The loaded library."""
        return self.module

    def get_graph_json(self) -> str:
        """The graph JSON of the inputs, as ``GraphExecutorFactoryModule.get_graph_json``."""
        return graph_json(self.input_names, self.input_info)


def write_marker(path: str, input_names: list[str], input_info: InputInfo | None = None) -> None:
    """Write the marker that :func:`read_marker` reads next to the library ``path`` (written to
    a new file, then renamed over any old one)."""
    record = json.loads(graph_json(input_names, input_info or {}))
    record["format"] = _MARKER_FORMAT
    with new_files.replacing(path + MARKER_SUFFIX) as staging:
        staging.write_text(json.dumps(record), encoding="utf-8")


def read_marker(path: Any) -> tuple[list[str], InputInfo] | None:
    """The input names and their shapes and dtypes held by the marker ``path + ".relay.json"``,
    or None when there is none.

    Raises
    ------
    ValueError
        When the marker exists but is not one ``export_library`` wrote (not JSON, another
        format, a damaged copy): it says so, rather than serving a module whose
        ``["default"]`` TVM then refuses with ``Module has no function 'default'``.
    """
    marker = os.fspath(path) + MARKER_SUFFIX
    try:
        with open(marker, "rb") as file:
            text = file.read(_MARKER_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ValueError(f"{marker}: relay.build's marker cannot be read ({err.strerror})") from err
    record = _marker_record(text)
    if record is None:
        raise ValueError(
            f"{marker}: this marker of relay.build's export_library cannot be read (not the "
            f"JSON of format {_MARKER_FORMAT!r} with a list of input names); export the library "
            "again, or remove the marker to load the library as a plain module"
        )
    return list(record["inputs"]), graph_info(record)


#: A marker holds a format name and input names: far below this.
_MARKER_MAX_BYTES = 1 << 20


def _marker_record(text: bytes) -> dict[str, Any] | None:
    """The record a marker's bytes hold (its input names checked), or None when they are not a
    marker's."""
    if len(text) > _MARKER_MAX_BYTES:
        return None
    try:
        record = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past the guard
        return None
    if not isinstance(record, dict) or record.get("format") != _MARKER_FORMAT:
        return None
    names = record.get("inputs", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return record


def graph_input_info(graph_json_str: str) -> tuple[list[str], InputInfo]:
    """The input names and info of a :func:`graph_json` text.

    Raises
    ------
    ValueError
        If it is not JSON naming the inputs.
    """
    try:
        record = json.loads(graph_json_str)
        names = [str(n) for n in record["inputs"]]
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(
            "graph_executor.create takes the graph JSON of compile_engine_compat.relay.build "
            "(lib.get_graph_json()); this one names no inputs"
        ) from exc
    return names, graph_info(record)
