"""``tvm.contrib.graph_executor`` (served by ``install()``): ``GraphModule`` on the Relax VM.

Errors follow TVM 0.19's ``graph_executor.py``: ``set_input(name, v)`` of a name that is not an
input of the graph (a parameter ``relay.build(params=)`` bound, say) raises ``RuntimeError: Could
not find 'w' in graph's inputs``, while ``set_input(**params)`` skips such names silently.
"""

from __future__ import annotations

import json
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


def _as_array(value: Any) -> Any:
    """``value`` as a TVM tensor or a NumPy array (a framework tensor through its ``numpy()``)."""
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return np.asarray(getattr(value, "numpy", lambda: value)())


def _copied_in(current: Any, value: Any, device: Any) -> Any:
    """``value`` copied into the input tensor ``current`` when it has the same shape and dtype
    (TVM 0.19's ``set_input`` copied into the graph's own input buffer), else into a new one.

    Copying in, the input stays where the last run read it: a new 600 KB tensor per
    ``set_input`` cost MobileNetV2 about 40 us a run in fresh pages and cache misses.
    """
    source = _as_array(value)
    if (
        isinstance(current, tvm.runtime.Tensor)
        and tuple(current.shape) == tuple(source.shape)
        and str(current.dtype) == str(source.dtype)
    ):
        return current.copyfrom(source)
    fresh = tvm.runtime.empty(tuple(source.shape), str(source.dtype), device)
    return fresh.copyfrom(source)


@legacy_api("tvm.contrib.graph_executor.GraphModule")
class GraphModule:
    """``graph_executor.GraphModule(lib["default"](dev))``: set inputs, run, read outputs.

    Parameters
    ----------
    module : VMRunner
        What ``relay.build(...)["default"](dev)`` (or ``load_module(path)["default"](dev)``)
        returned.
    """

    def __init__(self, module: Any) -> None:
        if not isinstance(module, VMRunner):
            raise TypeError(
                "GraphModule takes lib['default'](dev) of compile_engine_compat.relay.build "
                "(or of tvm.runtime.load_module of its export_library); "
                f"got {type(module).__qualname__}"
            )
        self.module = module

    def _index(self, key: Any) -> int | None:
        """The input index of ``key`` (a name or an index); None when the graph lacks it."""
        names = self.module.input_names
        if isinstance(key, str):
            return names.index(key) if key in names else None
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"an input key is a name or an int index, got {key!r}")
        return int(key) if 0 <= key < len(names) else None

    def set_input(self, key: Any = None, value: Any = None, **params: Any) -> None:
        """Set an input by name or index; keyword inputs the graph lacks are skipped (Relay's
        ``set_input(**params)`` after ``relay.build(params=)``)."""
        if key is not None:
            index = self._index(key)
            if index is None:
                raise RuntimeError(
                    f"Could not find '{key}' in graph's inputs (inputs: {self.module.input_names})"
                )
            self._set(index, value)
        for name, val in params.items():
            index = self._index(name)
            if index is not None:
                self._set(index, val)

    def _set(self, index: int, value: Any) -> None:
        inputs = self.module.inputs
        inputs[index] = _copied_in(inputs[index], value, self.module.device)

    def run(self, **inputs: Any) -> None:
        """Run ``main`` on the inputs set so far."""
        if inputs:
            self.set_input(**inputs)
        self.module.outputs = _flatten(self.module.run())

    def get_num_outputs(self) -> int:
        """The number of outputs of the last run (flattened)."""
        return len(self._outputs("get_num_outputs()"))

    def get_num_inputs(self) -> int:
        """The number of inputs of ``main``."""
        return len(self.module.input_names)

    def _outputs(self, call: str) -> list[Any]:
        if self.module.outputs is None:
            raise RuntimeError(f"{call} before run(): the graph has produced no outputs yet")
        return self.module.outputs

    def get_output(self, index: int, out: Any = None) -> Any:
        """Output ``index`` of the last run (copied into ``out`` when given)."""
        outputs = self._outputs(f"get_output({index})")
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"get_output takes an int index, got {index!r}")
        if not 0 <= index < len(outputs):
            raise IndexError(f"get_output({index}): the graph has {len(outputs)} output(s)")
        value = outputs[int(index)]
        if out is not None:
            out.copyfrom(value)
            return out
        return value

    def get_input(self, index: Any) -> Any:
        """An input set with :meth:`set_input`."""
        i = self._index(index)
        if i is None:
            raise RuntimeError(
                f"Could not find '{index}' in graph's inputs (inputs: {self.module.input_names})"
            )
        return self.module.inputs[i]

    def benchmark(
        self,
        device: Any,
        func_name: str = "run",
        repeat: int = 5,
        number: int = 5,
        min_repeat_ms: int | None = None,
        limit_zero_time_iterations: int = 100,
        end_to_end: bool = False,
        cooldown_interval_ms: int = 0,
        repeats_to_cooldown: int = 1,
        **kwargs: Any,
    ) -> Any:
        """Time ``run`` (TVM 0.19's ``GraphModule.benchmark``).

        Parameters
        ----------
        device : tvm.runtime.Device
            Where to time.
        func_name : str
            ``"run"``.
        repeat, number, min_repeat_ms, limit_zero_time_iterations, cooldown_interval_ms,
        repeats_to_cooldown
            As ``time_evaluator``.
        end_to_end : bool
            Include copying the inputs in (``kwargs`` as NumPy arrays) in every timed run.
        kwargs : dict
            Inputs, set before timing.

        Returns
        -------
        tvm.runtime.BenchmarkResult
            ``mean``, ``median``, ``std``, ``results`` (seconds).
        """
        timing: dict[str, Any] = {
            "repeat": repeat,
            "number": number,
            "min_repeat_ms": 0 if min_repeat_ms is None else min_repeat_ms,
            "limit_zero_time_iterations": limit_zero_time_iterations,
            "cooldown_interval_ms": cooldown_interval_ms,
            "repeats_to_cooldown": repeats_to_cooldown,
        }
        if end_to_end:
            return self._end_to_end(device, kwargs, timing)
        if kwargs:
            self.set_input(**kwargs)
        return self.module.time_evaluator(func_name, device, **timing)()

    def _end_to_end(self, device: Any, inputs: dict[str, Any], timing: dict[str, Any]) -> Any:
        """Time copying ``inputs`` in, running, and copying the outputs out, in Python."""
        import time

        from tvm.runtime.module import BenchmarkResult

        host = {
            name: np.asarray(getattr(v, "numpy", lambda v=v: v)()) for name, v in inputs.items()
        }
        results = []
        for _ in range(timing["repeat"]):
            start = time.perf_counter()
            for _ in range(timing["number"]):
                self.set_input(**host)
                self.run()
                for output in self.module.outputs or []:
                    output.numpy()
            results.append((time.perf_counter() - start) / timing["number"])
        return BenchmarkResult(results)


def create(graph_json_str: Any, libmod: Any, device: Any) -> GraphModule:
    """``graph_executor.create(graph, lib, dev)`` for the result of ``relay.build`` (in memory,
    or reloaded with ``tvm.runtime.load_module``)."""
    executable = getattr(libmod, "executable", libmod)
    names = getattr(libmod, "input_names", None)
    if names is None:
        try:
            names = json.loads(graph_json_str)["inputs"]
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                "graph_executor.create takes the graph JSON of compile_engine_compat.relay.build "
                "(lib.get_graph_json()); this one names no inputs"
            ) from exc
    return GraphModule(VMRunner(executable, device, list(names)))
