"""What a process's kernel pool does around parallel kernels; run by the thread-pool tests.

``python _pool_probe.py CALLS`` runs a 256x256 matmul kernel CALLS times back to back, then
sleeps 0.2 s, and prints one JSON line: the CPU time the process spent asleep (its pool's, if
workers still spin), whether the result is right, each thread's CPU affinity, the shim pool's
worker threads and their signal masks, which pool ran the kernels and why, and the pool settings
it saw. :func:`probe` runs it in a fresh process: the pool is chosen once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
#: The shim's pool setting, and its record of what it set: cleared with TVM's settings before
#: each probe, which starts from a user's own environment.
POOL_ENV = "COMPILE_ENGINE_COMPAT_THREAD_POOL"
SET_BY_PACKAGE_ENV = "COMPILE_ENGINE_COMPAT_SET_ENV"


def probe(calls: int, **env: str) -> dict[str, object]:
    """Run this script in a fresh process with ``env`` over the environment (none of the caller's
    ``TVM_*`` or pool settings); return its JSON line."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TVM_") and k not in (POOL_ENV, SET_BY_PACKAGE_ENV)
    }
    environ.update(env, PYTHONPATH=str(TESTS.parent))
    result = subprocess.run(
        [sys.executable, str(Path(__file__)), str(calls)],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _signal_mask(tid: str) -> int:
    status = Path(f"/proc/self/task/{tid}/status").read_text()
    return int(status.split("SigBlk:")[1].split()[0], 16)


def _main(calls: int) -> None:
    import resource
    import time
    import warnings

    warnings.simplefilter("ignore")
    import numpy as np
    from _builders import build
    from tvm import relax

    from compile_engine_compat import compile_engine
    from compile_engine_compat.runtime import thread_pool

    func = build(
        "main",
        [("a", (256, 256), "float32"), ("b", (256, 256), "float32")],
        lambda bb, a, b: relax.op.matmul(a, b),
    )
    kernel = compile_engine.get().jit(func, "llvm")
    a = np.ones((256, 256), "float32")
    out = np.empty((256, 256), "float32")
    for _ in range(calls):
        kernel(a, a, out)

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    before = cpu()
    time.sleep(0.2)
    idle = cpu() - before
    tasks = os.listdir("/proc/self/task")
    names = [Path(f"/proc/self/task/{tid}/comm").read_text().strip() for tid in tasks]
    status = thread_pool.status()
    print(json.dumps({
        "idle_cpu_s": idle,
        "ok": bool((out == 256).all()),
        # The CPUs each thread of the process (main, NumPy's, the pools' workers) may run on.
        "thread_cpus": [len(os.sched_getaffinity(int(tid))) for tid in tasks],
        "pool_threads": names.count("cec-pool"),
        "pool_masks": [_signal_mask(t) for t, name in zip(tasks, names) if name == "cec-pool"],
        "kind": status.kind,
        "reason": status.reason,
        "launches": thread_pool.launches(),
        "spin": os.environ.get("TVM_THREAD_POOL_SPIN_COUNT"),
        "bind": os.environ.get("TVM_BIND_THREADS"),
    }))  # fmt: skip


if __name__ == "__main__":
    _main(int(sys.argv[1]))
