"""The remote tier of the compile cache: a store shared by a fleet, behind the local directory.

Opt-in: set ``COMPILE_ENGINE_COMPAT_REMOTE_CACHE`` to ``redis://host:port/db`` or an fsspec URL
(``s3://bucket/prefix``, ``gs://bucket/prefix``, ``file:///mnt/shared/cache``; see
:mod:`.backends`), and the fleet's signing key (:mod:`.signing`). The local tier
(:mod:`.disk`, ``COMPILE_ENGINE_COMPAT_CACHE_DIR``) must be on: it calls this one.

* Read-through: a local miss asks the remote (:meth:`RemoteTier.fetch`); an entry that passes
  every check is stored locally, then loaded from there like any local entry.
* Write-behind: a local store hands the entry to :meth:`RemoteTier.publish`; one writer thread
  signs and uploads it, off the caller's thread, from a bounded queue (full: the entry is not
  published, counted). At exit the queue gets :data:`FLUSH_ENV` seconds (default 10) to drain.
* Never a stall: every call runs under a deadline (:data:`TIMEOUT_ENV`, default 2 s for a whole
  lookup, plus 0.25 s per MiB the store announces, for reads as for writes: :mod:`.bounds`), in
  a thread of its own, so that no store or client can hold the caller longer. A call past its
  deadline turns the tier off for the rest of the process: a hung server costs the timeout once,
  and the reader stops with its deadline (:mod:`.resp`). A reply announced over the size cap is
  refused unread (``too-large``). Other errors are misses; after :data:`BREAKER_ERRORS` in a
  row the circuit breaker stops asking for :data:`BREAKER_COOLDOWN_S` seconds, then tries one
  call again.
* Never a failure: the tier returns an artifact or None, and warns (:class:`RemoteCacheWarning`)
  once per kind of trouble per process; ``cache info`` counts the rest (:mod:`.stats`).
* Never an unsigned load: without a key the tier stays off and says why once; an entry that
  fails any check of :func:`.signing.open_entry` is refused, counted by reason, and the kernel
  is compiled. ``COMPILE_ENGINE_COMPAT_REMOTE_CACHE_MODE=read-only`` (verify-only) runners
  read and verify, and never write.
"""

from __future__ import annotations

import atexit
import math
import os
import queue
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import tvm

from compile_engine_compat.boundary import at_fork_in_child
from compile_engine_compat.cache import stats, store_behind
from compile_engine_compat.cache.artifact import Artifact, ArtifactKey, RemoteCacheWarning
from compile_engine_compat.cache.backends import (
    Backend,
    StoreFullError,
    display_url,
    open_backend,
)
from compile_engine_compat.cache.bounds import MIB, Deadline, OversizedReply
from compile_engine_compat.cache.signing import (
    KeyProblem,
    Rejected,
    SigningKey,
    key_from_environment,
    open_entry,
    seal,
)
from compile_engine_compat.version import __version__

__all__ = [
    "BREAKER_COOLDOWN_S",
    "BREAKER_ERRORS",
    "ENTRY_MB_ENV",
    "FLUSH_ENV",
    "MODE_ENV",
    "QUEUE_ENV",
    "REMOTE_ENV",
    "TIMEOUT_ENV",
    "TTL_DAYS_ENV",
    "Deadline",
    "RemoteTier",
    "Settings",
    "configured",
    "flush",
    "off_reason",
    "tier",
]

REMOTE_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE"
MODE_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_MODE"
TIMEOUT_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_TIMEOUT_S"
ENTRY_MB_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_ENTRY_MB"
TTL_DAYS_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_TTL_DAYS"
QUEUE_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_QUEUE"
FLUSH_ENV = "COMPILE_ENGINE_COMPAT_REMOTE_CACHE_FLUSH_S"
_KEY_ENVS = ("COMPILE_ENGINE_COMPAT_CACHE_KEY", "COMPILE_ENGINE_COMPAT_CACHE_KEY_FILE")
_CACHE_DIR_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"
_ENVS = (REMOTE_ENV, MODE_ENV, TIMEOUT_ENV, ENTRY_MB_ENV, TTL_DAYS_ENV, QUEUE_ENV, FLUSH_ENV)

#: Errors in a row (not timeouts: one of those turns the tier off) that open the breaker.
BREAKER_ERRORS = 3
#: How long an open breaker stops asking before it tries one call again.
BREAKER_COOLDOWN_S = 60.0
_CLIENT_TIMEOUT_MARGIN_S = 1.0
_MODES = {"read-write": "read-write", "read-only": "read-only", "verify-only": "read-only"}
_T = TypeVar("_T")


