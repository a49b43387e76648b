"""The shim's pool runs parallel kernels: every task exactly once, errors raised in the caller,
concurrent callers served, TVM's barrier kept working, and TVM's pool kept where the user chose
it or no compiler builds it.

The in-process tests use this session's pool (started by the shim's first use). The choice of
pool is made once per process, so the settings that decline it run in fresh processes.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
import tvm
from _pool_probe import probe
from hypothesis import given, settings
from hypothesis import strategies as st
from tvm.script import tirx as T

from compile_engine_compat import boundary
from compile_engine_compat.runtime import thread_pool, threads

ROOT = Path(__file__).resolve().parents[2]


@T.prim_func
def _checked_accumulate(a: T.handle, b: T.handle) -> None:
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.parallel(n):
        assert A[i] >= T.float32(0), "negative input"
        B[i] = B[i] + A[i]  # a task run twice doubles its part, one skipped leaves zeros


@T.prim_func
def _reverse_doubled(a: T.handle, b: T.handle) -> None:
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    # One launch, two parallel loops: each task's second half reads what other tasks wrote in
    # the first half, so every task must reach TVM's barrier before any goes on.
    with T.attr(0, "pragma_parallel_launch_point", 1):
        with T.attr(0, "pragma_parallel_barrier_when_finish", 1):
            for i in T.parallel(n):
                A[i] = A[i] * T.float32(2)
        for i in T.parallel(n):
            B[i] = A[n - 1 - i]


@pytest.fixture(scope="module")
def accumulate():
    """A parallel kernel built after the pool started (the session's first use started it)."""
    threads.configure()
    lib = tvm.compile(tvm.IRModule({"main": _checked_accumulate}), target="llvm")
    return lib["main"]


def _run(kernel, a: np.ndarray) -> np.ndarray:
    out = tvm.runtime.tensor(np.zeros(a.shape, "float32"))
    kernel(tvm.runtime.tensor(a), out)
    return out.numpy()


def test_the_pools_source_ships_with_the_package() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = pyproject["tool"]["setuptools"]["package-data"]["compile_engine_compat"]
    assert f"runtime/{thread_pool.SOURCE.name}" in package_data
    assert thread_pool.SOURCE.is_file()


NEEDS_CC = pytest.mark.skipif(
    shutil.which("cc") is None, reason="builds the pool with the C compiler, cc"
)
#: Another user's uid: files are given to it with os.chown, which only root may do.
OTHER_UID = 4242
AS_ROOT = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a file to another uid (os.chown) needs root",
)


@pytest.fixture
def pool_folders(monkeypatch, tmp_path) -> tuple[Path, str]:
    """An unusable per-user cache and a temp folder of this test's: (temp folder, pool name)."""
    monkeypatch.delenv("CC", raising=False)
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # its compile-engine-compat/ cannot exist
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return tmp_path / "tmp", thread_pool._library_name("cc")


@NEEDS_CC
def test_the_pool_is_built_in_the_temp_directory_when_the_cache_is_unwritable(
    pool_folders,
) -> None:
    temp, name = pool_folders
    library = Path(thread_pool._load_library()._name)
    assert library == temp / f"compile-engine-compat-{os.getuid()}" / name
    assert stat.S_IMODE(library.parent.stat().st_mode) == 0o700
    inode = library.stat().st_ino
    assert Path(thread_pool._load_library()._name).stat().st_ino == inode  # built once, then found


def _plant(library: Path, marker: Path) -> None:
    """Build at ``library`` a shared library whose constructor writes ``marker`` when loaded."""
    source = library.with_suffix(".c")
    source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void planted(void) {\n"
        f'  FILE *f = fopen("{marker}", "w"); if (f) {{ fputs("ran", f); fclose(f); }}\n'
        "}\n"
    )
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    source.unlink()


@NEEDS_CC
@AS_ROOT
def test_a_library_planted_by_another_user_in_the_temp_folder_is_never_loaded(
    pool_folders, tmp_path
) -> None:
    temp, name = pool_folders
    # Another user made the per-user temp folder first (its name is predictable) and put there
    # a library under the name this machine's build has.
    planted = temp / f"compile-engine-compat-{os.getuid()}"
    planted.mkdir(mode=0o755)
    _plant(planted / name, tmp_path / "ran")
    os.chown(planted, OTHER_UID, OTHER_UID)
    os.chown(planted / name, OTHER_UID, OTHER_UID)
    library = Path(thread_pool._load_library()._name)
    assert not (tmp_path / "ran").exists(), "the planted library's constructor ran"
    assert library.parent != planted and library.name == name
    assert not library.exists()  # built in a mkdtemp folder, removed once loaded


@NEEDS_CC
@AS_ROOT
@pytest.mark.parametrize("how", ["owned by another uid", "group-writable", "a symlink"])
def test_an_unsafe_library_in_the_users_own_folder_is_rebuilt_not_loaded(
    pool_folders, tmp_path, how: str
) -> None:
    temp, name = pool_folders
    folder = temp / f"compile-engine-compat-{os.getuid()}"
    folder.mkdir(mode=0o700)
    _plant(tmp_path / "planted.so", tmp_path / "ran")
    library = folder / name
    if how == "a symlink":
        library.symlink_to(tmp_path / "planted.so")
    else:
        os.replace(tmp_path / "planted.so", library)
        if how == "group-writable":
            library.chmod(0o775)
        else:
            os.chown(library, OTHER_UID, OTHER_UID)
    loaded = thread_pool._load_library()
    assert not (tmp_path / "ran").exists(), f"the library {how} was loaded"
    assert Path(loaded._name) == library and not library.is_symlink()
    assert library.stat().st_uid == os.getuid() and loaded.cec_pool_threads is not None


