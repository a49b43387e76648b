"""Stores off the caller's thread: a whole-module build returns while its library is written.

Exporting a model's library for the cache (its kernels printed as assembly, the constants
packed, the system compiler's link, a checksum) took about as long as the build itself for
ResNet-18 (``bench/RESULTS.md``). ``relay.build`` runs the executable it built and hands the
export to one writer thread here, so a build with the cache on costs what a build with it off
does. The writer is this process's only one: stores run one at a time, in the order submitted.

Nothing is lost or half-seen: an entry appears whole (the cache writes it beside and renames it
in, :mod:`.disk`); a build of the same key in this process waits for the pending store and then
loads it (:func:`wait`); the process waits at exit for what is queued (:func:`flush`), as the
remote tier's writer does. A forked child starts with no writer and nothing pending: the
parent's thread does not exist there, and the parent writes its entries itself.
"""

from __future__ import annotations

import atexit
import threading
from collections import deque
from collections.abc import Callable

from compile_engine_compat.boundary import at_fork_in_child

__all__ = ["flush", "pending", "submit", "wait"]

_lock = threading.Condition()
_queue: deque[tuple[str, Callable[[], object]]] = deque()
_pending: dict[str, int] = {}  # key -> stores of it queued or running
_writer: threading.Thread | None = None
_wired = False


def submit(key: str, write: Callable[[], object]) -> None:
    """Run ``write()`` on the writer thread; ``key`` names what it stores (for :func:`wait`).

    ``write`` reports its own failures (a failed store is a warning, never an error: see
    :func:`.disk.store_quietly`); an exception it lets out is dropped with the store.
    """
    global _writer
    with _lock:
        _wire()
        _queue.append((key, write))
        _pending[key] = _pending.get(key, 0) + 1
        if _writer is None or not _writer.is_alive():
            _writer = threading.Thread(
                target=_write_forever, name="compile-cache-store-behind", daemon=True
            )
            _writer.start()
        _lock.notify_all()


def pending() -> int:
    """How many stores are queued or running."""
    with _lock:
        return sum(_pending.values())


def wait(key: str, timeout_s: float | None = None) -> bool:
    """Wait until no store of ``key`` is queued or running; False if ``timeout_s`` ran out."""
    with _lock:
        return _lock.wait_for(lambda: key not in _pending, timeout_s)


def flush(timeout_s: float | None = None) -> bool:
    """Wait until every submitted store has ended; False if ``timeout_s`` ran out."""
    with _lock:
        return _lock.wait_for(lambda: not _pending, timeout_s)


def _write_forever() -> None:
    while True:
        with _lock:
            _lock.wait_for(lambda: bool(_queue))
            key, write = _queue.popleft()
        try:
            write()
        except Exception:  # the write warns itself; the thread must go on
            pass
        finally:
            with _lock:
                left = _pending[key] - 1
                if left:
                    _pending[key] = left
                else:
                    del _pending[key]
                _lock.notify_all()


def _wire() -> None:
    """On the first store: wait at exit for what is queued, and start over in a forked child."""
    global _wired
    if not _wired:
        _wired = True
        atexit.register(flush)
        at_fork_in_child(_forget_after_fork)


def _forget_after_fork() -> None:
    global _lock, _writer
    _lock = threading.Condition()
    _queue.clear()
    _pending.clear()
    _writer = None