@dataclass(frozen=True)
class Settings:
    """The remote tier's settings, read from the environment.

    Attributes
    ----------
    url : str
        ``COMPILE_ENGINE_COMPAT_REMOTE_CACHE``.
    mode : str
        ``"read-write"`` (default) or ``"read-only"`` (``..._MODE=read-only`` or ``verify-only``).
    timeout_s : float
        Total time one lookup may wait (``..._TIMEOUT_S``, default 2).
    max_entry_bytes : int
        Size cap of one entry (``..._ENTRY_MB``, default 256): larger ones are neither written
        nor read.
    ttl_s : int or None
        Expiry set on each entry written to Redis (``..._TTL_DAYS``; default none: the server's
        ``maxmemory-policy`` evicts).
    queue_size : int
        Entries waiting to be published at most (``..._QUEUE``, default 256).
    flush_s : float
        How long the exit waits for the queue to drain (``..._FLUSH_S``, default 10).
    """

    url: str
    mode: str = "read-write"
    timeout_s: float = 2.0
    max_entry_bytes: int = 256 * MIB
    ttl_s: int | None = None
    queue_size: int = 256
    flush_s: float = 10.0

    @property
    def writes(self) -> bool:
        """Return True when this runner publishes entries (not read-only)."""
        return self.mode == "read-write"


class _TimedOut(TimeoutError):
    pass


