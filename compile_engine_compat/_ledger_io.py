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
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: O_APPEND single writes alone
    fcntl = None  # type: ignore[assignment]

__all__ = ["LEDGER_ENV", "append_records", "flush", "install_from_env", "read_ledger"]

LEDGER_ENV = "COMPILE_ENGINE_COMPAT_LEDGER"

_lock = threading.Lock()
_written: dict[tuple[str, str, int], int] = {}
_installed = False


def _counts() -> dict[tuple[str, str, int], int]:
    from ._deprecation import ledger

    return {(e.api, e.filename, e.lineno): e.count for e in ledger()}


def _pending() -> list[dict[str, Any]]:
    """Calls counted since the last flush; marks them written."""
    records = []
    with _lock:
        for key, count in sorted(_counts().items()):
            delta = count - _written.get(key, 0)
            if delta > 0:
                api, path, line = key
                records.append(
                    {"api": api, "path": path, "line": line, "count": delta, "pid": os.getpid()}
                )
                _written[key] = count
    return records


def append_records(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Append JSON lines to ``path`` in one locked ``O_APPEND`` write.

    Parameters
    ----------
    path : str or path-like
        The ledger file; created if missing.
    records : iterable of dict
        One JSON object per line.
    """
    payload = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records).encode()
    if not payload:
        return
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(payload)
        while view:  # a regular file takes it in one go; loop for the pathological case
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)  # closing releases the flock


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
    """
    target = path if path is not None else os.environ.get(LEDGER_ENV)
    if not target:
        return 0
    records = _pending()
    append_records(target, records)
    return len(records)


def read_ledger(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Sum a ledger file's lines per ``(api, path, line)``.

    A torn last line (a process killed mid-write on a platform without ``flock``) is skipped.

    Returns
    -------
    list of dict
        ``{"api", "path", "line", "count"}``, most-called first.
    """
    totals: dict[tuple[str, str, int], int] = {}
    for text in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(text)
        except json.JSONDecodeError:
            continue
        key = (record["api"], record["path"], int(record["line"]))
        totals[key] = totals.get(key, 0) + int(record["count"])
    keys = sorted(totals, key=lambda k: (-totals[k], k[1], k[2], k[0]))
    return [{"api": a, "path": p, "line": ln, "count": totals[(a, p, ln)]} for a, p, ln in keys]


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
    multiprocessing.util.Finalize(None, flush, exitpriority=0)


def install_from_env() -> None:
    """Flush at exit when ``COMPILE_ENGINE_COMPAT_LEDGER`` is set (idempotent)."""
    global _installed
    if _installed or not os.environ.get(LEDGER_ENV):
        return
    _installed = True
    atexit.register(flush)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    import multiprocessing.util

    multiprocessing.util.register_after_fork(_token, _after_multiprocessing_fork)
    # A spawned multiprocessing child: this import runs inside it, and it exits via os._exit.
    multiprocessing.util.Finalize(None, flush, exitpriority=0)
