"""What ``relay.build`` returns: Relay's executor factory, over one Relax VM executable.

``lib["default"](dev)`` gives a module that ``tvm.contrib.graph_executor.GraphModule`` (served by
``install()``) runs, and unpacking it as ``graph, lib, params`` still works. There is no graph
JSON: ``get_graph_json()`` returns a small JSON description of the inputs, not an executor graph.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import tvm
from tvm import relax

__all__ = ["BuildResult", "VMRunner"]


class VMRunner:
    """``lib["default"](dev)``: a Relax VM with Relay's graph-module interface underneath."""

    def __init__(self, executable: Any, device: Any, input_names: list[str]) -> None:
        self.vm = relax.VirtualMachine(executable, device)
        self.device = device
        self.input_names = input_names


class BuildResult:
    """What :func:`build` returns (Relay's ``GraphExecutorFactoryModule``)."""

    def __init__(self, executable: Any, mod: tvm.IRModule, params: dict[str, Any]) -> None:
        self.executable = executable
        self.lib = executable
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

    def get_params(self) -> dict[str, Any]:
        """The parameters given to ``build`` (bound into the executable)."""
        return dict(self.params)

    def get_graph_json(self) -> str:
        """A JSON description of the inputs (no executor graph exists on the Relax VM)."""
        return json.dumps({"inputs": self.input_names, "executor": "relax.VirtualMachine"})

    def export_library(self, file_name: str, **kwargs: Any) -> None:
        """Export the executable (load it with ``tvm.runtime.load_module``)."""
        self.executable.export_library(file_name, **kwargs)

    def __iter__(self) -> Iterator[Any]:
        # Relay warned here too: unpacking into (graph, lib, params) is the pre-0.7 form.
        return iter((self.get_graph_json(), self.executable, self.params))