class RemoteTier:
    """One remote store, its key and settings, its circuit breaker and its writer thread.

    Parameters
    ----------
    settings : Settings
    key : SigningKey
    backend : Backend
    """

    def __init__(self, settings: Settings, key: SigningKey, backend: Backend) -> None:
        self.settings = settings
        self.key = key
        self.backend = backend
        self.url = display_url(settings.url)
        #: Where this shim's entries live in the store: other TVM or shim versions never meet.
        self.namespace = f"tvm-{tvm.__version__}_shim-{__version__}"
        self._lock = threading.Lock()
        self._errors_in_row = 0
        self._breaker_until = 0.0
        self._off: str | None = None  # set after a timeout: the rest of the process asks nothing
        self._publishing_off: str | None = None  # set when the store is full
        self._warned: set[str] = set()
        self._queue: queue.Queue[Callable[[], Artifact | None] | None] = queue.Queue(
            settings.queue_size
        )
        self._writer: threading.Thread | None = None
        self._retired = False  # replaced by another tier: publish what is queued, then stop

    # -- names --------------------------------------------------------------------------------

    def name_of(self, kind: str, digest: str) -> str:
        """Return the store's name for the entry ``kind``/``digest`` of this shim and TVM."""
        return f"{self.namespace}/{kind}/{digest}"

    def deadline(self) -> Deadline:
        """Return a new lookup deadline (the configured timeout from now)."""
        return Deadline(self.settings.timeout_s)

    # -- read-through -------------------------------------------------------------------------

    def fetch(self, key: ArtifactKey, deadline: Deadline | None = None) -> Artifact | None:
        """Return ``key``'s artifact from the store once verified, else None (never raises).

        None on a miss, on a refused entry (counted, warned about once), on any error or
        timeout (a miss plus one warning), and while the breaker is open.
        """
        if not self._may_ask():
            stats.count("remote.skipped")
            return None
        limit = self.settings.max_entry_bytes
        name = self.name_of(key.kind, key.digest)
        deadline = deadline or self.deadline()
        blob = self._guarded(
            lambda: _announced(lambda: self.backend.get(name, limit, deadline)),
            deadline,
            "read",
            on_caller=True,
        )
        if blob is _FAILED:
            return None
        if isinstance(blob, OversizedReply):  # refused as announced: nothing of it was read
            self.reject("too-large", f"{name}: {blob}")
            return None
        if blob is None:
            stats.count(f"remote.miss.{key.kind}")
            return None
        stats.count("remote.bytes_in", len(blob))
        try:
            artifact = open_entry(blob, self.key, key, limit)
        except Rejected as rejected:
            self.reject(rejected.reason, f"{name}: {rejected.detail}")
            return None
        except Exception as err:  # open_entry refuses by reason; anything else is a refusal too
            self.reject("corrupt", f"{name}: unreadable ({type(err).__name__}: {err!s:.100})")
            return None
        stats.count(f"remote.hit.{key.kind}")
        return artifact

    def reject(self, reason: str, detail: str) -> None:
        """Count a refused entry under ``reason``; warn about the first of each reason."""
        stats.count(f"remote.rejected.{reason}")
        self._warn_once(
            f"rejected:{reason}",
            f"refused an entry ({reason}: {detail}); it is never loaded: compiling instead. "
            f"Further {reason} entries are counted, not warned about (cache info)",
        )

    # -- write-behind -------------------------------------------------------------------------

    def publish(self, make: Callable[[], Artifact | None]) -> None:
        """Queue ``make`` (run on the writer thread: it returns the artifact, or None to skip).

        A no-op on read-only runners; never blocks: with the queue full the entry is dropped.
        """
        if not self.settings.writes:
            return
        if self._off or self._publishing_off or self._retired:
            stats.count("remote.dropped")
            return
        self._start_writer()
        try:
            self._queue.put_nowait(make)
        except queue.Full:
            stats.count("remote.dropped")
            self._warn_once(
                "queue-full",
                f"{self.settings.queue_size} entries wait to be published already; the newest "
                f"are not ({QUEUE_ENV} sets the queue's length)",
            )

    def flush(self, timeout_s: float) -> bool:
        """Wait until the queue is published, at most ``timeout_s``; True when it is.

        Returns at once when the tier is off: a writer stuck on a hung server is not waited for.
        """
        end = time.monotonic() + timeout_s
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = end - time.monotonic()
                if left <= 0 or self._off:
                    return False
                self._queue.all_tasks_done.wait(min(left, 0.05))
        return True

    def retire(self) -> None:
        """Stop the writer thread once it has published what is queued (the tier was replaced).

        Never blocks: with the queue full, the writer stops after the entry that empties it.
        """
        with self._lock:
            self._retired = True
            running = self._writer is not None
        if running:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                pass

    def _start_writer(self) -> None:
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_forever, name="compile-cache-publisher", daemon=True
                )
                self._writer.start()

    def _write_forever(self) -> None:
        while True:
            make = self._queue.get()
            try:
                if make is not None:
                    self._write(make)
            except Exception as err:  # reading the local entry failed: never end the writer
                stats.count("remote.dropped")
                self._warn_once("publish-bug", f"an entry was not published ({err!r})")
            finally:
                self._queue.task_done()
            if self._retired and (make is None or self._queue.empty()):
                return

    def _write(self, make: Callable[[], Artifact | None]) -> None:
        if self._off or self._publishing_off:
            stats.count("remote.dropped")
            return
        artifact = make()
        if artifact is None:  # evicted or replaced locally meanwhile: nothing to publish
            return
        blob = seal(artifact, self.key)
        if len(blob) > self.settings.max_entry_bytes:
            stats.count("remote.dropped")
            self._warn_once(
                "too-large",
                f"a {artifact.key.kind} entry of {len(blob) / MIB:.1f} MiB is over the cap of "
                f"{self.settings.max_entry_bytes / MIB:.0f} MiB ({ENTRY_MB_ENV}); not published",
            )
            return
        name = self.name_of(artifact.key.kind, artifact.key.digest)
        deadline = self.deadline()
        deadline.extend_for(len(blob))  # as a read's grows with the size the store announces
        written = self._guarded(
            lambda: self.backend.put(name, blob, self.settings.ttl_s), deadline, "write"
        )
        if written is True:
            stats.count("remote.published")
            stats.count("remote.bytes_out", len(blob))

    # -- deadlines, errors, the breaker -------------------------------------------------------

    def call(self, call: Callable[[], _T], seconds: float | Deadline) -> _T:
        """Run ``call`` on the store under a deadline, for whole-store jobs (``cache push``).

        Raises
        ------
        TimeoutError
            When it has not returned within ``seconds`` (or by the deadline, extended as the
            call extends it); its errors propagate.
        """
        return _bounded(call, seconds if isinstance(seconds, Deadline) else Deadline(seconds))

    def _may_ask(self) -> bool:
        with self._lock:
            return self._off is None and time.monotonic() >= self._breaker_until

    def _guarded(
        self, call: Callable[[], Any], deadline: Deadline, what: str, on_caller: bool = False
    ) -> Any:
        """Run ``call`` by ``deadline``; return its value, or ``_FAILED`` after a failure."""
        started = time.perf_counter()
        try:
            value = _bounded(call, deadline)
        except _TimedOut:
            self._timed_out(what, deadline.seconds())
            return _FAILED
        except StoreFullError as err:
            self._store_full(err)
            return _FAILED
        except Exception as err:  # the store's own errors: a miss, never the caller's failure
            self._failed(what, err)
            return _FAILED
        finally:
            if on_caller:
                stats.count("remote.wait_us", int((time.perf_counter() - started) * 1e6))
        with self._lock:
            self._errors_in_row = 0
            self._breaker_until = 0.0
        return value

    def _timed_out(self, what: str, seconds: float) -> None:
        stats.count("remote.timeout")
        with self._lock:
            self._off = f"a {what} got no answer within {seconds:.1f} s"
        try:  # the tier is off: stop whatever call is still reading, on any thread
            self.backend.abort()
        except Exception as err:  # closing is best effort; the tier is off either way
            stats.count("remote.error")
            self._warn_once("abort", f"closing the store's connections failed ({err!r})")
        self._warn_once(
            "timeout",
            f"a {what} got no answer within {seconds:.1f} s; the remote cache is off for the "
            f"rest of this process (compiling here; {TIMEOUT_ENV} sets the timeout)",
        )

    def _failed(self, what: str, err: Exception) -> None:
        stats.count("remote.error")
        with self._lock:
            self._errors_in_row += 1
            opened = self._errors_in_row >= BREAKER_ERRORS
            if opened:
                self._breaker_until = time.monotonic() + BREAKER_COOLDOWN_S
        self._warn_once(
            "error",
            f"a {what} failed ({type(err).__name__}: {_first_line(err)}); a miss, compiling "
            "here. Further errors are counted, not warned about (cache info)",
        )
        if opened:
            self._warn_once(
                "breaker",
                f"{BREAKER_ERRORS} errors in a row: not asking for {BREAKER_COOLDOWN_S:.0f} s",
            )

    def _store_full(self, err: Exception) -> None:
        stats.count("remote.store_full")
        with self._lock:
            self._publishing_off = str(err)
        self._warn_once(
            "store-full",
            f"the store is full ({_first_line(err)}); this process publishes nothing more but "
            "still reads. Let the store evict (Redis: maxmemory-policy allkeys-lru)",
        )

    def _warn_once(self, what: str, message: str) -> None:
        with self._lock:
            if what in self._warned:
                return
            self._warned.add(what)
        warnings.warn(f"remote compile cache {self.url}: {message}", RemoteCacheWarning, 4)

    def status(self) -> str:
        """Say in a few words whether the tier is asking: ``on``, ``off (why)``, ``paused``."""
        with self._lock:
            if self._off:
                return f"off for this process ({self._off})"
            if time.monotonic() < self._breaker_until:
                return "paused by the circuit breaker"
            if self._publishing_off:
                return "reading only (the store is full)"
        return "on" if self.settings.writes else "on, read-only (verify-only)"


