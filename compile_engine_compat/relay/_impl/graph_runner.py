"""The module ``lib["default"](dev)`` gives: a Relax VM behind TVM 0.19's graph-executor
functions (``set_input``, ``run``, ``get_output``, ``get_input_info``, ``load_params``, ...).

``graph_executor.GraphModule`` wraps it as TVM 0.19's wrapped the C++ graph executor, and
``module["set_input_zero_copy"]``-style lookups reach the same functions. Inputs are converted
as TVM 0.19's ``NDArray.copyfrom`` converted them (:func:`converted_input`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import tvm
from tvm import relax

__all__ = [
    "InputInfo",
    "VMRunner",
    "converted_input",
    "copied_in",
    "graph_info",
    "graph_json",
    "main_input_info",
]

#: The VM closure of ``main`` over the inputs set, which ``time_evaluator`` times.
_SAVED_RUN = "__compile_engine_compat_graph_run"
#: Input name -> (shape, dtype): a symbolic dimension is -1 (TVM 0.19's graphs had none).
InputInfo = dict[str, tuple[tuple[int, ...], str]]


def _vm_input_names(vm: Any) -> list[str]:
    """The parameter names of ``main``, as the VM executable records them."""
    arity = int(vm["get_function_arity"]("main"))
    return [str(vm["get_function_param_name"]("main", i)) for i in range(arity)]


def main_input_info(mod: tvm.IRModule) -> InputInfo:
    """The shape and dtype of each parameter of ``mod["main"]`` (a tensor's; -1 where a
    dimension is symbolic, ``()`` and ``""`` for a parameter that is not a tensor)."""
    info: InputInfo = {}
    for var in mod["main"].params:
        sinfo = var.ty
        shape = getattr(sinfo, "shape", None)
        dims = getattr(shape, "values", None)
        info[var.name] = (
            tuple(int(d.value) if hasattr(d, "value") else -1 for d in dims or ()),
            str(getattr(sinfo, "dtype", "")),
        )
    return info


def graph_json(input_names: list[str], info: InputInfo) -> str:
    """TVM 0.19's graph JSON of the inputs alone (one ``null`` node each, no operator nodes:
    the Relax VM runs the graph), with ``"inputs"`` and ``"executor"`` added."""
    known = [info.get(name, ((), "")) for name in input_names]
    return json.dumps(
        {
            "nodes": [{"op": "null", "name": name, "inputs": []} for name in input_names],
            "arg_nodes": list(range(len(input_names))),
            "heads": [],
            "node_row_ptr": list(range(len(input_names) + 1)),
            "attrs": {
                "shape": ["list_shape", [list(shape) for shape, _ in known]],
                "dltype": ["list_str", [dtype for _, dtype in known]],
            },
            "inputs": list(input_names),
            "executor": "relax.VirtualMachine",
        }
    )


def graph_info(record: Any) -> InputInfo:
    """The input shapes and dtypes a :func:`graph_json` record (or a marker) holds, or {}."""
    try:
        names = list(record["inputs"])
        shapes = record["attrs"]["shape"][1]
        dtypes = record["attrs"]["dltype"][1]
        return {
            str(n): (tuple(int(d) for d in s), str(t)) for n, s, t in zip(names, shapes, dtypes)
        }
    except (TypeError, KeyError, IndexError, ValueError):
        return {}


def _host_array(value: Any) -> Any:
    """``value`` as a TVM tensor, or a NumPy array (a framework tensor through ``numpy()``)."""
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return np.asarray(getattr(value, "numpy", lambda: value)())


def _shape_fits(shape: tuple[int, ...], declared: tuple[int, ...]) -> bool:
    return len(shape) == len(declared) and all(d in (-1, s) for s, d in zip(shape, declared))


def converted_input(name: str, value: Any, declared: tuple[tuple[int, ...], str] | None) -> Any:
    """``value`` for input ``name`` as TVM 0.19's ``NDArray.copyfrom`` took it.

    A NumPy array (or anything array-like) is converted to the input's dtype
    (``np.ascontiguousarray(src, dtype=...)``: a float64 array feeds a float32 input); so is a
    TVM tensor of another dtype (TVM 0.19 copied its raw bytes where the sizes matched). Either
    must have the input's shape.

    Parameters
    ----------
    name : str
        The input, for the messages.
    value : array-like or tvm.runtime.Tensor
        What the caller set.
    declared : tuple or None
        The input's (shape, dtype); None where unknown (then ``value`` is taken as it is).

    Raises
    ------
    ValueError
        A shape other than the input's.
    TypeError
        A value that is not array-like.
    """
    try:
        source = _host_array(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"set_input({name!r}): the value must be array-like, got {type(value).__qualname__}"
        ) from exc
    if declared is None or not declared[1]:
        return source
    shape, dtype = declared
    if isinstance(source, tvm.runtime.Tensor) and str(source.dtype) != dtype:
        # TVM 0.19 copied a tensor's bytes as they were when the sizes matched (reading an
        # int32 tensor's bits as float32) and failed otherwise: its values are converted here.
        source = source.numpy()
    if not isinstance(source, tvm.runtime.Tensor) and (
        source.dtype != np.dtype(dtype) or not source.flags.c_contiguous
    ):
        # np.require, not ascontiguousarray: a scalar input stays 0-d (TVM 0.19 checked the
        # shape first, then copied the bytes into the input's own 0-d array).
        source = np.require(source, dtype=dtype, requirements="C")
    if not _shape_fits(tuple(source.shape), shape):
        raise ValueError(
            f"set_input({name!r}): array shape do not match the shape of the input "
            f"{tuple(source.shape)} vs {shape}"
        )
    return source


def copied_in(current: Any, source: Any, device: Any) -> Any:
    """``source`` copied into the input tensor ``current`` when it has the same shape and dtype
    (TVM 0.19's ``set_input`` copied into the graph's own input buffer), else into a new one.

    Copying in, the input stays where the last run read it: a new 600 KB tensor per
    ``set_input`` cost MobileNetV2 about 40 us a run in fresh pages and cache misses.
    """
    if (
        isinstance(current, tvm.runtime.Tensor)
        and tuple(current.shape) == tuple(source.shape)
        and str(current.dtype) == str(source.dtype)
    ):
        return current.copyfrom(source)
    fresh = tvm.runtime.empty(tuple(source.shape), str(source.dtype), device)
    return fresh.copyfrom(source)


def _zero_copy_tensor(call: str, value: Any) -> Any:
    """``value`` as a tensor to use without a copy: a ``tvm.runtime.Tensor``, or a framework
    tensor through DLPack (a NumPy array is refused: ``set_input`` copies one in)."""
    if isinstance(value, tvm.runtime.Tensor):
        return value
    if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
        try:
            return tvm.runtime.from_dlpack(value)
        except RuntimeError as exc:  # unaligned, or on a device DLPack cannot share
            raise ValueError(f"{call}: this tensor cannot be shared through DLPack: {exc}") from exc
    raise TypeError(
        f"{call} takes a tvm.runtime.Tensor (or a DLPack tensor), got "
        f"{type(value).__qualname__}: use set_input to copy an array in"
    )


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value]
    return [leaf for item in value for leaf in _flatten(item)]


class VMRunner:
    """``lib["default"](dev)``: a Relax VM with Relay's graph-module interface underneath.

    It holds the inputs set so far (``GraphModule.set_input`` writes them) and the outputs of
    the last run, so ``time_evaluator("run", dev)()`` times ``run`` as Relay's module did.
    ``input_info`` (name -> (shape, dtype)) is what ``get_input_info`` answers and what
    ``set_input`` converts to; empty where the build did not record it.
    """

    def __init__(
        self,
        executable: Any,
        device: Any,
        input_names: list[str] | None = None,
        input_info: InputInfo | None = None,
    ) -> None:
        self.vm = relax.VirtualMachine(executable, device)
        self.device = device
        self.input_names = (
            list(input_names) if input_names is not None else _vm_input_names(self.vm)
        )
        self.input_info: InputInfo = dict(input_info or {})
        # TVM 0.19's graph executor allocated its input buffers up front (a run before any
        # set_input read them): each input of a static shape starts as zeros.
        self.inputs: list[Any] = [self._allocated(name) for name in self.input_names]
        self.outputs: list[Any] | None = None
        #: Output index -> the tensor ``set_output_zero_copy`` gave: each run copies into it.
        self.output_targets: dict[int, Any] = {}

    def _allocated(self, name: str) -> Any:
        """A zero-filled tensor for input ``name``, or None where its shape is not static."""
        shape, dtype = self.input_info.get(name, ((-1,), ""))
        if not dtype or any(d < 0 for d in shape):
            return None
        return tvm.runtime.tensor(np.zeros(shape, dtype=dtype), self.device)

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
        timing = {
            "number": number,
            "repeat": repeat,
            "min_repeat_ms": min_repeat_ms,
            "cooldown_interval_ms": cooldown_interval_ms,
            "repeats_to_cooldown": repeats_to_cooldown,
            "f_preproc": f_preproc,
        }

        def evaluate() -> Any:
            missing = self.missing_inputs()
            if missing:
                raise ValueError(f"inputs not set: {missing} (set_input them before timing)")
            # ``main`` closed over the inputs set now, timed as Relay's "run": no arguments.
            self.vm.save_function("main", _SAVED_RUN, *self.inputs)
            return self.vm.time_evaluator(_SAVED_RUN, dev, **timing)()

        return evaluate

    # -- TVM 0.19's graph-executor functions (module["name"], and GraphModule's methods) ---------
    def get_input_index(self, name: str) -> int:
        """The index of input ``name``, or -1."""
        return self.input_names.index(name) if name in self.input_names else -1

    def index_of(self, key: Any) -> int | None:
        """The input index of ``key`` (a name or an index); None when the graph lacks it."""
        if isinstance(key, str):
            return self.input_names.index(key) if key in self.input_names else None
        if isinstance(key, bool) or not isinstance(key, int | np.integer):
            raise TypeError(f"an input key is a name or an int index, got {key!r}")
        return int(key) if 0 <= key < len(self.input_names) else None

    def set_input(self, key: Any, value: Any) -> None:
        """Copy ``value`` into input ``key`` (converted as :func:`converted_input` says)."""
        index = self.index_of(key)
        if index is None:
            raise RuntimeError(
                f"Could not find '{key}' in graph's inputs (inputs: {self.input_names})"
            )
        name = self.input_names[index]
        source = converted_input(name, value, self.input_info.get(name))
        self.inputs[index] = copied_in(self.inputs[index], source, self.device)

    def set_input_zero_copy(self, key: Any, value: Any) -> None:
        """Make the tensor ``value`` input ``key`` itself (no copy: a later write to it is seen
        by the next run), as TVM 0.19's did; a DLPack tensor is taken through DLPack."""
        index = self.index_of(key)
        if index is None:
            raise RuntimeError(
                f"Could not find '{key}' in graph's inputs (inputs: {self.input_names})"
            )
        value = _zero_copy_tensor("set_input_zero_copy", value)
        name = self.input_names[index]
        declared = self.input_info.get(name)
        if declared is not None and declared[1] and str(value.dtype) != declared[1]:
            raise ValueError(
                f"set_input_zero_copy({name!r}): a tensor of dtype {value.dtype} for an input "
                f"of dtype {declared[1]} (without a copy, nothing converts it)"
            )
        converted_input(name, value, declared)  # checks the shape
        self.inputs[index] = value

    def set_output_zero_copy(self, key: Any, value: Any) -> None:
        """Have output ``key`` written into the tensor ``value`` by each run.

        The Relax VM allocates its outputs: each run copies output ``key`` into ``value``
        (TVM 0.19's graph executor wrote into it directly), so ``value`` holds it after run().
        """
        if isinstance(key, bool) or not isinstance(key, int | np.integer) or key < 0:
            raise TypeError(f"set_output_zero_copy takes an output index, got {key!r}")
        value = _zero_copy_tensor("set_output_zero_copy", value)
        self.output_targets[int(key)] = value

    def execute(self) -> None:
        """Run the graph: the outputs, flattened, are kept for ``get_output`` (and copied into
        the tensors :meth:`set_output_zero_copy` gave)."""
        outputs = _flatten(self.run())
        for index, target in self.output_targets.items():
            if index >= len(outputs):
                raise IndexError(
                    f"set_output_zero_copy({index}): the graph has {len(outputs)} output(s)"
                )
            target.copyfrom(outputs[index])
            outputs[index] = target
        self.outputs = outputs

    def last_outputs(self, call: str) -> list[Any]:
        """The outputs of the last run; ``call`` names the caller in the error before one."""
        if self.outputs is None:
            raise RuntimeError(f"{call} before run(): the graph has produced no outputs yet")
        return self.outputs

    def get_output(self, index: Any, out: Any = None) -> Any:
        """Output ``index`` of the last run (copied into ``out`` when given, and returned)."""
        outputs = self.last_outputs(f"get_output({index})")
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise TypeError(f"get_output takes an int index, got {index!r}")
        if not 0 <= index < len(outputs):
            raise IndexError(f"get_output({index}): the graph has {len(outputs)} output(s)")
        value = outputs[int(index)]
        if out is not None:
            out.copyfrom(value)
            return out
        return value

    def get_input(self, key: Any) -> Any:
        """Input ``key`` (a name or an index) as set; None for one not set yet."""
        index = self.index_of(key)
        if index is None:
            raise RuntimeError(
                f"Could not find '{key}' in graph's inputs (inputs: {self.input_names})"
            )
        return self.inputs[index]

    def get_num_inputs(self) -> int:
        """The number of inputs of ``main``."""
        return len(self.input_names)

    def get_num_outputs(self) -> int:
        """The number of outputs of the last run (flattened)."""
        return len(self.last_outputs("get_num_outputs()"))

    def get_input_info(self) -> Any:
        """TVM 0.19's ``{"shape": {name: ShapeTuple}, "dtype": {name: str}}`` as FFI maps."""
        names = [n for n in self.input_names if n in self.input_info]
        return tvm.runtime.convert(
            {
                "shape": {n: tvm.runtime.ShapeTuple(self.input_info[n][0]) for n in names},
                "dtype": {n: self.input_info[n][1] for n in names},
            }
        )

    def load_params(self, params_bytes: Any) -> None:
        """Set the inputs named in ``params_bytes`` (``relay.save_param_dict``'s bytes); names
        the graph lacks are skipped, as TVM 0.19 skipped them."""
        for name, value in tvm.runtime.load_param_dict(bytearray(params_bytes)).items():
            if name in self.input_names:
                self.set_input(name, value)

    def share_params(self, other: Any, params_bytes: Any) -> None:
        """Use the input tensors of ``other`` (another module of the same build) for the inputs
        named in ``params_bytes``: one buffer, shared, as TVM 0.19 shared it."""
        if not isinstance(other, VMRunner):
            raise TypeError(
                "share_params takes another graph module of the same build, got "
                f"{type(other).__qualname__}"
            )
        for name in tvm.runtime.load_param_dict(bytearray(params_bytes)):
            mine, theirs = self.index_of(name), other.index_of(name)
            if mine is None or theirs is None:
                continue
            if other.inputs[theirs] is None:
                raise RuntimeError(f"share_params: {name!r} is not set in the other module")
            self.inputs[mine] = other.inputs[theirs]

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """TVM 0.19's module function ``name`` (``module["set_input_zero_copy"]``)."""
        if name == "run":
            return self.execute
        if name in _GRAPH_FUNCTIONS:
            return getattr(self, name)
        raise AttributeError(
            f"the graph module has no function {name!r} (it has {sorted(_GRAPH_FUNCTIONS)})"
        )


#: The functions of TVM 0.19's graph-executor module, by name.
_GRAPH_FUNCTIONS = frozenset(
    {
        "get_input",
        "get_input_index",
        "get_input_info",
        "get_num_inputs",
        "get_num_outputs",
        "get_output",
        "load_params",
        "run",
        "set_input",
        "set_input_zero_copy",
        "set_output_zero_copy",
        "share_params",
    }
)
