"""What ``relay.build`` returns: Relay's executor factory, over one Relax VM executable.

``lib["default"](dev)`` gives a module that ``tvm.contrib.graph_executor.GraphModule`` (served by
``install()``) runs, and unpacking it as ``graph, lib, params`` still works. There is no graph
JSON: ``get_graph_json()`` returns a small JSON description of the inputs, not an executor graph.

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
from tvm import relax

from compile_engine_compat import new_files
from compile_engine_compat.facade import model_builds
from compile_engine_compat.relay._impl.host_library import HostLibrary, host_library

__all__ = [
    "MARKER_SUFFIX",
    "BuildResult",
    "LoadedFactory",
    "VMRunner",
    "read_marker",
    "write_marker",
]

#: The file ``export_library`` writes next to the library: it says the library came from
#: ``relay.build`` (and what ``["default"]`` serves).
MARKER_SUFFIX = ".relay.json"
_MARKER_FORMAT = "compile_engine_compat.relay.build/1"


def _vm_input_names(vm: Any) -> list[str]:
    """The parameter names of ``main``, as the VM executable records them."""
    arity = int(vm["get_function_arity"]("main"))
    return [str(vm["get_function_param_name"]("main", i)) for i in range(arity)]


class VMRunner:
    """``lib["default"](dev)``: a Relax VM with Relay's graph-module interface underneath.

    It holds the inputs set so far (``GraphModule.set_input`` writes them) and the outputs of
    the last run, so ``time_evaluator("run", dev)()`` times ``run`` as Relay's module did.
    """

    def __init__(self, executable: Any, device: Any, input_names: list[str] | None = None) -> None:
        self.vm = relax.VirtualMachine(executable, device)
        self.device = device
        self.input_names = (
            list(input_names) if input_names is not None else _vm_input_names(self.vm)
        )
        self.inputs: list[Any] = [None] * len(self.input_names)
        self.outputs: list[Any] | None = None

    def missing_inputs(self) -> list[str]:
        """The inputs not set yet."""
        return [name for name, value in zip(self.input_names, self.inputs) if value is None]

    def run(self) -> Any:
        """Run ``main`` on the inputs set (the VM's result, not flattened)."""
        missing = self.missing_inputs()
        if missing:
            raise ValueError(f"inputs not set: {missing} (set_input them before run())")
        return self.vm["main"](*self.inputs)

    def time_evaluator(
        self,
        func_name: str,
        dev: Any,
        number: int = 10,
        repeat: int = 1,
        min_repeat_ms: int = 0,
        limit_zero_time_iterations: int = 100,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        cache_flush_bytes: int = 0,
        f_preproc: str = "",
    ) -> Callable[[], Any]:
        """``module.time_evaluator("run", dev, number=, repeat=)``: time ``run`` on the set inputs.

        Parameters
        ----------
        func_name : {"run", "main", "default"}
            What to time: all name the one function the executable runs.
        dev : tvm.runtime.Device
            The device to time on.
        number, repeat, min_repeat_ms, cooldown_interval_ms, repeats_to_cooldown, f_preproc
            As ``tvm.runtime.Module.time_evaluator``.
        limit_zero_time_iterations : int
            Accepted; the Relax VM's evaluator has no such limit.
        cache_flush_bytes : int
            Only 0: flush caches with ``f_preproc="cache_flush_cpu_non_first_arg"`` instead.

        Returns
        -------
        callable
            Called with no arguments, returns ``tvm.runtime.BenchmarkResult`` (seconds).
        """
        if func_name not in ("run", "main", "default"):
            raise ValueError(
                f"time_evaluator: the module runs one function ('run'), not {func_name!r}"
            )
        if cache_flush_bytes:
            raise ValueError(
                "time_evaluator(cache_flush_bytes=...) is not served on the Relax VM: pass "
                "f_preproc='cache_flush_cpu_non_first_arg'"
            )
        timer = self.vm.time_evaluator(
            "invoke_stateful",
            dev,
            number=number,
            repeat=repeat,
            min_repeat_ms=min_repeat_ms,
            cooldown_interval_ms=cooldown_interval_ms,
            repeats_to_cooldown=repeats_to_cooldown,
            f_preproc=f_preproc,
        )

        def evaluate() -> Any:
            missing = self.missing_inputs()
            if missing:
                raise ValueError(f"inputs not set: {missing} (set_input them before timing)")
            self.vm.set_input("main", *self.inputs)
            return timer("main")

        return evaluate


class BuildResult:
    """What :func:`build` returns (Relay's ``GraphExecutorFactoryModule``)."""

    def __init__(
        self,
        executable: Any,
        mod: tvm.IRModule,
        params: dict[str, Any],
        library: Path | None = None,
    ) -> None:
        # Relay's lib printed its kernels (get_source): the executable, with that added.
        self.executable = host_library(executable)
        #: The persistent cache's library the executable was loaded from (a cache hit), or None.
        self.library = library
        self.lib = self.executable
        self.ir_mod = mod
        self.params = params
        self.input_names = [p.name for p in mod["main"].params]

    def __getitem__(self, name: str) -> Any:
        if name != "default":
            raise KeyError(f"the built module is named 'default', not {name!r}")
        return lambda dev: VMRunner(self.executable, dev, self.input_names)

    def get_lib(self) -> Any:
        """The compiled executable (``tvm.compile``'s result)."""
        return self.executable

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
        raise ValueError(
            f"this build was loaded from the compile cache ({self.library}), and a loaded "
            "library keeps no source: build without COMPILE_ENGINE_COMPAT_CACHE_DIR to read it"
        )

    def get_params(self) -> dict[str, Any]:
        """The parameters given to ``build`` (bound into the executable)."""
        return dict(self.params)

    def get_graph_json(self) -> str:
        """A JSON description of the inputs (no executor graph exists on the Relax VM)."""
        return json.dumps({"inputs": self.input_names, "executor": "relax.VirtualMachine"})

    def export_library(self, file_name: Any, *args: Any, **kwargs: Any) -> None:
        """Export the executable, and the marker ``tvm.runtime.load_module`` reads back."""
        model_builds.export_library(
            model_builds.BuiltModule(self.executable, self.library), file_name, *args, **kwargs
        )
        write_marker(os.fspath(file_name), self.input_names)

    def time_evaluator(self, func_name: str, dev: Any, **kwargs: Any) -> Callable[..., Any]:
        """``lib.time_evaluator("default", dev, ...)(*inputs)``: time ``main`` on ``inputs``."""
        runner = VMRunner(self.executable, dev, self.input_names)
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


def _tensor(value: Any, dev: Any) -> Any:
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return tvm.runtime.tensor(np.asarray(getattr(value, "numpy", lambda: value)()), dev)


class LoadedFactory:
    """``tvm.runtime.load_module(path)`` of a library ``relay.build``'s result exported.

    ``["default"](dev)`` is what ``GraphModule`` takes; every other attribute and function is the
    loaded ``tvm.runtime.Module``'s (:attr:`module`).
    """

    def __init__(self, module: Any, input_names: list[str]) -> None:
        self.module = module
        self.executable = module
        self.input_names = list(input_names)

    def __getitem__(self, name: str) -> Any:
        if name == "default":
            return lambda dev: VMRunner(self.module, dev, self.input_names)
        return self.module[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)

    def get_lib(self) -> Any:
        """The loaded library."""
        return self.module

    def get_graph_json(self) -> str:
        """A JSON description of the inputs, as ``BuildResult.get_graph_json``."""
        return json.dumps({"inputs": self.input_names, "executor": "relax.VirtualMachine"})


def write_marker(path: str, input_names: list[str]) -> None:
    """Write the marker that :func:`read_marker` reads next to the library ``path``."""
    record = {"format": _MARKER_FORMAT, "inputs": list(input_names)}
    with new_files.replacing(path + MARKER_SUFFIX) as staging:
        staging.write_text(json.dumps(record), encoding="utf-8")


def read_marker(path: Any) -> list[str] | None:
    """The input names of the marker ``path + ".relay.json"``, or None when there is none.

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
    names = _marker_record(text)
    if names is None:
        raise ValueError(
            f"{marker}: this marker of relay.build's export_library cannot be read (not the "
            f"JSON of format {_MARKER_FORMAT!r} with a list of input names); export the library "
            "again, or remove the marker to load the library as a plain module"
        )
    return names


#: A marker holds a format name and input names: far below this.
_MARKER_MAX_BYTES = 1 << 20


def _marker_record(text: bytes) -> list[str] | None:
    """The input names a marker's bytes hold, or None when they are not a marker's."""
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
    return names
