"""The cache's writer thread: stores run off the caller's thread, in order, waited for by key and
at exit, and a failing store neither stops the writer nor reaches the caller."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from compile_engine_compat.cache import store_behind

ROOT = Path(__file__).resolve().parents[2]


def test_stores_run_in_order_on_another_thread_and_wait_is_per_key():
    gate = threading.Event()
    ran: list[tuple[str, str]] = []

    def write(name: str) -> None:
        if name == "a":
            gate.wait(10)
        ran.append((name, threading.current_thread().name))

    store_behind.submit("a", lambda: write("a"))
    store_behind.submit("b", lambda: write("b"))
    assert store_behind.pending() == 2
    assert not store_behind.wait("b", timeout_s=0.05)  # queued behind "a"
    assert store_behind.wait("c", timeout_s=0)  # nothing of it pending
    gate.set()
    assert store_behind.wait("b", timeout_s=10)
    assert [name for name, _ in ran] == ["a", "b"]
    assert {thread for _, thread in ran} == {"compile-cache-store-behind"}
    assert store_behind.flush(10) and store_behind.pending() == 0


def test_a_failing_store_leaves_the_writer_running():
    done = threading.Event()

    def fail() -> None:
        raise OSError("disk full")

    store_behind.submit("bad", fail)
    store_behind.submit("good", done.set)
    assert store_behind.flush(10)
    assert done.is_set()


EXITING = """
import sys, time
from compile_engine_compat.cache import store_behind
def write():
    time.sleep(0.5)
    open(sys.argv[1], "w").write("stored")
store_behind.submit("k", write)
"""


def test_the_process_waits_at_exit_for_what_is_queued(tmp_path):
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", EXITING, str(out)], env=env, check=True, timeout=60)
    assert out.read_text() == "stored"


def test_a_forked_child_starts_with_nothing_pending():
    gate = threading.Event()
    store_behind.submit("held", lambda: gate.wait(10))
    try:
        pid = os.fork()
        if pid == 0:  # the child: the parent's store is not its own to wait for
            os._exit(0 if store_behind.pending() == 0 and store_behind.flush(1) else 1)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        gate.set()
    assert store_behind.flush(10)
