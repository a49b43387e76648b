"""Counters of the compile cache's tiers, for ``cache info`` and the pytest report's cache line.

Each process counts in memory (:func:`count`, :func:`snapshot`); at exit it adds what it counted
to ``<cache dir>/stats-v1.json`` (under a lock, so concurrent processes add up), where ``cache
info`` reads the totals and ``cache clear`` resets them. A count belongs to the cache directory
set when it was made (``COMPILE_ENGINE_COMPAT_CACHE_DIR``).

Counter names:

* ``local.hit.<kind>``, ``local.miss.<kind>``: lookups in the local directory;
* ``remote.hit.<kind>``, ``remote.miss.<kind>``: lookups in the remote tier after a local miss;
* ``remote.rejected.<reason>``: remote entries refused (see :data:`.signing.REASONS`);
* ``remote.error``, ``remote.timeout``, ``remote.skipped``: failed calls, calls past the timeout,
  lookups not made while the circuit breaker was open or the tier was off after a timeout;
* ``remote.published``, ``remote.dropped``, ``remote.store_full``: entries written, not written
  (queue full, tier off, over the size cap), refused by a full store;
* ``remote.bytes_in``, ``remote.bytes_out``: entry bytes read and written;
* ``remote.wait_us``: time the caller's threads spent waiting for the remote, in microseconds.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from compile_engine_compat.boundary import at_fork_in_child

__all__ = ["STATS_FILE", "count", "describe", "persist_all", "reset", "snapshot", "totals"]

STATS_FILE = "stats-v1.json"
_LOCK_FILE = ".stats.lock"
_CACHE_DIR_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"
_MIB = 1024 * 1024

_lock = threading.Lock()
_process: Counter[str] = Counter()
#: cache directory -> counts not yet added to its stats file.
_unsaved: dict[str, Counter[str]] = {}
_exit_registered = False


def count(name: str, amount: int = 1) -> None:
    """Add ``amount`` to the counter ``name`` (this process, and the current cache directory's)."""
    global _exit_registered
    root = os.environ.get(_CACHE_DIR_ENV, "")
    with _lock:
        _process[name] += amount
        if root:
            _unsaved.setdefault(root, Counter())[name] += amount
            if not _exit_registered:
                _exit_registered = True
                atexit.register(persist_all)


def snapshot() -> dict[str, int]:
    """Return this process's counts (since it started, or since it was forked)."""
    with _lock:
        return dict(_process)


def _after_fork_in_child() -> None:
    # A forked child starts counting from zero: its parent saves what the parent counted.
    global _lock
    _lock = threading.Lock()
    _process.clear()
    _unsaved.clear()


at_fork_in_child(_after_fork_in_child)


def persist_all() -> None:
    """Add the unsaved counts to each cache directory's stats file (at exit; never raises)."""
    with _lock:
        pending = {root: counts for root, counts in _unsaved.items() if counts}
        _unsaved.clear()
    for root, counts in pending.items():
        with contextlib.suppress(Exception):  # counters are best effort: never fail an exit
            _add(Path(root).expanduser(), counts)


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    import fcntl  # POSIX; the cache's library loading is POSIX-only too

    with open(root / _LOCK_FILE, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _add(root: Path, counts: Mapping[str, int]) -> None:
    if not root.is_dir():
        return
    with _locked(root):
        merged = Counter(totals(root))
        merged.update(counts)
        handle, staging = tempfile.mkstemp(prefix=".tmp-stats-", dir=root)
        try:
            with os.fdopen(handle, "w") as file:
                json.dump(dict(sorted(merged.items())), file, indent=1)
            os.replace(staging, root / STATS_FILE)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staging)


def totals(root: Path) -> dict[str, int]:
    """Return the counts saved in ``root``'s stats file (empty when there is none)."""
    try:
        data = json.loads((root / STATS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): int(v) for k, v in data.items() if isinstance(v, int)}


def reset(root: Path) -> None:
    """Forget ``root``'s saved counts (``cache clear``)."""
    with contextlib.suppress(FileNotFoundError):
        (root / STATS_FILE).unlink()


def _group(counts: Mapping[str, int], prefix: str) -> dict[str, int]:
    return {
        name[len(prefix) :]: value
        for name, value in sorted(counts.items())
        if name.startswith(prefix) and value
    }


def _sum(counts: Mapping[str, int], prefix: str) -> int:
    return sum(_group(counts, prefix).values())


def describe(counts: Mapping[str, int]) -> tuple[str, str]:
    """Return one line for the local tier and one for the remote tier, from ``counts``.

    Example::

        local: 50 hits, 50 misses
        remote: 48 hits, 2 misses, 1 rejected (bad-signature 1), 2.4 MiB in, 0.1 MiB out,
                2 published
    """
    local = f"local: {_sum(counts, 'local.hit.')} hits, {_sum(counts, 'local.miss.')} misses"
    rejected = _group(counts, "remote.rejected.")
    parts = [
        f"{_sum(counts, 'remote.hit.')} hits",
        f"{_sum(counts, 'remote.miss.')} misses",
        f"{sum(rejected.values())} rejected"
        + (f" ({', '.join(f'{k} {v}' for k, v in rejected.items())})" if rejected else ""),
        f"{counts.get('remote.bytes_in', 0) / _MIB:.1f} MiB in",
        f"{counts.get('remote.bytes_out', 0) / _MIB:.1f} MiB out",
        f"{counts.get('remote.published', 0)} published",
    ]
    for name, label in (
        ("remote.error", "errors"),
        ("remote.timeout", "timeouts"),
        ("remote.skipped", "skipped (breaker open)"),
        ("remote.dropped", "not published"),
        ("remote.store_full", "refused by a full store"),
    ):
        if counts.get(name):
            parts.append(f"{counts[name]} {label}")
    if counts.get("remote.wait_us"):
        parts.append(f"waited {counts['remote.wait_us'] / 1e6:.2f} s")
    return local, "remote: " + ", ".join(parts)
