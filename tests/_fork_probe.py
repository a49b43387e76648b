"""Fork a process that uses the shim, the ways users do; run as a script by test_fork.py.

``python _fork_probe.py MODE`` exits 0 when every child computed the right result, 1 when a child
hung (killed after CHILD_TIMEOUT seconds) or failed. The parent always runs a parallel kernel (a
256x256 matmul) first, which is what left TVM's thread pool unusable in a forked child.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

import tvm  # noqa: E402
from _builders import add3, build  # noqa: E402
from tvm import relax  # noqa: E402

from compile_engine_compat import compile_engine, te_compiler  # noqa: E402
from compile_engine_compat.pipeline import trace as _trace  # noqa: E402
from compile_engine_compat.runtime import threads  # noqa: E402

CHILD_TIMEOUT = 60.0  # a forkserver worker imports TVM: ~20 s on a loaded machine
N = 256


def _matmul() -> Any:
    shape = (N, N)
    return build(
        "main",
        [("a", shape, "float32"), ("b", shape, "float32")],
        lambda bb, a, b: relax.op.matmul(a, b),
    )


def _computes(kernel: Any) -> bool:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, N, N), dtype="float32")
    out = np.zeros((N, N), "float32")
    kernel(a, b, out)
    return bool(np.allclose(out, a @ b, rtol=1e-4, atol=1e-3))


def _jit_and_compute(func: Any) -> bool:
    kernel = compile_engine.get().jit(func, "llvm")
    x = np.arange(8, dtype="float32")
    out = np.zeros(8, "float32")
    kernel(x, out)
    return bool(np.array_equal(out, 3 * x))


def _fork(child: Callable[[], bool]) -> int:
    """Run ``child`` in a forked process; 0 when it returned True, else 1 (hung: killed)."""
    pid = os.fork()
    if pid == 0:
        try:
            code = 0 if child() else 3
        except BaseException:
            traceback.print_exc()
            code = 4
        os._exit(code)
    deadline = time.monotonic() + CHILD_TIMEOUT
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return 0 if os.waitstatus_to_exitcode(status) == 0 else 1
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    print("a forked child hung", file=sys.stderr)
    return 1


KERNEL: Any = None


def _pool_task(_: int) -> bool:
    return _computes(KERNEL)  # inherited from the parent by fork


def _fresh_task(_: int) -> bool:
    return _computes(compile_engine.get().jit(_matmul(), "llvm"))


def _pool(method: str, task: Callable[[int], bool]) -> int:
    with multiprocessing.get_context(method).Pool(2) as pool:
        try:
            results = pool.map_async(task, range(4)).get(timeout=CHILD_TIMEOUT)
        except multiprocessing.TimeoutError:
            print(f"a {method} pool worker hung", file=sys.stderr)
            return 1
    return 0 if all(results) else 1


def _locks_held_elsewhere(kernel: Any) -> int:
    """Fork while another thread holds every lock a jit takes: the trace lock, the engine's lock
    and an entry's build lock (an entry lowered but not built yet)."""
    engine = compile_engine.get()
    pending = add3((8,))
    engine.lower(pending, "llvm")
    [value] = [v for k, v in engine.items() if k.source_func.same_as(pending)]
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with contextlib.ExitStack() as stack:
            # Every module-level lock too (te_compiler's, the strategy registry's, ...).
            for lock in (
                _trace.TRACE_LOCK,
                engine._lock,
                engine._record(value).lock,  # the entry's build lock
                *threads._module_locks,
            ):
                stack.enter_context(lock)
            holding.set()
            release.wait()

    def child() -> bool:
        with tvm.transform.PassContext(config={"relay.backend.use_auto_scheduler": True}):
            te_compiler.get()
        return _jit_and_compute(pending) and _computes(kernel)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait()
    try:
        return _fork(child)
    finally:
        release.set()
        holder.join()


def _during_jit(kernel: Any) -> int:
    """Fork several times while another thread jits (clearing the cache between rounds)."""
    engine = compile_engine.get()
    funcs = [add3((8,)) for _ in range(40)]
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            for func in funcs:
                engine.jit(func, "llvm")
                engine.clear()

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        failures = 0
        for round_ in range(4):
            time.sleep(0.05 * round_)
            failures += _fork(lambda: _jit_and_compute(funcs[0]) and _computes(kernel))
        return failures
    finally:
        stop.set()
        worker.join()


def main(mode: str) -> int:
    global KERNEL
    KERNEL = compile_engine.get().jit(_matmul(), "llvm")
    assert _computes(KERNEL)  # the parallel kernel that starts TVM's pool in this thread
    if mode == "fork":
        return _fork(lambda: _computes(KERNEL) and _jit_and_compute(add3((8,))))
    if mode == "fork-pool":
        return _pool("fork", _pool_task)
    if mode == "forkserver-pool":
        return _pool("forkserver", _fresh_task)
    if mode == "locks":
        return _locks_held_elsewhere(KERNEL)
    if mode == "during-jit":
        return _during_jit(KERNEL)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1]) else 0)
