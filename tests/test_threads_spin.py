"""TVM's pool workers sleep between kernels (spin count 0) and are not pinned to cores, unless
the user chose a spin count or ``TVM_BIND_THREADS``.

The probe runs on TVM's pool (``COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm``; the shim's own pool is
tests/test_thread_pool.py), in fresh processes (TVM reads both when its pool starts): after a
parallel kernel, a worker that spins keeps a core busy for ~50 ms, one that sleeps uses none; a
pinned worker may run on one CPU only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compile_engine_compat import thread_pool, threads

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# A parallel kernel, then 0.2 s asleep: the CPU time the process spent meanwhile is its pool's.
PROBE = """
import json, os, resource, sys, time, warnings
sys.path.insert(0, {tests!r})
warnings.simplefilter("ignore")
import numpy as np
from _builders import build
from tvm import relax
from compile_engine_compat import compile_engine
func = build("main", [("a", (256, 256), "float32"), ("b", (256, 256), "float32")],
             lambda bb, a, b: relax.op.matmul(a, b))
kernel = compile_engine.get().jit(func, "llvm")
a = np.ones((256, 256), "float32")
out = np.empty((256, 256), "float32")
kernel(a, a, out)

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

kernel(a, a, out)
before = cpu()
time.sleep(0.2)
spin = os.environ.get("TVM_THREAD_POOL_SPIN_COUNT")
# The CPUs each thread of the process (main, NumPy's, TVM's workers) may run on.
cpus = [len(os.sched_getaffinity(int(tid))) for tid in os.listdir("/proc/self/task")]
print(json.dumps({{"idle_cpu_s": cpu() - before, "spin": spin, "ok": bool(out[0, 0] == 256),
                  "bind": os.environ.get("TVM_BIND_THREADS"), "thread_cpus": cpus}}))
"""


def _probe(**env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TVM_")}
    environ.update(env, PYTHONPATH=str(ROOT))
    environ[thread_pool.POOL_ENV] = "tvm"
    result = subprocess.run(
        [sys.executable, "-c", PROBE.format(tests=str(TESTS))],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def default_probe() -> dict[str, object]:
    """The probe with the shim's defaults (2 threads), shared by the tests of both knobs."""
    return _probe(TVM_NUM_THREADS="2")


def test_workers_sleep_between_kernels_by_default_and_spin_when_the_user_says_so(
    default_probe: dict[str, object],
) -> None:
    # The probe of the boundary: TVM's pool still reads TVM_THREAD_POOL_SPIN_COUNT. If a TVM
    # release stops reading it, the default run spins too and this fails.
    quiet = default_probe
    spinning = _probe(TVM_NUM_THREADS="2", TVM_THREAD_POOL_SPIN_COUNT="300000")
    assert quiet["ok"] and spinning["ok"]
    assert quiet["spin"] == "0"
    assert spinning["spin"] == "300000"  # the user's value is left alone
    assert float(quiet["idle_cpu_s"]) < 0.02  # type: ignore[arg-type]
    assert float(spinning["idle_cpu_s"]) > 0.02  # type: ignore[arg-type]


@pytest.mark.parametrize(("knob", "user_value"), [(threads.SPIN_COUNT_ENV, "1000"),
                                                   (threads.BIND_ENV, "1")])  # fmt: skip
def test_configure_sets_a_pool_knob_to_zero_unless_the_user_set_it(
    monkeypatch, knob, user_value
) -> None:
    monkeypatch.delenv(knob, raising=False)
    threads.configure()
    assert os.environ[knob] == "0"
    monkeypatch.setenv(knob, user_value)
    threads.configure()
    assert os.environ[knob] == user_value


@pytest.mark.skipif(
    not Path("/proc/self/task").is_dir() or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux's /proc and at least 2 CPUs to tell a pinned thread",
)
def test_workers_float_across_cores_by_default_and_are_pinned_when_the_user_says_so(
    default_probe: dict[str, object],
) -> None:
    allowed = len(os.sched_getaffinity(0))
    floating = default_probe
    pinned = _probe(TVM_NUM_THREADS="2", TVM_BIND_THREADS="1")
    assert floating["ok"] and pinned["ok"]
    assert floating["bind"] == "0"
    assert pinned["bind"] == "1"  # the user's value is left alone
    # The probe of the boundary: TVM still reads TVM_BIND_THREADS (its worker is pinned to one
    # CPU when asked, and no thread is when not).
    floating_cpus, pinned_cpus = floating["thread_cpus"], pinned["thread_cpus"]
    assert isinstance(floating_cpus, list) and isinstance(pinned_cpus, list)
    assert all(n == allowed for n in floating_cpus)
    assert 1 in pinned_cpus
