"""The stores behind the remote cache tier: Redis (redis-py) and any fsspec URL (S3, GCS, file).

A backend moves bytes under names (``<namespace>/<kind>/<digest>``); it knows nothing of what
they mean. Each is used from several threads. Its own timeouts are set to the tier's, but the
tier never trusts them alone: every call runs under a deadline of its own (:mod:`.remote`).

* ``redis://[user:password@]host:port/db``, ``rediss://`` (TLS), ``unix:///path?db=N``: keys
  ``compile-engine-compat/v1/<name>``, written with ``SET NX`` (the first writer of a key wins;
  the others' equal entries are dropped) and an optional expiry. Size and eviction are the
  server's: ``maxmemory`` with ``maxmemory-policy allkeys-lru``.
* ``s3://bucket/prefix`` (s3fs; endpoint and credentials from the usual AWS variables, such as
  ``AWS_ENDPOINT_URL`` for an S3-compatible server), ``gs://bucket/prefix`` (gcsfs),
  ``file:///mnt/shared/cache``, or any other fsspec URL: objects ``<prefix>/v1/<name>``. An object
  store replaces an object whole; on a file system an entry is written under a temporary name
  and renamed into place, so a reader never sees part of one.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from compile_engine_compat.boundary import connection_socket
from compile_engine_compat.cache.bounds import Deadline, OversizedReply
from compile_engine_compat.cache.resp import read_bulk

__all__ = ["Backend", "StoreFullError", "display_url", "open_backend"]

_REDIS_SCHEMES = ("redis", "rediss", "unix")
_S3_SCHEMES = ("s3", "s3a")
_LAYOUT = "v1"
_CHUNK = 4 * 1024 * 1024


class StoreFullError(RuntimeError):
    """The store refused a write because it is full (Redis ``maxmemory`` with ``noeviction``)."""


class Backend(Protocol):
    """What the remote tier needs from a store."""

    url: str

    def get(self, name: str, limit: int, deadline: Deadline | None = None) -> bytes | None:
        """Return the object ``name``, or None if absent.

        Raises :class:`.bounds.OversizedReply` when the store announces more than ``limit + 1``
        bytes, before reading them; extends ``deadline`` by the size announced, and stops
        reading (``TimeoutError``) once it has passed.
        """

    def put(self, name: str, data: bytes, ttl_s: int | None) -> bool:
        """Write ``name``; False when it exists already (left alone). May raise StoreFullError."""

    def exists(self, name: str) -> bool:
        """Return True when ``name`` is stored."""

    def delete(self, name: str) -> None:
        """Remove ``name`` (absent: nothing happens)."""

    def names(self, prefix: str) -> list[str]:
        """Return the stored names that start with ``prefix``."""

    def describe(self) -> dict[str, str]:
        """Return a few facts about the store for ``cache info`` (size, eviction policy)."""

    def abort(self) -> None:
        """Close every connection, in use or not: a call past its deadline stops reading."""


def display_url(url: str) -> str:
    """Return ``url`` without its password, for messages and reports (never raises)."""
    try:
        parts = urlsplit(url)
        password, host, port = parts.password, parts.hostname or "", parts.port
    except ValueError:  # a malformed URL (a port that is no number, an unclosed [): still hidden
        return _hidden(url)
    if password is None:
        return url if parts.netloc or "@" not in url else _hidden(url)
    if port is not None:
        host = f"{host}:{port}"
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return urlunsplit(parts._replace(netloc=user + host))


def _hidden(url: str) -> str:
    """``url`` with everything before its last ``@`` in the authority hidden."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, path = (rest if sep else url).partition("/")
    if "@" not in netloc:
        return url
    shown = f"***@{netloc.rsplit('@', 1)[1]}{slash}{path}"
    return f"{scheme}://{shown}" if sep else shown


