"""COMPILE_ENGINE_COMPAT_LEDGER: the ledger appended at exit, exact across threads and processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from compile_engine_compat import _ledger_io
from compile_engine_compat._deprecation import warn_legacy


def _calls(n: int) -> None:
    for _ in range(n):
        warn_legacy("compile_engine.get")


def test_flush_writes_only_new_calls(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _ledger_io.flush(path)  # whatever earlier tests counted
    path.unlink(missing_ok=True)
    _calls(3)
    assert _ledger_io.flush(path) == 1
    assert _ledger_io.flush(path) == 0  # nothing new
    _calls(2)
    _ledger_io.flush(path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["count"] for r in records] == [3, 2]
    assert {r["api"] for r in records} == {"compile_engine.get"}
    assert records[0]["path"] == __file__ and records[0]["pid"] == os.getpid()
    (total,) = _ledger_io.read_ledger(path)
    assert total["count"] == 5 and total["line"] == records[0]["line"]


def test_read_ledger_skips_a_torn_line(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _ledger_io.append_records(path, [{"api": "a", "path": "f.py", "line": 1, "count": 2}])
    with open(path, "a") as handle:
        handle.write('{"api": "a", "pa')
    assert _ledger_io.read_ledger(path) == [{"api": "a", "path": "f.py", "line": 1, "count": 2}]


def test_no_env_no_file(tmp_path, monkeypatch):
    monkeypatch.delenv(_ledger_io.LEDGER_ENV, raising=False)
    assert _ledger_io.flush() == 0


_PROGRAM = textwrap.dedent(
    """
    import multiprocessing, os, sys, threading, warnings
    from compile_engine_compat._deprecation import warn_legacy

    def work(n):
        for _ in range(n):
            warn_legacy("compile_engine.CompileEngine.jit")
        return n

    if __name__ == "__main__":
        warnings.simplefilter("ignore")
        work(3)
        threads = [threading.Thread(target=work, args=(50,)) for _ in range(4)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        for method in ("fork", "spawn"):
            pool = multiprocessing.get_context(method).Pool(3)
            assert sum(pool.map(work, [40] * 6)) == 240
            pool.close()
            pool.join()
        pid = os.fork()
        if pid == 0:
            work(11)
            sys.exit(0)
        os.waitpid(pid, 0)
    """
)


def test_processes_threads_pools_and_forks_sum_exactly(tmp_path):
    """Several processes append to one file at once; every call is counted exactly once."""
    script = tmp_path / "program.py"
    script.write_text(_PROGRAM)
    ledger = tmp_path / "ledger.jsonl"
    env = {**os.environ, _ledger_io.LEDGER_ENV: str(ledger)}
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=120)
    lines = ledger.read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # no interleaved writes
    assert len({json.loads(line)["pid"] for line in lines}) >= 3
    (total,) = _ledger_io.read_ledger(ledger)
    assert total["count"] == 3 + 4 * 50 + 240 + 240 + 11
    assert total["api"] == "compile_engine.CompileEngine.jit"