_FAILED: Any = object()
#: How often a waiting caller looks again at a deadline that its call may have extended.
_POLL_S = 0.1


def _bounded(call: Callable[[], _T], deadline: Deadline) -> _T:
    """Run ``call`` in a daemon thread; raise ``_TimedOut`` when it has not returned in time.

    The deadline may grow while the call runs (a read told the size of its reply). Past it, the
    deadline is expired for good: a call that reads (:mod:`.resp`) stops at its next chunk and
    drops its buffer; one stuck in a client's own call ends with the client's timeout. A daemon,
    the thread never holds the process at exit.
    """
    if deadline.left() <= 0:
        raise _TimedOut
    done = threading.Event()
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as err:
            outcome.append((False, err))
        finally:
            done.set()

    threading.Thread(target=run, name="compile-cache-remote-call", daemon=True).start()
    while not done.wait(min(deadline.left(), _POLL_S)):
        if deadline.left() <= 0 and not done.is_set():
            deadline.expire()
            raise _TimedOut
    ok, value = outcome.pop()
    if ok:
        return value
    raise value


def _announced(read: Callable[[], bytes | None]) -> bytes | OversizedReply | None:
    """Run ``read``; an entry announced over the cap is returned as a refusal, not raised."""
    try:
        return read()
    except OversizedReply as refused:
        return refused


def _first_line(err: Exception) -> str:
    return (str(err).strip().splitlines() or [""])[0][:200]


# -- the process's tier, from the environment -----------------------------------------------------

_state_lock = threading.Lock()
#: (the environment it was made from, the tier or None, why None)
_current: tuple[tuple[str, ...], RemoteTier | None, str] | None = None
_exit_registered = False


def _environment() -> tuple[str, ...]:
    return tuple(os.environ.get(name, "") for name in (*_ENVS, *_KEY_ENVS, _CACHE_DIR_ENV))


def configured() -> bool:
    """Return True when ``COMPILE_ENGINE_COMPAT_REMOTE_CACHE`` is set (the tier may be on)."""
    return bool(os.environ.get(REMOTE_ENV, ""))