def open_backend(url: str, timeout_s: float) -> Backend:
    """Return the backend for ``url``, its own timeouts set to ``timeout_s``.

    Raises
    ------
    ImportError
        When the package the URL needs is missing; the message names the extra to install.
    ValueError
        When the URL names no store.
    """
    scheme = urlsplit(url).scheme.lower()
    if scheme in _REDIS_SCHEMES:
        return RedisBackend(url, timeout_s)
    if "://" not in url:
        raise ValueError(
            f"remote cache URL {display_url(url)!r} names no store: use redis://host:port/db, "
            "s3://bucket/prefix, gs://bucket/prefix or file:///path"
        )
    return FsspecBackend(url, timeout_s)


def _missing(extra: str, package: str, url: str) -> ImportError:
    return ImportError(
        f"the remote compile cache {display_url(url)} needs {package}: "
        f"pip install 'compile-engine-compat[{extra}]'"
    )


class RedisBackend:
    """A Redis server (redis-py)."""

    _PREFIX = f"compile-engine-compat/{_LAYOUT}/"

    def __init__(self, url: str, timeout_s: float) -> None:
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError as err:
            raise _missing("remote-redis", "redis-py", url) from err
        self.url = display_url(url)
        self._errors = redis.exceptions
        # No retries: a failed call is a miss at once, the tier's circuit breaker does the rest.
        # RESP2: every Redis 6+ speaks it, and no push message (RESP3's maintenance
        # notifications) can come before the reply that cache.resp reads itself.
        self._client = redis.Redis.from_url(
            url,
            protocol=2,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False,
        )

    def get(self, name: str, limit: int, deadline: Deadline | None = None) -> bytes | None:
        # GETRANGE asks for at most limit + 1 bytes: an oversized value is refused, never loaded
        # whole. The reply is read off the socket with bounds (cache.resp), not by redis-py: a
        # hostile server may announce any length. A missing key reads as b"" (never an entry).
        pool = self._client.connection_pool
        connection = pool.get_connection()
        try:
            connection.send_command("GETRANGE", self._PREFIX + name, 0, limit)
            data = read_bulk(connection_socket(connection), limit, deadline)
        except BaseException:
            connection.disconnect()  # a reply read in part: the connection is not reused
            raise
        finally:
            pool.release(connection)
        return data or None

    def put(self, name: str, data: bytes, ttl_s: int | None) -> bool:
        try:
            return bool(self._client.set(self._PREFIX + name, data, nx=True, ex=ttl_s))
        except self._errors.ResponseError as err:
            if isinstance(err, getattr(self._errors, "OutOfMemoryError", ())) or str(
                err
            ).startswith("OOM"):
                raise StoreFullError(str(err)) from err
            raise

    def exists(self, name: str) -> bool:
        return bool(self._client.exists(self._PREFIX + name))

    def delete(self, name: str) -> None:
        self._client.delete(self._PREFIX + name)

    def names(self, prefix: str) -> list[str]:
        pattern = _glob_escape(self._PREFIX + prefix) + "*"
        found = self._client.scan_iter(match=pattern, count=1000)
        texts = (key.decode() if isinstance(key, bytes) else str(key) for key in found)
        return sorted(text[len(self._PREFIX) :] for text in texts)

    def abort(self) -> None:
        # Other commands' replies are read by redis-py: closing their sockets is what stops a
        # call stuck reading one (its thread then ends with an error, its buffer dropped).
        self._client.connection_pool.disconnect(inuse_connections=True)

    def describe(self) -> dict[str, str]:
        memory: dict[str, Any] = self._client.info("memory")
        return {
            "used memory": str(memory.get("used_memory_human", "?")),
            "maxmemory": str(memory.get("maxmemory_human", "?")),
            "maxmemory-policy": str(memory.get("maxmemory_policy", "?")),
        }


def _glob_escape(text: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in text)


