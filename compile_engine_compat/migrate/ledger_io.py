"""Write the call-site ledger to a JSON Lines file: ``COMPILE_ENGINE_COMPAT_LEDGER=path.jsonl``.

At process exit each process appends one line per call site it counted::

    {"api": "compile_engine.CompileEngine.jit", "path": "/abs/caller.py", "line": 12, "count": 3,
     "pid": 4242}

Several processes may write the same file at once (test runners, ``multiprocessing`` pools): each
flush is a single ``os.write`` to a file opened with ``O_APPEND``, under an exclusive ``flock``
where the platform has one, so lines never interleave. A flush writes only the calls counted since
the previous flush, and a forked child starts from what its parent had counted, so summing every
line with :func:`read_ledger` gives each call exactly once. ``multiprocessing`` children leave
through ``os._exit``, which skips ``atexit``; they flush from multiprocessing's own exit hook.

The ledger never takes its program down: the file is opened without blocking and must be a regular
file (a FIFO with no reader would otherwise hang the exit), and a failed write at exit prints one
line to stderr naming the path and the reason, leaving the exit code alone. :func:`read_ledger`
skips, and counts, every line that is not a well-formed record.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, TypeGuard

from compile_engine_compat.boundary import at_fork_in_child

try:
    import fcntl
except ImportError:  # Windows: O_APPEND single writes alone
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "LEDGER_ENV",
    "LedgerTotals",
    "append_records",
    "flush",
    "install_from_env",
    "open_regular",
    "read_ledger",
    "write_all",
]

LEDGER_ENV = "COMPILE_ENGINE_COMPAT_LEDGER"
# How long a writer waits for another process's flock before appending without it: a lock held
# forever (a stopped process, a hostile holder) must not hang the exit. O_APPEND writes of one
# buffer still land whole on local file systems; the lock only guards the pathological cases.
_LOCK_WAIT_S = 5.0
_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

_lock = threading.Lock()
_written: dict[tuple[str, str, int], int] = {}
_installed = False
# The process that last printed a write failure: the main process flushes from both atexit and
# multiprocessing's exit hook, and the second attempt fails the same way; say it once.
_reported_pid = 0


def _counts() -> dict[tuple[str, str, int], int]:
    from compile_engine_compat.deprecations import ledger

    return {(e.api, e.filename, e.lineno): e.count for e in ledger()}


def _pending() -> tuple[list[dict[str, Any]], dict[tuple[str, str, int], int]]:
    """Calls counted since the last flush, and the counts to mark written once they are on disk.

    The caller holds ``_lock``.
    """
    records = []
    counts = _counts()
    for key, count in sorted(counts.items()):
        delta = count - _written.get(key, 0)
        if delta > 0:
            api, path, line = key
            records.append(
                {"api": api, "path": path, "line": line, "count": delta, "pid": os.getpid()}
            )
    return records, counts


def _kind(mode: int) -> str:
    return next((kind for test, kind in _FILE_KINDS if test(mode)), "an unknown kind")


def open_regular(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """Open ``path`` without ever blocking, and only if it is a regular file.

    Opening a FIFO blocks until the other end opens it (forever, for a FIFO nobody reads), so the
    file is opened with ``O_NONBLOCK`` and checked with ``fstat`` before it is used.

    Parameters
    ----------
    path : str or path-like
        The file to open.
    flags : int
        ``os.open`` flags; ``O_NONBLOCK`` is added.
    mode : int, optional
        Permissions of a file that ``O_CREAT`` creates.

    Returns
    -------
    int
        An open file descriptor of a regular file; the caller closes it.

    Raises
    ------
    OSError
        The file cannot be opened, or it is not a regular file (``EINVAL``, naming its kind).
    """
    try:
        fd = os.open(path, flags | getattr(os, "O_NONBLOCK", 0), mode)
    except OSError as exc:
        # A FIFO without a reader refuses a non-blocking writer with ENXIO: say what it is.
        if exc.errno != errno.ENXIO:
            raise
        kind = _kind(os.stat(path).st_mode)
        raise OSError(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path)) from None
    try:
        st_mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(st_mode):
            kind = _kind(st_mode)
            raise OSError(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _lock_briefly(fd: int) -> None:
    """Take the exclusive flock, waiting at most ``_LOCK_WAIT_S`` (then append without it)."""
    if fcntl is None:
        return
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.005)
        except OSError:  # a file system without flock: O_APPEND alone
            return


def append_records(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Append JSON lines to ``path`` in one locked ``O_APPEND`` write.

    Parameters
    ----------
    path : str or path-like
        The ledger file; created if missing. It must be a regular file: opening never blocks.
    records : iterable of dict
        One JSON object per line.

    Raises
    ------
    OSError
        The file cannot be opened or written, or it is not a regular file.
    """
    payload = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
    if not payload:
        return
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0))
    try:
        _lock_briefly(fd)
        write_all(fd, payload, path)
    finally:
        os.close(fd)  # closing releases the flock


