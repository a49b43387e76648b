"""``tvm.runtime.vm.VirtualMachine`` with the Relay VM's methods (served by ``install()``).

A subclass of the Relax VM (TVM 0.27's ``tvm.runtime.vm.VirtualMachine``): it also takes the
:class:`~compile_engine_compat.relay.vm.Executable` of ``relay.vm.compile``, and adds Relay's
``invoke``, ``run``, ``get_outputs()`` without a function name and ``benchmark``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.relay.vm import Executable, InterpretedExecutable

__all__ = ["InterpretedVirtualMachine", "VirtualMachine"]


class VirtualMachine(relax.VirtualMachine):
    """``tvm.runtime.vm.VirtualMachine(exe, dev)``: the Relax VM, with Relay's VM methods.

    Parameters
    ----------
    exe : Executable or tvm.runtime.Executable or tvm.runtime.Module
        What ``relay.vm.compile`` (or ``tvm.compile``) returned, or a loaded library.
    device : tvm.runtime.Device or list of Device
        Where to run.
    memory_cfg : str or dict, optional
        As the Relax VM's.
    """

    def __new__(cls, exe: Any, device: Any, memory_cfg: Any = None) -> Any:
        if isinstance(exe, InterpretedExecutable) and cls is VirtualMachine:
            return object.__new__(InterpretedVirtualMachine)
        return object.__new__(cls)

    def __init__(self, exe: Any, device: Any, memory_cfg: Any = None) -> None:
        if isinstance(exe, Executable):
            exe = exe.lib
        super().__init__(exe, device, memory_cfg)
        self._last_function = "main"
        # Inputs set one at a time (set_one_input), per function, until all are there.
        self._pending: dict[str, list[Any]] = {}

    def invoke(self, func_name: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``func_name`` on ``args`` (or on the inputs :meth:`set_input` set)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self.invoke_stateful(func_name)
        return super().get_outputs(func_name)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """``invoke("main", *args, **kwargs)``."""
        return self.invoke("main", *args, **kwargs)

    # -- upstream Relay test files (test_vm): the rest of the Relay VM's methods ---------------
    def invoke_stateful(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Run ``func_name`` on the inputs set (or on ``args``, set first, as Relay's did)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        super().invoke_stateful(func_name)
        self._last_function = func_name

    def get_outputs(self, func_name: str | None = None) -> Any:
        """The outputs of the last :meth:`invoke_stateful`.

        Without ``func_name`` (Relay's call) a list: the one output, or a tuple's fields. With
        it, the Relax VM's answer (the output itself, a tuple as a Python tuple).
        """
        if func_name is not None:
            return super().get_outputs(func_name)
        outputs = super().get_outputs(self._last_function)
        return list(outputs) if isinstance(outputs, tuple) else [outputs]

    def get_input_index(self, input_name: str, func_name: str = "main") -> int:
        """The position of parameter ``input_name`` of ``func_name``, or -1 (Relay's)."""
        arity = self._get_function_arity(func_name)
        names = [self._get_function_param_name(func_name, i) for i in range(arity)]
        return names.index(input_name) if input_name in names else -1

    def set_input(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Set all the inputs of ``func_name`` (positionally or by name)."""
        if kwargs:
            args = tuple(self._convert_func_named_args(func_name, args, **kwargs))
        super().set_input(func_name, *args)
        self._pending[func_name] = list(args)

    def set_one_input(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Set one input of ``func_name``, by index or name (``set_one_input("main", 0, x)``,
        ``set_one_input("main", "x", x)`` or ``set_one_input("main", x=x)``).

        The Relax VM takes all inputs at once: they are handed over when every one is set
        (once set, each later call replaces one).
        """
        if kwargs:
            if args or len(kwargs) != 1:
                raise TypeError(
                    "set_one_input takes one input: (index or name, value) or name=value"
                )
            ((key, value),) = kwargs.items()
        elif len(args) == 2:
            key, value = args
        else:
            raise TypeError("set_one_input takes one input: (index or name, value) or name=value")
        arity = self._get_function_arity(func_name)
        index = self.get_input_index(key, func_name) if isinstance(key, str) else int(key)
        if not 0 <= index < arity:
            raise ValueError(f"{func_name} has no input {key!r} (it takes {arity})")
        pending = self._pending.setdefault(func_name, [None] * arity)
        pending[index] = value
        if all(v is not None for v in pending):
            self._hand_over(func_name, pending)

    def _hand_over(self, func_name: str, inputs: list[Any]) -> None:
        """Give the Relax VM the inputs :meth:`set_one_input` gathered."""
        super().set_input(func_name, *inputs)

    def invoke_with_outputs(
        self, func_name: str, input_args: dict[str, Any], output_args: list[Any]
    ) -> None:
        """Run ``func_name`` on the named inputs and write its outputs into ``output_args``.

        The Relax VM allocates its outputs: they are copied into the given tensors (Relay's VM
        wrote into them directly).
        """
        outputs = self.invoke(func_name, **input_args)
        fields = list(outputs) if isinstance(outputs, tuple) else [outputs]
        if len(fields) != len(output_args):
            raise ValueError(
                f"{func_name} has {len(fields)} outputs, {len(output_args)} output_args given"
            )
        for target, value in zip(output_args, fields):
            target.copyfrom(value)

    def benchmark(
        self,
        device: Any,
        *args: Any,
        func_name: str = "main",
        repeat: int = 5,
        number: int = 5,
        min_repeat_ms: int | None = None,
        end_to_end: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Time ``func_name`` on ``args`` (Relay VM's ``benchmark``): a ``BenchmarkResult``.

        With ``end_to_end`` the host arguments are passed on every call (their copy to
        ``device`` is timed); otherwise they are set once and the stateful call is timed.
        """
        timing = {
            "repeat": repeat,
            "number": number,
            "min_repeat_ms": 0 if min_repeat_ms is None else min_repeat_ms,
        }
        if end_to_end:
            if kwargs:
                raise TypeError("benchmark(end_to_end=True) takes the inputs positionally")
            # On the host, as Relay's VM took them: the timed call copies them to ``device``.
            # (A NumPy array handed to the FFI as is would be used in place, maybe unaligned.)
            host = [
                tvm.runtime.tensor(np.asarray(getattr(a, "numpy", lambda a=a: a)())) for a in args
            ]
            return self.time_evaluator(func_name, device, **timing)(*host)
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        return self.time_evaluator("invoke_stateful", device, **timing)(func_name)


class InterpretedVirtualMachine(VirtualMachine):
    """The VM of an :class:`~compile_engine_compat.relay.vm.InterpretedExecutable`: Relay's VM
    methods over the shim's interpreter (``VirtualMachine(exe, dev)`` makes one for such an
    executable). Results are the interpreter's values: tensors, a tuple as an FFI ``Array``, a
    constructor value as ``ConstructorValue`` (``tag``, ``len``, indexing: Relay's VM ``ADT``).
    """

    def __init__(self, exe: Any, device: Any, memory_cfg: Any = None) -> None:
        # No Relax VM underneath: the interpreter runs the program.
        self.program = exe.program
        devices = device if isinstance(device, list | tuple) else [device]
        self.device = devices[0]
        self._last_function = "main"
        self._inputs: dict[str, list[Any]] = {}
        self._pending: dict[str, list[Any]] = {}
        self._outputs: dict[str, Any] = {}

    def __getitem__(self, func_name: str) -> Any:
        def run(*args: Any) -> Any:
            return self.program.run(func_name, args, self.device)

        return run

    def _get_function_arity(self, func_name: str) -> int:
        return len(self.program.param_names(func_name))

    def _get_function_param_name(self, func_name: str, index: int) -> str:
        return self.program.param_names(func_name)[index]

    def _convert_func_named_args(self, func_name: str, args: Any, **kwargs: Any) -> list[Any]:
        names = self.program.param_names(func_name)
        if len(args) > len(names):
            raise TypeError(
                f"{func_name}({', '.join(names)}) takes {len(names)} inputs, got {len(args)}"
            )
        values = list(args) + [None] * (len(names) - len(args))
        for name, value in kwargs.items():
            if name not in names:
                raise TypeError(f"{func_name}({', '.join(names)}) has no input {name!r}")
            values[names.index(name)] = value
        return values

    def set_input(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Set all the inputs of ``func_name`` (positionally or by name)."""
        values = self._convert_func_named_args(func_name, args, **kwargs)
        self._inputs[func_name] = values
        self._pending[func_name] = list(values)

    def _hand_over(self, func_name: str, inputs: list[Any]) -> None:
        self._inputs[func_name] = list(inputs)

    def invoke_stateful(self, func_name: str, *args: Any, **kwargs: Any) -> None:
        """Run ``func_name`` on the inputs set (or on ``args``)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        inputs = self._inputs.get(func_name, [])
        missing = [n for n, v in zip(self.program.param_names(func_name), inputs) if v is None]
        if missing or len(inputs) != self._get_function_arity(func_name):
            raise ValueError(f"{func_name}: the inputs {missing or 'all'} are not set")
        self._outputs[func_name] = self.program.run(func_name, inputs, self.device)
        self._last_function = func_name

    def invoke(self, func_name: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``func_name`` on ``args`` (or on the inputs :meth:`set_input` set)."""
        if (
            not args
            and not kwargs
            and func_name not in self._inputs
            and (self._get_function_arity(func_name) == 0)
        ):
            self._inputs[func_name] = []
        self.invoke_stateful(func_name, *args, **kwargs)
        return self._outputs[func_name]

    def get_outputs(self, func_name: str | None = None) -> Any:
        """The outputs of the last :meth:`invoke_stateful` (see
        :meth:`VirtualMachine.get_outputs`)."""
        name = self._last_function if func_name is None else func_name
        if name not in self._outputs:
            raise ValueError(f"get_outputs: {name} has not run (invoke_stateful first)")
        outputs = self._outputs[name]
        if func_name is not None:
            return outputs
        return list(outputs) if isinstance(outputs, tvm_ffi.Array) else [outputs]

    def benchmark(self, device: Any, *args: Any, func_name: str = "main", **kwargs: Any) -> Any:
        """Refused: the interpreter's run is not a compiled VM function to time."""
        raise NotImplementedError(
            "VirtualMachine.benchmark: this program runs on the interpreter (it has no Relax "
            "form); time vm.invoke(...) in Python instead"
        )
