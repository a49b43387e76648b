"""COMPILE_ENGINE_COMPAT_LEDGER: the ledger appended at exit, exact across threads and processes."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest

from compile_engine_compat.deprecations import warn_legacy
from compile_engine_compat.migrate import ledger_io as _ledger_io


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
    from compile_engine_compat.deprecations import warn_legacy

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


# -- malformed records, special files, write failures at exit (issue 17, item 5) ----------------

_GOOD = {"api": "a", "path": "f.py", "line": 1, "count": 2}
_MALFORMED = {
    "a JSON list": b"[1, 2]",
    "a JSON string": b'"text"',
    "a JSON number": b"7",
    "an empty object": b"{}",
    "a missing count": b'{"api": "a", "path": "f.py", "line": 1}',
    "a string line": b'{"api": "a", "path": "f.py", "line": "x", "count": 1}',
    "a numeric-string count": b'{"api": "a", "path": "f.py", "line": 1, "count": "2"}',
    "a float line": b'{"api": "a", "path": "f.py", "line": 1.5, "count": 1}',
    "a boolean count": b'{"api": "a", "path": "f.py", "line": 1, "count": true}',
    "a null count": b'{"api": "a", "path": "f.py", "line": 1, "count": null}',
    "a NaN count": b'{"api": "a", "path": "f.py", "line": 1, "count": NaN}',
    "a negative count": b'{"api": "a", "path": "f.py", "line": 1, "count": -5}',
    "a non-string api": b'{"api": 3, "path": "f.py", "line": 1, "count": 1}',
    "non-UTF-8 bytes": b'{"api": "\xff\xfe", "path": "f.py", "line": 1, "count": 1}',
    "UTF-16": '{"api": "a", "path": "f.py", "line": 1, "count": 1}'.encode("utf-16"),
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("line", list(_MALFORMED.values()), ids=list(_MALFORMED))
def test_read_ledger_skips_and_counts_a_malformed_record(tmp_path, line):
    path = tmp_path / "ledger.jsonl"
    _ledger_io.append_records(path, [_GOOD])
    with open(path, "ab") as handle:
        handle.write(line + b"\n")
    _ledger_io.append_records(path, [_GOOD])
    totals = _ledger_io.read_ledger(path)
    assert totals == [{**_GOOD, "count": 4}]
    assert totals.skipped == 1


def test_read_ledger_counts_a_torn_line_as_skipped(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b'{"api": "a", "path": "f.py", "line": 1, "count": 2}\n\n{"api": "a", "pa')
    totals = _ledger_io.read_ledger(path)
    assert totals == [_GOOD] and totals.skipped == 1


def test_read_ledger_of_a_clean_file_skips_nothing(tmp_path):
    path = tmp_path / "ledger.jsonl"
    _ledger_io.append_records(path, [_GOOD, {**_GOOD, "line": 2}])
    assert _ledger_io.read_ledger(path).skipped == 0


def test_special_files_are_refused_without_blocking(tmp_path):
    """Reading or appending to a FIFO nobody has open would block forever: refuse it instead."""
    fifo = tmp_path / "ledger.fifo"
    os.mkfifo(fifo)
    code = textwrap.dedent(
        f"""
        from compile_engine_compat.migrate import ledger_io as _ledger_io
        for action in (_ledger_io.read_ledger, lambda p: _ledger_io.append_records(p, [{{}}])):
            for target in ({str(fifo)!r}, {str(tmp_path)!r}, "/dev/null"):
                try:
                    action(target)
                except OSError as exc:
                    print(exc)
                else:
                    print("accepted", target)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 6 and not any(line.startswith("accepted") for line in lines), lines
    assert lines[0] == f"[Errno 22] not a regular file (a FIFO): {str(fifo)!r}"
    assert "not a regular file (a directory)" in lines[1]
    assert "not a regular file (a character device)" in lines[2]
    assert "not a regular file (a FIFO)" in lines[3]  # a writer is refused by ENXIO, then named


def _without_dac_override() -> None:
    """Make permission bits bind a root child: drop CAP_DAC_OVERRIDE/READ_SEARCH before exec.

    An execve by uid 0 gets the bounding set as its capabilities, so dropping the two from it
    (``prctl(PR_CAPBSET_DROP)``) leaves the child root, able to run the interpreter under /root,
    but subject to file modes like any other user.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _write_failure_cases(tmp_path):
    readonly = tmp_path / "readonly.jsonl"
    readonly.write_text("")
    readonly.chmod(0o444)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    return {
        "missing directory": (tmp_path / "missing" / "l.jsonl", "No such file or directory"),
        "a directory": (tmp_path, "Is a directory"),
        "/dev/full": ("/dev/full", "not a regular file (a character device)"),
        "a FIFO with no reader": (fifo, "not a regular file (a FIFO)"),
        "a read-only file": (readonly, "Permission denied"),
        "EACCES directory": (locked / "l.jsonl", "Permission denied"),
        "file size limit": (tmp_path / "big.jsonl", "File too large"),
    }


_EXIT_PROGRAM = """
import resource, sys
if sys.argv[1] == "file size limit":  # a full disk or quota: the write itself fails
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
from compile_engine_compat.deprecations import warn_legacy
warn_legacy("compile_engine.get")
sys.exit(3)
"""


@pytest.mark.parametrize(
    "case",
    [
        "missing directory",
        "a directory",
        "/dev/full",
        "a FIFO with no reader",
        "a read-only file",
        "EACCES directory",
        "file size limit",
    ],
)
def test_a_failed_write_at_exit_is_one_line_and_keeps_the_exit_code(tmp_path, case):
    target, reason = _write_failure_cases(tmp_path)[case]
    env = {**os.environ, _ledger_io.LEDGER_ENV: str(target), "COMPILE_ENGINE_COMPAT_WARN": "off"}
    drop = os.geteuid() == 0 and case in ("a read-only file", "EACCES directory")
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_PROGRAM, case],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        preexec_fn=_without_dac_override if drop else None,
    )
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [
        f"compile-engine-compat: ledger {str(target)!r} not written: {reason}"
    ]


def test_a_failed_flush_keeps_its_calls_for_the_next_one(tmp_path):
    good = tmp_path / "ledger.jsonl"
    _ledger_io.flush(good)  # whatever earlier tests counted
    good.unlink(missing_ok=True)
    _calls(2)
    with pytest.raises(OSError, match="No such file"):
        _ledger_io.flush(tmp_path / "missing" / "ledger.jsonl")
    assert _ledger_io.flush(good) == 1
    assert _ledger_io.read_ledger(good)[0]["count"] == 2


def test_a_lock_held_forever_does_not_hang_the_writer(tmp_path, monkeypatch):
    fcntl = pytest.importorskip("fcntl")
    monkeypatch.setattr(_ledger_io, "_LOCK_WAIT_S", 0.2)
    path = tmp_path / "ledger.jsonl"
    path.write_text("")
    with open(path) as holder:  # flock is per open file: this conflicts in-process too
        fcntl.flock(holder, fcntl.LOCK_EX)
        _ledger_io.append_records(path, [_GOOD])
    assert _ledger_io.read_ledger(path) == [_GOOD]