def tier() -> RemoteTier | None:
    """Return the process's remote tier, or None when it is off.

    Made on first use from the environment, and again when the environment changes. When the
    URL is set but the tier cannot be on (no key, no local cache directory, a missing package,
    a bad setting), one :class:`RemoteCacheWarning` says why; the local tier works on alone.
    """
    global _current
    if not os.environ.get(REMOTE_ENV, ""):
        return None
    environment = _environment()
    with _state_lock:
        if _current is not None and _current[0] == environment:
            return _current[1]
    made, why = _make()
    with _state_lock:
        if _current is not None and _current[0] == environment:  # another thread made it first
            return _current[1]
        replaced = _current[1] if _current is not None else None
        _current = (environment, made, why)
        _register_exit()
    if replaced is not None:
        replaced.retire()
    if made is None:
        warnings.warn(f"remote compile cache off: {why}", RemoteCacheWarning, 3)
    return made


def off_reason() -> str:
    """Say why the tier is off, or what it does when on (for ``cache info``)."""
    if not configured():
        return f"off ({REMOTE_ENV} is not set)"
    made = tier()
    if made is None:
        assert _current is not None
        return f"off: {_current[2]}"
    return made.status()


def _make() -> tuple[RemoteTier | None, str]:
    url = os.environ.get(REMOTE_ENV, "")
    shown = display_url(url)
    if not os.environ.get(_CACHE_DIR_ENV, ""):
        return None, (
            f"{REMOTE_ENV}={shown} needs a local cache directory too ({_CACHE_DIR_ENV}): "
            "remote entries are verified, stored there, then loaded"
        )
    try:
        key = key_from_environment()
    except KeyProblem as problem:
        return None, str(problem)
    settings, problems = _settings(url)
    if problems:
        return None, "; ".join(problems)
    try:
        # The client's own timeouts a little longer than the tier's deadline, which must fire
        # first: a call past it turns the tier off; a client timeout would be a mere error.
        backend = open_backend(url, settings.timeout_s + _CLIENT_TIMEOUT_MARGIN_S)
    except ImportError as err:  # its message names the extra to install
        return None, str(err)
    except Exception as err:  # a URL that names no store, or that does not parse
        return None, f"{shown}: {_first_line(err)}"
    return RemoteTier(settings, key, backend), ""


def _settings(url: str) -> tuple[Settings, list[str]]:
    problems: list[str] = []

    def number(env: str, default: float, integer: bool = False) -> float:
        text = os.environ.get(env, "").strip()
        if not text:
            return default
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0) or (integer and value != int(value)):
            problems.append(f"{env}={text!r} is not a finite number >= 0")
            return default
        return value

    mode_text = os.environ.get(MODE_ENV, "").strip().lower() or "read-write"
    mode = _MODES.get(mode_text)
    if mode is None:
        problems.append(f"{MODE_ENV}={mode_text!r} is not read-write, read-only or verify-only")
    timeout = number(TIMEOUT_ENV, 2.0)
    if timeout == 0:
        problems.append(f"{TIMEOUT_ENV}=0 leaves no time for any call")
    ttl_days = number(TTL_DAYS_ENV, 0.0)
    settings = Settings(
        url=url,
        mode=mode or "read-only",
        timeout_s=timeout,
        max_entry_bytes=int(number(ENTRY_MB_ENV, 256.0) * MIB),
        ttl_s=int(ttl_days * 86400) or None,
        queue_size=max(1, int(number(QUEUE_ENV, 256, integer=True))),
        flush_s=number(FLUSH_ENV, 10.0),
    )
    return settings, problems


def flush(timeout_s: float | None = None) -> bool:
    """Wait for the process's tier to publish what it queued (default: its ``flush_s``).

    The local stores still running behind a build (:mod:`.store_behind`) are waited for first:
    each publishes its entry when it ends.
    """
    store_behind.flush()
    current = _current
    made = current[1] if current is not None else None
    if made is None:
        return True
    return made.flush(made.settings.flush_s if timeout_s is None else timeout_s)


def _flush_at_exit() -> None:
    try:
        flush()
    finally:
        stats.persist_all()  # after the flush: its counts are saved too


def _register_exit() -> None:
    global _exit_registered
    if not _exit_registered:
        _exit_registered = True
        atexit.register(_flush_at_exit)


def _forget_after_fork() -> None:
    # The writer thread does not exist in a forked child, and its locks may be held: start over.
    global _current, _state_lock
    _current = None
    _state_lock = threading.Lock()


at_fork_in_child(_forget_after_fork)
