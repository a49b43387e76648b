"""Real servers for the remote cache tier's tests, started by the tests and stopped after them.

* ``redis-server`` (Debian's package; ``.ci/run`` installs it), on a free loopback port, with
  persistence off (``--save "" --appendonly no``);
* an S3-compatible HTTP endpoint: moto's threaded server, reached through s3fs with the usual AWS
  variables (``AWS_ENDPOINT_URL`` among them);
* a server that hangs: a loopback socket that accepts connections and never answers.

Tests are skipped, saying why, only when a server's program or package is truly absent.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


@pytest.fixture(autouse=True)
def _remote_queue_drained() -> Iterator[None]:
    """Each test's write-behind queue is drained before the next test: no late warning or
    count of one test lands in another's."""
    yield
    remote = sys.modules.get("compile_engine_compat.cache.remote")
    if remote is not None:
        remote.flush(30)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process on a free loopback port."""

    def __init__(self, directory: Path, *options: str) -> None:
        if not os.path.exists(REDIS_SERVER):
            pytest.skip("redis-server is not installed (Debian package redis-server)")
        redis = pytest.importorskip("redis", reason="redis-py is not installed ([remote-redis])")
        directory.mkdir(parents=True, exist_ok=True)
        for _ in range(3):  # a free port may be taken before the server binds it: try another
            self.port = free_port()
            self.process = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--dir", str(directory), *options],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            self.client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.process.poll() is None:
                with contextlib.suppress(redis.exceptions.ConnectionError):
                    self.client.ping()
                    return
                time.sleep(0.02)
            self.stop()
        raise RuntimeError("redis-server did not start on a free loopback port")

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)


class HungServer:
    """A loopback socket that accepts connections and never answers (a hung store)."""

    def __init__(self) -> None:
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = int(self._listener.getsockname()[1])
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener was closed: done
            while True:
                connection, _ = self._listener.accept()
                self.accepted.append(connection)  # held open, never read, never answered

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # wakes the blocked accept(); close alone does not
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(5)
        for connection in self.accepted:
            connection.close()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the session (each xdist worker has its own)."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own, for tests that kill or fill it."""
    server = RedisServer(tmp_path / "redis")
    yield server
    server.stop()


@pytest.fixture
def traces(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Count the engine's traces of a source function (the real tracer still runs)."""
    from compile_engine_compat.pipeline import trace as _trace

    calls: list[object] = []
    real = _trace.trace

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(_trace, "trace", counting)
    return calls


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3-compatible HTTP server on a free loopback port, for the session."""
    server_module = pytest.importorskip("moto.server", reason="moto[server] is not installed")
    pytest.importorskip("s3fs", reason="s3fs is not installed ([remote-s3])")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def _s3_environment(monkeypatch: pytest.MonkeyPatch, endpoint: str) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)


@pytest.fixture
def s3_environment(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Point s3fs at an endpoint through the usual AWS variables, as a CI runner would."""
    return lambda endpoint: _s3_environment(monkeypatch, endpoint)


@pytest.fixture
def hung_server() -> Iterator[HungServer]:
    server = HungServer()
    yield server
    server.stop()


@pytest.fixture(params=["redis", "s3", "file"])
def remote_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """An empty remote store of each kind: a Redis database, an S3 bucket, a shared directory."""
    if request.param == "redis":
        server = request.getfixturevalue("redis_server")
        server.client.flushall()
        return str(server.url)
    if request.param == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        _s3_environment(monkeypatch, endpoint)
        import s3fs

        bucket = f"fleet-{uuid.uuid4().hex[:12]}"
        s3fs.S3FileSystem(skip_instance_cache=True).mkdir(bucket)
        return f"s3://{bucket}/ci-cache"
    shared = tmp_path / "shared"
    shared.mkdir()
    return shared.as_uri()
