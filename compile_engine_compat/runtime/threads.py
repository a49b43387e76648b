"""Kernel threads: every physical core, on the shim's pool (or TVM's, set up to cooperate).

TVM's runtime sizes its thread pool to half the logical CPUs on x86 (it assumes two hardware
threads per core). On a VM without SMT that is half the machine: 1 thread of 2 here. Worse, a
1-thread pool pins the calling thread to CPU 0, and every thread it starts later (NumPy's BLAS
pool included) inherits that pin. So, unless the user chose (``TVM_NUM_THREADS`` or
``OMP_NUM_THREADS`` set), the shim sets ``TVM_NUM_THREADS`` to the number of physical cores this
process may run on, before TVM's pool starts. A pool TVM already started is left as it is.

Parallel kernels run on the shim's own pool (:mod:`.thread_pool`): the calling thread takes
the tasks no worker has claimed, and workers spin with ``pause`` for at most 50 us, only while
kernels follow each other that closely. :func:`configure` starts it, before TVM builds or loads a
library, unless the user set ``COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm`` or one of TVM's pool
settings below.

For TVM's own pool (still behind those settings, TVM's runtime functions, and libraries loaded
before the shim's first use), workers do not spin between kernels: unless the user set
``TVM_THREAD_POOL_SPIN_COUNT``, the shim sets it to 0 before the pool starts. TVM's default
(300,000 ``sched_yield`` calls, ~50 ms of a core after every kernel) collapses when another
library's threads spin too: NumPy's OpenBLAS keeps a worker busy for ~120 ms after each call, and
with three busy threads on two cores each kernel waited for the other spinner's time slice. A
NumPy 256x256 matmul followed by a 256x256 matmul kernel, looped, took 5-7 ms a pair against
0.28 ms for the two alone (2-core machine). Any spin at all brings the collapse back (30 yields
already did: a yield next to a non-yielding spinner can cost a whole time slice).

Pool workers are not pinned to cores: unless the user set ``TVM_BIND_THREADS``, the shim sets it
to 0 before the pool starts. TVM pins worker *i* to core *i*; next to another library's threads
that guarantees collisions the OS cannot undo. After a NumPy call, OpenBLAS leaves a worker
spinning on one core for ~100 ms; a TVM worker pinned to that same core waits there behind it
while the other core idles (3% of kernel calls waited a whole 4 ms time slice). Unpinned, the
scheduler places it on whichever core is free. NumPy 256x256 matmul then a 256x256 matmul
kernel, looped: 1.35-1.42x the two alone pinned, 1.02-1.09x unpinned; models and back-to-back
kernels unchanged (2-vCPU AMD EPYC VM, bench/RESULTS.md).

After ``os.fork()`` the shim's pool starts new workers in the child at its first parallel kernel
(:mod:`.thread_pool`); on TVM's pool, the child runs kernels on one thread. TVM's pool belongs to
the thread that first ran a parallel kernel; a child forked from it inherits the pool's state
but none of its worker threads, and its first parallel kernel waits for them forever. TVM exposes
no way to rebuild a pool (``runtime.config_threadpool`` reconfigures the same, dead workers), but
it reads ``TVM_NUM_THREADS`` at every parallel launch and, at 1, runs the work inline in the
caller. So the child gets ``TVM_NUM_THREADS=1``, as PyTorch and OpenBLAS children fall back to
one thread.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, TypeVar

from compile_engine_compat.boundary import at_fork_in_child, set_by_user, set_environ
from compile_engine_compat.runtime import thread_pool

__all__ = [
    "BIND_ENV",
    "SPIN_COUNT_ENV",
    "configure",
    "fork_safe",
    "kernel_threads",
    "physical_cores",
    "reset_lock",
    "thread_count",
]

_USER_KNOBS = ("TVM_NUM_THREADS", "OMP_NUM_THREADS")
#: TVM's pool reads it once, when its first worker starts: how long workers spin for work.
SPIN_COUNT_ENV = "TVM_THREAD_POOL_SPIN_COUNT"
#: TVM's pool reads it when it starts: whether worker *i* is pinned to core *i* (unset: pinned).
BIND_ENV = "TVM_BIND_THREADS"


def physical_cores() -> int:
    """The number of physical cores among the CPUs this process may run on (at least 1)."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not allowed:
        return os.cpu_count() or 1
    cores: set[str] = set()
    for cpu in allowed:
        siblings = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            cores.add(siblings.read_text().strip())
        except OSError:
            cores.add(str(cpu))  # no topology information: count logical CPUs
    return max(1, len(cores))


def configure() -> None:
    """Start the shim's pool and set TVM's up before either runs, leaving what the user set alone.

    The shim's pool (:func:`.thread_pool.start`) gets :func:`thread_count` threads, unless the
    user chose TVM's pool. ``TVM_NUM_THREADS`` becomes :func:`physical_cores` unless the user set
    a thread count (``TVM_NUM_THREADS`` or ``OMP_NUM_THREADS``); ``TVM_THREAD_POOL_SPIN_COUNT``
    and ``TVM_BIND_THREADS`` become 0 unless the user set them (see the module doc).
    """
    thread_pool.start(thread_count())  # first: it reads which of TVM's settings the user set
    for knob in (SPIN_COUNT_ENV, BIND_ENV):
        if not set_by_user(knob):
            set_environ(knob, "0")
    if any(set_by_user(knob) and os.environ.get(knob) for knob in _USER_KNOBS):
        return
    set_environ("TVM_NUM_THREADS", str(physical_cores()))


def thread_count() -> int:
    """Threads for parallel kernels: the user's ``TVM_NUM_THREADS`` (else ``OMP_NUM_THREADS``),
    else :func:`physical_cores`."""
    for knob in _USER_KNOBS:
        value = os.environ.get(knob, "").strip() if set_by_user(knob) else ""
        if value.isdigit() and int(value) > 0:
            return int(value)
    return physical_cores()


def kernel_threads() -> int:
    """The threads a parallel kernel's tasks are shared over: the shim pool's own count once it
    runs (read once, when it started), else :func:`thread_count` (what TVM's pool is given)."""
    pool = thread_pool.status()
    return pool.threads if pool.kind == "shim" else thread_count()


def reset_lock(lock: Any) -> None:
    """Make ``lock`` (a ``threading.Lock`` or ``RLock``) free again, in place, in a forked child.

    A lock a parent thread held at fork time stays held in the child, by a thread the child does
    not have. Resetting it in place (CPython's own ``threading`` does so after a fork) keeps every
    module that imported it by name on the same, now usable, object.
    """
    lock._at_fork_reinit()


_LockT = TypeVar("_LockT")
_module_locks: list[Any] = []


def fork_safe(lock: _LockT) -> _LockT:
    """Register a module-level lock to be freed in a forked child; return it.

    For locks that live as long as the process (a module's registry lock). Per-object locks are
    reset by their owner's own at-fork handler (the engine's).
    """
    _module_locks.append(lock)
    return lock


def _one_thread_in_child() -> None:
    # Also for a user's own TVM_NUM_THREADS: any value above 1 reaches the dead pool.
    set_environ("TVM_NUM_THREADS", "1")


def _free_module_locks_in_child() -> None:
    for lock in _module_locks:
        reset_lock(lock)


at_fork_in_child(_one_thread_in_child)
at_fork_in_child(_free_module_locks_in_child)
