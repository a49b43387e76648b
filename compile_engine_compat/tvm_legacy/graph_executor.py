"""``tvm.contrib.graph_executor`` (served by ``install()``): ``GraphModule`` on the Relax VM."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay.backend.executor_factory import VMRunner

__all__ = ["GraphModule", "create"]


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value]
    return [leaf for item in value for leaf in _flatten(item)]


@legacy_api("tvm.contrib.graph_executor.GraphModule")
class GraphModule:
    """``graph_executor.GraphModule(lib["default"](dev))``: set inputs, run, read outputs.

    Parameters
    ----------
    module : VMRunner
        What ``relay.build(...)["default"](dev)`` returned.
    """

    def __init__(self, module: Any) -> None:
        if not isinstance(module, VMRunner):
            raise TypeError(
                "GraphModule takes lib['default'](dev) of compile_engine_compat.relay.build; "
                f"got {type(module).__qualname__}"
            )
        self.module = module
        self._inputs: list[Any] = [None] * len(module.input_names)
        self._outputs: list[Any] = []

    def set_input(self, key: Any = None, value: Any = None, **params: Any) -> None:
        """Set an input by name or index (and more by keyword)."""
        if key is not None:
            self._set(key, value)
        for name, val in params.items():
            self._set(name, val)

    def _set(self, key: Any, value: Any) -> None:
        index = self.module.input_names.index(key) if isinstance(key, str) else int(key)
        if not isinstance(value, tvm.runtime.Tensor):
            value = tvm.runtime.tensor(np.asarray(getattr(value, "numpy", lambda: value)()))
        self._inputs[index] = value

    def run(self, **inputs: Any) -> None:
        """Run ``main`` on the inputs set so far."""
        if inputs:
            self.set_input(**inputs)
        missing = [n for n, v in zip(self.module.input_names, self._inputs) if v is None]
        if missing:
            raise ValueError(f"inputs not set: {missing}")
        self._outputs = _flatten(self.module.vm["main"](*self._inputs))

    def get_num_outputs(self) -> int:
        """The number of outputs of the last run (flattened)."""
        return len(self._outputs)

    def get_num_inputs(self) -> int:
        """The number of inputs of ``main``."""
        return len(self.module.input_names)

    def get_output(self, index: int, out: Any = None) -> Any:
        """Output ``index`` of the last run (copied into ``out`` when given)."""
        value = self._outputs[index]
        if out is not None:
            out.copyfrom(value)
            return out
        return value

    def get_input(self, index: Any) -> Any:
        """An input set with :meth:`set_input`."""
        i = self.module.input_names.index(index) if isinstance(index, str) else int(index)
        return self._inputs[i]


def create(graph_json_str: Any, libmod: Any, device: Any) -> GraphModule:
    """``graph_executor.create(graph, lib, dev)`` for the result of ``relay.build``."""
    executable = getattr(libmod, "executable", libmod)
    names = getattr(libmod, "input_names", None)
    if names is None:
        import json

        names = json.loads(graph_json_str)["inputs"]
    return GraphModule(VMRunner(executable, device, list(names)))
