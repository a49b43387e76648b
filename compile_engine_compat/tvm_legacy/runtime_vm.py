"""``tvm.runtime.vm.VirtualMachine`` with the Relay VM's methods (served by ``install()``).

A subclass of the Relax VM (TVM 0.27's ``tvm.runtime.vm.VirtualMachine``): it also takes the
:class:`~compile_engine_compat.relay.vm.Executable` of ``relay.vm.compile``, and adds Relay's
``invoke``, ``run``, ``get_outputs()`` without a function name and ``benchmark``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.relay.vm import Executable

__all__ = ["VirtualMachine"]


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
            super().set_input(func_name, *pending)

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
