"""``tvm.contrib.graph_executor`` (served by ``install()``): ``GraphModule`` on the Relax VM.

Errors follow TVM 0.19's ``graph_executor.py``: ``set_input(name, v)`` of a name that is not an
input of the graph (a parameter ``relay.build(params=)`` bound, say) raises ``RuntimeError: Could
not find 'w' in graph's inputs``, while ``set_input(**params)`` skips such names silently.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay.backend.executor_factory import VMRunner, graph_input_info

__all__ = ["GraphModule", "create", "get_device"]


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

    def set_input(self, key: Any = None, value: Any = None, **params: Any) -> None:
        """Set an input by name or index; keyword inputs the graph lacks are skipped (Relay's
        ``set_input(**params)`` after ``relay.build(params=)``).

        A NumPy array is converted to the input's dtype, as TVM 0.19's ``NDArray.copyfrom``
        did (``np.ascontiguousarray(value, dtype=...)``); its shape must be the input's.
        """
        if key is not None:
            self.module.set_input(key, value)
        for name, val in params.items():
            if self.module.index_of(name) is not None:
                self.module.set_input(name, val)

    def set_input_zero_copy(self, key: Any = None, value: Any = None, **params: Any) -> None:
        """Make tensors the inputs themselves, without a copy (keywords the graph lacks are
        skipped, as ``set_input``'s)."""
        if key is not None:
            self.module.set_input_zero_copy(key, value)
        for name, val in params.items():
            if self.module.index_of(name) is not None:
                self.module.set_input_zero_copy(name, val)

    def set_output_zero_copy(self, key: Any, value: Any) -> None:
        """Have each run leave output ``key`` in the tensor ``value`` (copied in after the run:
        the Relax VM allocates its outputs)."""
        self.module.set_output_zero_copy(key, value)

    def run(self, **inputs: Any) -> None:
        """Run ``main`` on the inputs set so far (``inputs`` set first)."""
        if inputs:
            self.set_input(**inputs)
        self.module.execute()

    def get_num_outputs(self) -> int:
        """The number of outputs of the last run (flattened)."""
        return self.module.get_num_outputs()

    def get_num_inputs(self) -> int:
        """The number of inputs of ``main``."""
        return self.module.get_num_inputs()

    def get_output(self, index: int, out: Any = None) -> Any:
        """Output ``index`` of the last run (copied into ``out`` when given)."""
        return self.module.get_output(index, out)

    def get_input(self, index: Any, out: Any = None) -> Any:
        """An input set with :meth:`set_input` (copied into ``out`` when given)."""
        value = self.module.get_input(index)
        if out is not None:
            if value is None:
                raise RuntimeError(f"get_input({index!r}, out): the input is not set yet")
            out.copyfrom(value)
            return out
        return value

    def get_input_index(self, name: str) -> int:
        """The index of input ``name``, or -1 when the graph has no such input."""
        return self.module.get_input_index(name)

    def get_input_info(self) -> tuple[Any, Any]:
        """TVM 0.19's ``(shape_dict, dtype_dict)`` of the graph's inputs (the parameters
        ``relay.build`` bound are not inputs): ``{name: ShapeTuple}``, ``{name: dtype}``."""
        info = self.module.get_input_info()
        return info["shape"], info["dtype"]

    def debug_get_output(self, node: Any, out: Any) -> None:
        """Refused, as TVM 0.19 refused it on the graph executor (its debug executor is gone)."""
        raise NotImplementedError(
            "debug_get_output is not served (TVM 0.19 served it only on "
            "debugger.debug_executor, removed after TVM 0.19): read intermediate values by "
            "returning them from the function, or use tvm.runtime.profiling on the Relax VM"
        )

    def load_params(self, params_bytes: Any) -> None:
        """Set the inputs named in ``params_bytes`` (``relay.save_param_dict(params)``)."""
        self.module.load_params(params_bytes)

    def share_params(self, other: GraphModule, params_bytes: Any) -> None:
        """Share ``other``'s input tensors for the names in ``params_bytes``."""
        if not isinstance(other, GraphModule):
            raise TypeError(
                f"share_params takes another GraphModule, got {type(other).__qualname__}"
            )
        self.module.share_params(other.module, params_bytes)

    def __getitem__(self, key: str) -> Any:
        """The module's function ``key`` (``gmod["load_params"]``)."""
        return self.module[key]

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


def get_device(libmod: Any, device: Any) -> tuple[list[Any], int, list[int]]:
    """TVM 0.19's ``(devices, number of RPC devices, [type, id, ...])`` for ``device`` (a device
    or a list of them). RPC devices do not exist here: the count is 0.

    Raises
    ------
    ValueError
        If ``device`` is not a device or a non-empty list of devices.
    """
    devices = [device] if isinstance(device, tvm.runtime.Device) else device
    if not isinstance(devices, list | tuple) or not devices:
        raise ValueError("dev has to be the type of Device or a list of Device")
    type_id: list[int] = []
    for dev in devices:
        if not isinstance(dev, tvm.runtime.Device):
            raise ValueError("dev has to be the type of Device or a list of Device")
        type_id += [int(dev.dlpack_device_type()), int(dev.index)]
    return list(devices), 0, type_id


def create(graph_json_str: Any, libmod: Any, device: Any) -> GraphModule:
    """``graph_executor.create(graph, lib, dev)`` for the result of ``relay.build`` (in memory,
    or reloaded with ``tvm.runtime.load_module``).

    ``device`` is a device or a list of them (the first is used: one Relax VM runs the graph).
    """
    device = get_device(libmod, device)[0][0]
    executable = getattr(libmod, "executable", libmod)
    names = getattr(libmod, "input_names", None)
    info = getattr(libmod, "input_info", None)
    if names is None or not info:
        graph_names, info = graph_input_info(graph_json_str)
        names = graph_names if names is None else names
    return GraphModule(VMRunner(executable, device, list(names), info))
