"""Shadow mode: every ``jit`` kernel also runs the modern path and checks that they agree.

Turn it on for a whole process with ``COMPILE_ENGINE_COMPAT_SHADOW=1`` (read once, when the
engine is first used: the engine then loads this module by name),
or for a block with :func:`shadow_mode`. ``CompileEngine.jit`` then returns a
:class:`ShadowKernel`: called like the kernel (destination-passing), it runs the kernel, then
runs the same inputs through ``tvm.compile`` + ``relax.VirtualMachine`` and raises
:class:`ShadowMismatchError`, with the oracle's report, when an output differs beyond the
tolerances of :mod:`.oracle`.

Cost: the first call of each kernel compiles the Relax function the modern way (about
0.1-0.3 s for small functions, as much as a cold ``jit``); every call then copies the inputs
and outputs to NumPy and runs the VM op by op, so a shadowed call costs a VM call plus copies
on top of the kernel (see the documentation's "Proving equivalence" page). Outside shadow mode
the only cost is one module-attribute test in ``jit``.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from compile_engine_compat.facade.engine import set_kernel_hook
from compile_engine_compat.runtime import threads
from compile_engine_compat.testing.oracle import EquivalenceError

__all__ = [
    "SHADOW_ENV",
    "ShadowKernel",
    "ShadowMismatchError",
    "enabled",
    "shadow_mode",
    "sync_from_env",
    "wrap",
]

SHADOW_ENV = "COMPILE_ENGINE_COMPAT_SHADOW"


class ShadowMismatchError(EquivalenceError):
    """A shadowed ``jit`` kernel and the modern path gave different outputs.

    An ``AssertionError``; the message is the oracle's report (TVMScript, inputs, both outputs).
    """


def from_env(environ: Mapping[str, str]) -> bool:
    """True when ``environ`` turns shadow mode on (``1``, ``true``, ``yes`` or ``on``)."""
    return environ.get(SHADOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")


#: Whether ``CompileEngine.jit`` wraps its kernels; from the environment until changed.
ENABLED: bool = from_env(os.environ)


def sync_from_env() -> None:
    """Turn shadow mode on when the environment asks for it (the engine calls this once, on first
    use, when ``COMPILE_ENGINE_COMPAT_SHADOW`` is on)."""
    global ENABLED
    ENABLED = from_env(os.environ)
    _sync()


def _sync() -> None:
    """Put :func:`wrap` around ``jit``'s kernels exactly while shadow mode is on."""
    set_kernel_hook(wrap if ENABLED else None)


def enabled() -> bool:
    """Whether ``jit`` currently returns shadowed kernels."""
    return ENABLED


@contextlib.contextmanager
def shadow_mode(on: bool = True) -> Iterator[None]:
    """Turn shadow mode on (or off) inside the block, process-wide; restores the previous state."""
    global ENABLED
    previous = ENABLED
    ENABLED = on
    _sync()
    try:
        yield
    finally:
        ENABLED = previous
        _sync()


class ShadowKernel:
    """A ``jit`` kernel that checks every call against the modern path.

    Attribute access (``name``, ``module``, ``num_inputs``, ...) goes to the wrapped kernel,
    available as ``.kernel``.
    """

    __slots__ = ("_lock", "_new_path", "kernel", "source_func", "target")

    def __init__(self, kernel: Any, source_func: Any, target: Any) -> None:
        self.kernel = kernel
        self.source_func = source_func
        self.target = target
        self._new_path: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"<ShadowKernel of {self.kernel!r}>"

    def __call__(self, *args: Any) -> None:
        self.kernel(*args)
        self.check(args)

    def check(self, args: Any) -> None:
        """Compare the outputs in ``args`` (already written by the kernel) with the VM's."""
        from compile_engine_compat.pipeline.trace import flatten
        from compile_engine_compat.testing.oracle import PATH_TOLERANCES, compare_all, format_report

        n = self.kernel.num_inputs
        inputs = [_to_numpy(a) for a in args[:n]]
        got = [_to_numpy(a) for a in args[n:]]
        with self._lock:
            if self._new_path is None:
                from compile_engine_compat.testing.oracle import new_path_callable

                self._new_path = new_path_callable(self.source_func, self.target)
        want = [t.numpy() for t in flatten(self._new_path(inputs))]
        problems = compare_all(got, want, ("jit", "new path"), PATH_TOLERANCES)
        if problems:
            report = format_report(
                self.source_func, inputs, None, problems, {"jit": got, "new path": want}
            )
            raise ShadowMismatchError(report)


def _to_numpy(value: Any) -> Any:
    import numpy as np

    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


_memo: OrderedDict[int, tuple[Any, ShadowKernel]] = OrderedDict()
_memo_lock = threads.fork_safe(threading.Lock())
_MEMO_SIZE = 256


def wrap(kernel: Any, source_func: Any, target: Any) -> Any:
    """Return the :class:`ShadowKernel` of ``kernel``: one per kernel, so ``jit`` stays memoized.

    Typed ``Any`` because it stands in for the kernel wherever ``jit``'s result goes.
    """
    with _memo_lock:
        hit = _memo.get(id(kernel))
        if hit is not None and hit[0] is kernel:
            _memo.move_to_end(id(kernel))
            return hit[1]
        shadow = ShadowKernel(kernel, source_func, target)
        _memo[id(kernel)] = (kernel, shadow)  # holding the kernel keeps its id unique
        while len(_memo) > _MEMO_SIZE:
            _memo.popitem(last=False)
        return shadow
