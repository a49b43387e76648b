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

    def invoke(self, func_name: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``func_name`` on ``args`` (or on the inputs :meth:`set_input` set)."""
        if args or kwargs:
            self.set_input(func_name, *args, **kwargs)
        self.invoke_stateful(func_name)
        self._last_function = func_name
        return super().get_outputs(func_name)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """``invoke("main", *args, **kwargs)``."""
        return self.invoke("main", *args, **kwargs)

    def get_outputs(self, func_name: str | None = None) -> Any:
        """The outputs of the last invocation (of ``func_name``; Relay took no name)."""
        return super().get_outputs(func_name or self._last_function)

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