def test_the_shims_pool_runs_parallel_kernels_by_default(accumulate) -> None:
    assert thread_pool.status().kind == "shim", thread_pool.status().reason
    assert thread_pool.status().threads == threads.thread_count()
    before = thread_pool.launches()
    a = np.arange(1, 1001, dtype="float32")
    assert np.array_equal(_run(accumulate, a), a)
    assert thread_pool.launches() == before + 1  # TVM's pool would leave the count alone


def test_workers_share_the_tasks_of_back_to_back_kernels(accumulate) -> None:
    if thread_pool.status().threads < 2:
        pytest.skip("a pool of one thread has no workers")
    a = np.arange(1, 1 << 20, dtype="float32")  # ~1 ms a call: long enough for a worker to join
    before = thread_pool.worker_tasks()
    for _ in range(50):
        assert np.array_equal(_run(accumulate, a), a)
    assert thread_pool.worker_tasks() > before


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3000))
def test_every_task_runs_exactly_once(accumulate, n: int) -> None:
    a = np.arange(1, n + 1, dtype="float32")
    assert np.array_equal(_run(accumulate, a), a)


@pytest.mark.parametrize("bad", [3, 990], ids=["first-task", "last-task"])
def test_a_tasks_error_is_raised_in_the_caller_and_the_pool_goes_on(accumulate, bad) -> None:
    a = np.arange(1, 1001, dtype="float32")
    a[bad] = -1.0
    with pytest.raises(RuntimeError, match="negative input"):
        _run(accumulate, a)
    a[bad] = 1.0
    assert np.array_equal(_run(accumulate, a), a)


def test_concurrent_callers_each_get_their_own_result(accumulate) -> None:
    failures: list[str] = []

    def call(seed: int) -> None:
        a = np.full(4096, float(seed), "float32")
        for _ in range(200):
            out = _run(accumulate, a)
            if not np.array_equal(out, a):
                failures.append(f"caller {seed}: {out[:4]}")
                return

    callers = [threading.Thread(target=call, args=(seed,)) for seed in range(1, 5)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(timeout=60)
    assert not any(caller.is_alive() for caller in callers), "a caller hung"
    assert failures == []


def test_kernels_with_a_barrier_run_with_every_task_at_once() -> None:
    threads.configure()
    kernel = tvm.compile(tvm.IRModule({"main": _reverse_doubled}), target="llvm")["main"]
    failures: list[int] = []
    before = thread_pool.launches()

    def calls() -> None:  # in a thread of its own: a deadlock fails the test, not the run
        for n in (1, 2, 3, 100, 100_000):
            for _ in range(50):
                a = np.arange(n, dtype="float32")
                out = tvm.runtime.tensor(np.zeros(n, "float32"))
                kernel(tvm.runtime.tensor(a), out)
                if not np.array_equal(out.numpy(), (2 * a)[::-1]):
                    failures.append(n)

    caller = threading.Thread(target=calls)
    caller.start()
    caller.join(timeout=120)
    assert not caller.is_alive(), "a barrier kernel hung on the shim's pool"
    assert failures == []
    assert thread_pool.launches() == before + 250


def _probe(**env: str) -> dict[str, object]:
    """50 back-to-back kernels with 2 threads, then 0.2 s asleep (tests/_pool_probe.py)."""
    return probe(50, TVM_NUM_THREADS="2", **env)


@pytest.mark.long
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads thread names in /proc")
def test_workers_stop_spinning_once_kernels_stop_and_block_signals() -> None:
    default = _probe()
    assert default["ok"] and default["kind"] == "shim"
    assert isinstance(default["launches"], int) and default["launches"] >= 50
    assert default["pool_threads"] == 1  # 2 threads: caller + 1
    assert float(default["idle_cpu_s"]) < 0.02  # type: ignore[arg-type]
    # Workers block signals: SIGINT and SIGTERM reach Python's threads, never a kernel's worker.
    masks = default["pool_masks"]
    assert isinstance(masks, list) and len(masks) == 1
    assert all(mask & (1 << (signal.SIGINT - 1)) and mask & (1 << (signal.SIGTERM - 1))
               for mask in masks)  # fmt: skip


@pytest.mark.long
def test_a_child_process_keeps_the_shims_pool_despite_the_settings_its_parent_made() -> None:
    # What a child started by a process that used the shim inherits: TVM's pool settings, set by
    # the shim (not by the user), and the record of them.
    inherited = {"TVM_THREAD_POOL_SPIN_COUNT": "0", "TVM_BIND_THREADS": "0"}
    record = ";".join(f"{name}={value}" for name, value in inherited.items())
    child = _probe(**inherited, **{boundary.SET_BY_PACKAGE_ENV: record})
    assert child["ok"] and child["kind"] == "shim", child["reason"]


@pytest.mark.long
@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({thread_pool.POOL_ENV: "tvm"}, f"{thread_pool.POOL_ENV}=tvm"),
        ({"TVM_THREAD_POOL_SPIN_COUNT": "0"}, "TVM_THREAD_POOL_SPIN_COUNT is set"),
        ({"CC": "/nonexistent/cc", "XDG_CACHE_HOME": "{tmp}"}, "no C compiler '/nonexistent/cc'"),
    ],
    ids=["user-chose-tvm", "user-set-a-tvm-pool-knob", "no-compiler"],
)
def test_tvms_pool_runs_the_kernels_where_the_shims_is_declined(tmp_path, env, reason) -> None:
    env = {name: value.format(tmp=tmp_path) for name, value in env.items()}
    result = _probe(**env)
    assert result["ok"]
    assert result["kind"] == "tvm" and result["launches"] == 0 and result["pool_threads"] == 0
    assert reason in str(result["reason"])
