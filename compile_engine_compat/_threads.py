"""Kernel threads: every physical core by default, ``TVM_NUM_THREADS`` honoured.

TVM's runtime sizes its thread pool to half the logical CPUs on x86 (it assumes two hardware
threads per core). On a VM without SMT that is half the machine: 1 thread of 2 here. Worse, a
1-thread pool pins the calling thread to CPU 0, and every thread it starts later (NumPy's BLAS
pool included) inherits that pin. So, unless the user chose (``TVM_NUM_THREADS`` or
``OMP_NUM_THREADS`` set), the shim sets ``TVM_NUM_THREADS`` to the number of physical cores this
process may run on, before TVM's pool starts. A pool TVM already started is left as it is.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["configure", "physical_cores"]

_USER_KNOBS = ("TVM_NUM_THREADS", "OMP_NUM_THREADS")


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
    """Set ``TVM_NUM_THREADS`` to :func:`physical_cores` unless the user set a thread count."""
    if any(os.environ.get(knob) for knob in _USER_KNOBS):
        return
    os.environ["TVM_NUM_THREADS"] = str(physical_cores())