class FsspecBackend:
    """Any fsspec file system: S3 (s3fs), GCS (gcsfs), a local or shared mount (``file://``)."""

    def __init__(self, url: str, timeout_s: float) -> None:
        scheme = urlsplit(url).scheme.lower()
        try:
            import fsspec
        except ImportError as err:
            extra = "remote-s3" if scheme in _S3_SCHEMES else "remote-fsspec"
            raise _missing(extra, "fsspec", url) from err
        options: dict[str, Any] = {}
        if scheme in _S3_SCHEMES:
            try:
                import s3fs  # noqa: F401 -- fsspec imports it by name; fail here with the extra
            except ImportError as err:
                raise _missing("remote-s3", "s3fs", url) from err
            options = {
                "skip_instance_cache": True,
                "use_listings_cache": False,
                "config_kwargs": {
                    "connect_timeout": timeout_s,
                    "read_timeout": timeout_s,
                    "retries": {"max_attempts": 1, "mode": "standard"},
                },
            }
        try:
            self._fs, root = fsspec.core.url_to_fs(url, **options)
        except ImportError as err:  # fsspec's message names the package (gcsfs, adlfs, ...)
            raise ImportError(
                f"the remote compile cache {display_url(url)} needs a package for {scheme}:// "
                f"({err})"
            ) from err
        self.url = display_url(url)
        self._root = f"{root.rstrip('/')}/{_LAYOUT}"
        protocols = self._fs.protocol
        self._local = "file" in (protocols if isinstance(protocols, tuple) else (protocols,))

    def _path(self, name: str) -> str:
        return f"{self._root}/{name}"

    def get(self, name: str, limit: int, deadline: Deadline | None = None) -> bytes | None:
        # One request for an entry of up to _CHUNK bytes (most are); a bigger one is asked its
        # size (refused over the cap, the deadline extended by it), then read in chunks: a read
        # past its deadline stops between two.
        path = self._path(name)
        try:
            first = bytes(self._fs.cat_file(path, start=0, end=min(limit + 1, _CHUNK)))
            if len(first) < min(limit + 1, _CHUNK):
                return first or None
            size = int(self._fs.size(path) or 0)
        except FileNotFoundError:
            return None
        if size > limit + 1:
            raise OversizedReply(size, limit)
        if deadline is not None:
            deadline.extend_for(size)
        chunks = [first]
        read = len(first)
        while read < size:
            if deadline is not None and deadline.left() <= 0:
                raise TimeoutError(f"{read} of {size} bytes read before the deadline")
            try:
                chunk = bytes(self._fs.cat_file(path, start=read, end=min(size, read + _CHUNK)))
            except FileNotFoundError:
                return None  # removed meanwhile
            if not chunk:
                break
            chunks.append(chunk)
            read += len(chunk)
        return b"".join(chunks)

    def put(self, name: str, data: bytes, ttl_s: int | None) -> bool:
        path = self._path(name)
        if self._fs.exists(path):
            return False
        if not self._local:  # an object store replaces an object whole: readers see all or none
            self._fs.pipe_file(path, data)
            return True
        parent = path.rsplit("/", 1)[0]
        self._fs.makedirs(parent, exist_ok=True)
        staging = f"{parent}/.tmp-{uuid.uuid4().hex}"
        try:
            self._fs.pipe_file(staging, data)
            self._fs.mv(staging, path)  # a rename: atomic, and equal entries race harmlessly
        finally:
            with contextlib.suppress(FileNotFoundError):
                self._fs.rm_file(staging)
        return True

    def exists(self, name: str) -> bool:
        return bool(self._fs.exists(self._path(name)))

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._fs.rm_file(self._path(name))

    def names(self, prefix: str) -> list[str]:
        base = self._path(prefix).rsplit("/", 1)[0]
        try:
            found = self._fs.find(base)
        except FileNotFoundError:
            return []
        root = self._root + "/"  # url_to_fs and find both give paths without the protocol
        names = [str(p)[len(root) :] for p in found if str(p).startswith(root)]
        return sorted(n for n in names if n.startswith(prefix) and "/.tmp-" not in n)

    def abort(self) -> None:
        """Nothing to close: reads stop between chunks by their deadline."""

    def describe(self) -> dict[str, str]:
        names = self.names("")
        size = sum(int(self._fs.size(self._path(n)) or 0) for n in names)
        return {"objects": str(len(names)), "size": f"{size / (1024 * 1024):.1f} MiB"}
