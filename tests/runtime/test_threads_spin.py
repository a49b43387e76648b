"""TVM's pool workers sleep between kernels (spin count 0) and are not pinned to cores, unless
the user chose a spin count or ``TVM_BIND_THREADS``.

The probe runs on TVM's pool (``COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm``; the shim's own pool is
tests/runtime/test_thread_pool.py), in fresh processes (TVM reads both when its pool starts): after
a parallel kernel, a worker that spins keeps a core busy for ~50 ms, one that sleeps uses none; a
pinned worker may run on one CPU only.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _pool_probe import probe

from compile_engine_compat.runtime import thread_pool, threads


def _probe(**env: str) -> dict[str, object]:
    """Two kernels on TVM's pool, then 0.2 s asleep (tests/_pool_probe.py)."""
    return probe(2, **env, **{thread_pool.POOL_ENV: "tvm"})


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
    threads.configure()  # the session's pool is chosen here, under the session's own settings
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