def write_all(fd: int, data: bytes, path: str | os.PathLike[str]) -> None:
    """Write all of ``data`` to ``fd``; a regular file takes it in one go.

    Parameters
    ----------
    fd : int
        An open, writable file descriptor.
    data : bytes
        What to write.
    path : str or path-like
        The file's name, for the error.

    Raises
    ------
    OSError
        The write failed, or the file took no bytes at all (``ENOSPC``), which would otherwise
        loop forever.
    """
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(path))
        view = view[written:]


def flush(path: str | os.PathLike[str] | None = None) -> int:
    """Append the calls counted since the last flush.

    Parameters
    ----------
    path : str or path-like, optional
        Defaults to ``$COMPILE_ENGINE_COMPAT_LEDGER``; nothing happens if neither is set.

    Returns
    -------
    int
        The number of lines written.

    Raises
    ------
    OSError
        The ledger could not be written; those calls stay pending for the next flush.
    """
    target = path if path is not None else os.environ.get(LEDGER_ENV)
    if not target:
        return 0
    with _lock:  # one flusher at a time, so no delta is written twice
        records, counts = _pending()
        append_records(target, records)
        _written.update(counts)  # only once they are on disk
    return len(records)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _flush_at_exit() -> None:
    """:func:`flush` for ``atexit`` and multiprocessing: a failure is one line, never a raise.

    An exception escaping an exit hook prints a traceback (several lines, in every worker of a
    pool); the program's exit code does not depend on the ledger either way.
    """
    global _reported_pid
    target = os.environ.get(LEDGER_ENV)
    try:
        flush(target)
    except Exception as exc:
        if _reported_pid == os.getpid():
            return
        _reported_pid = os.getpid()
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        # repr keeps a hostile path (a newline in it) on one line.
        line = f"compile-engine-compat: ledger {target!r} not written: {_one_line(reason)}"
        try:
            print(line, file=sys.stderr, flush=True)
        except Exception:  # stderr closed or gone at exit: nothing more to do
            pass


class LedgerTotals(list[dict[str, Any]]):
    """What :func:`read_ledger` returns: the summed sites, most-called first.

    Attributes
    ----------
    skipped : int
        Lines left out because they were not well-formed records (torn, not JSON, not UTF-8,
        not an object, a missing key, a non-integer ``line`` or ``count``). Non-zero means the
        totals may be short.
    """

    skipped: int = 0


def _is_count(value: object) -> TypeGuard[int]:
    # bool is an int subclass; JSON true is not a line number.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _record_key(raw: bytes) -> tuple[tuple[str, str, int], int] | None:
    """``((api, path, line), count)`` of one ledger line, or None when it is malformed."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested past the C stack guard
        return None
    if not isinstance(record, dict):
        return None
    api, path, line, count = (record.get(k) for k in ("api", "path", "line", "count"))
    if not (isinstance(api, str) and isinstance(path, str)):
        return None
    if not (_is_count(line) and _is_count(count)):
        return None
    return (api, path, line), count


def read_ledger(path: str | os.PathLike[str]) -> LedgerTotals:
    """Sum a ledger file's lines per ``(api, path, line)``.

    Malformed lines are skipped and counted in the result's ``skipped``: a torn last line (a
    process killed mid-write on a platform without ``flock``, or a full disk), and any line that
    is not a record as :func:`flush` writes it. One bad line never hides the others.

    Parameters
    ----------
    path : str or path-like
        The ledger file. It must be a regular file; opening it never blocks.

    Returns
    -------
    LedgerTotals
        A list of ``{"api", "path", "line", "count"}``, most-called first, with ``skipped``.

    Raises
    ------
    OSError
        The file cannot be read, or it is not a regular file.
    """
    fd = open_regular(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read()
    totals: dict[tuple[str, str, int], int] = {}
    skipped = 0
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        parsed = _record_key(raw)
        if parsed is None:
            skipped += 1
            continue
        key, count = parsed
        totals[key] = totals.get(key, 0) + count
    keys = sorted(totals, key=lambda k: (-totals[k], k[1], k[2], k[0]))
    result = LedgerTotals(
        {"api": a, "path": p, "line": ln, "count": totals[(a, p, ln)]} for a, p, ln in keys
    )
    result.skipped = skipped
    return result


class _ForkToken:
    """A weak-referenceable object for ``multiprocessing.util.register_after_fork``."""


_token = _ForkToken()


def _after_fork_in_child() -> None:
    # The parent flushes what it had counted; the child writes only its own calls.
    global _written, _lock
    _lock = threading.Lock()
    _written = _counts()


def _after_multiprocessing_fork(_: object) -> None:
    import multiprocessing.util

    # Runs after multiprocessing clears the inherited finalizers in the child.
    multiprocessing.util.Finalize(None, _flush_at_exit, exitpriority=0)


def install_from_env() -> None:
    """Flush at exit when ``COMPILE_ENGINE_COMPAT_LEDGER`` is set (idempotent)."""
    global _installed
    if _installed or not os.environ.get(LEDGER_ENV):
        return
    _installed = True
    atexit.register(_flush_at_exit)
    at_fork_in_child(_after_fork_in_child)
    import multiprocessing.util

    multiprocessing.util.register_after_fork(_token, _after_multiprocessing_fork)
    # A spawned multiprocessing child: this import runs inside it, and it exits via os._exit.
    multiprocessing.util.Finalize(None, _flush_at_exit, exitpriority=0)
