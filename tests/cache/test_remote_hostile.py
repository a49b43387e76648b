"""A hostile store, a hostile server and a malformed URL: a miss and a count, never a failure.

Issue 35's remote-store cases, each against real parts: a real ``redis-server`` holding a 1 KB
entry written without the key whose header nests 1,000 deep (R1); an in-process loopback server
speaking just enough of Redis's protocol to announce a 100 GB reply and stream zeros, or to
trickle one past its deadline (R3); the same server handing a valid 21 MB entry over a slow
link (R4); and store URLs that do not parse (R5). Every entry point is tried: ``jit``,
``relay.build`` and the ``cache`` commands.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
import tvm

from cache.test_remote import (
    KEY,
    Counted,
    Fleet,
    _was_loaded,
    remote_warnings,
)
from compile_engine_compat import cli, relay
from compile_engine_compat.cache import backends, remote, signing
from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.cache.artifact import Artifact
from compile_engine_compat.cache.bounds import MIB, S_PER_MIB

#: The hostile header of R1: 1 KB of brackets, written without the key.
NESTED = signing.MAGIC + (1000).to_bytes(8, "big") + b"[" * 1000


@pytest.fixture
def redis_fleet(engine, tmp_path, monkeypatch, redis_server) -> Fleet:
    redis_server.client.flushall()
    return Fleet(engine, tmp_path, monkeypatch, redis_server.url)


# -- R1: verify before parsing --------------------------------------------------------------------


def _mlp(width: int) -> tvm.IRModule:
    x = relay.var("x", shape=(2, width))
    w = relay.var("w", shape=(3, width))
    out = relay.nn.relu(relay.nn.dense(x, w))
    return tvm.IRModule.from_expr(relay.Function([x, w], out))


def _run_graph(lib: object, width: int) -> None:
    from compile_engine_compat.tvm_legacy import graph_executor

    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))  # type: ignore[index]
    x = np.arange(2 * width, dtype="float32").reshape(2, width) - 3
    w = np.ones((3, width), "float32")
    module.set_input(x=x, w=w)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), np.maximum(x @ w.T, 0), rtol=1e-5)


def test_the_nested_header_parser_is_bounded():
    with pytest.raises(signing.Rejected, match="nested 1000 deep") as caught:
        signing.verify_entry(NESTED, KEY)
    assert caught.value.reason == "corrupt"
    huge = signing.MAGIC + (signing.MAX_HEADER_BYTES + 1).to_bytes(8, "big") + b"{}"
    with pytest.raises(signing.Rejected, match="over the 1048576 one may have"):
        signing.verify_entry(huge, KEY)
    # Brackets inside strings are text, not nesting: a real header with them still opens.
    artifact = signing.verify_entry(
        signing.seal(
            Artifact(_disk_cache.artifact_key("module", target="[[[[{{{{"), {"a.so": b"x"},
                     {"note": "[" * 50}), KEY),
        KEY,
    )  # fmt: skip
    assert artifact.meta == {"note": "[" * 50}


def test_a_nested_header_in_the_store_is_a_counted_miss_for_jit(redis_fleet):
    fleet = redis_fleet
    fleet.machine("writer")
    fleet.jit(8)
    remote.flush(30)
    assert fleet.rewrite(lambda name, blob: NESTED) == 2  # the index record and the kernel
    fleet.machine("victim")
    with remote_warnings() as messages, Counted() as counted:
        assert not _was_loaded(fleet.jit(8))  # compiled here, and right (_check)
    assert counted["remote.rejected.corrupt"] == 2 and counted["remote.error"] == 0
    assert len(messages) == 1 and "nested 1000 deep" in messages[0]


def test_a_nested_header_in_the_store_is_a_counted_miss_for_relay_build(redis_fleet):
    fleet = redis_fleet
    fleet.machine("writer")
    relay.build(_mlp(5), "llvm")
    remote.flush(30)
    assert fleet.rewrite(lambda name, blob: NESTED if "/module/" in name else None) == 1
    fleet.machine("victim")
    with remote_warnings(), Counted() as counted:
        lib = relay.build(_mlp(5), "llvm")
    _run_graph(lib, 5)
    assert counted["remote.rejected.corrupt"] == 1 and counted["remote.hit.module"] == 0


def test_the_cache_commands_count_a_nested_header_and_delete_it(redis_fleet, capsys):
    fleet = redis_fleet
    fleet.machine("writer")
    fleet.jit(8)
    fleet.jit(12)
    remote.flush(30)
    fleet.rewrite(lambda name, blob: NESTED if "/kernel/" in name else None)
    fleet.machine("checker")
    assert cli.main(["cache", "verify"]) == 1
    assert "2 entries verified, 2 refused (corrupt 2)" in capsys.readouterr().out
    assert cli.main(["cache", "pull"]) == 0
    assert "4 refused (corrupt 2, not-installed 2)" in capsys.readouterr().out  # their records
    assert cli.main(["cache", "info"]) == 0
    assert "remote cache: " in capsys.readouterr().out
    assert cli.main(["cache", "verify", "--delete"]) == 1
    assert "refused (corrupt 2) and deleted" in capsys.readouterr().out
    assert len(fleet.entries("kernel")) == 0 and cli.main(["cache", "verify"]) == 0


# -- R3, R4: a bounded reader ---------------------------------------------------------------------


def _command(buffer: bytes) -> tuple[list[bytes], bytes] | None:
    """One RESP command off the front of ``buffer`` (its arguments, the rest), or None."""
    if not buffer.startswith(b"*") or b"\r\n" not in buffer:
        return None
    head, rest = buffer[1:].split(b"\r\n", 1)
    args: list[bytes] = []
    for _ in range(int(head)):
        if b"\r\n" not in rest:
            return None
        length_line, rest = rest.split(b"\r\n", 1)
        length = int(length_line[1:])
        if len(rest) < length + 2:
            return None
        args.append(rest[:length])
        rest = rest[length + 2 :]
    return args, rest


class FakeRedis:
    """A loopback server answering +OK to every command (HELLO: a map) and to GETRANGE with
    ``answer``.

    ``answer(connection)`` writes the reply; :attr:`sent` counts its bytes and
    :attr:`cut_off` is set when the client closed the connection before the reply ended.
    """

    def __init__(
        self,
        answer: Callable[[FakeRedis, socket.socket], None],
        command: bytes = b"GETRANGE",
    ) -> None:
        self.answer = answer
        self.command = command
        self.sent = 0
        self.cut_off = threading.Event()
        self.asked = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self._listener.accept()
                self._connections.append(connection)
                threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with contextlib.suppress(OSError):
            while data := connection.recv(65536):
                buffer += data
                while (parsed := _command(buffer)) is not None:
                    args, buffer = parsed
                    if args[0].upper() == b"HELLO":  # a client asking for RESP3: a map
                        connection.sendall(b"%1\r\n$5\r\nproto\r\n:3\r\n")
                        continue
                    if args[0].upper() == b"GETRANGE" != self.command:
                        connection.sendall(b"$-1\r\n")  # a miss
                        continue
                    if args[0].upper() != self.command:
                        connection.sendall(b"+OK\r\n")
                        continue
                    self.asked.set()
                    try:
                        self.answer(self, connection)
                    except OSError:
                        self.cut_off.set()
                        return

    def send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        self.sent += len(data)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for connection in self._connections:
            connection.close()


@contextlib.contextmanager
def fake_redis(
    answer: Callable[[FakeRedis, socket.socket], None], command: bytes = b"GETRANGE"
) -> Iterator[FakeRedis]:
    server = FakeRedis(answer, command)
    try:
        yield server
    finally:
        server.stop()


def _zeros_for(
    seconds: float, chunk: int, pause: float, total: int = 1024 * MIB
) -> Callable[[FakeRedis, socket.socket], None]:
    def stream(server: FakeRedis, connection: socket.socket) -> None:
        end = time.monotonic() + seconds  # bounded in time and bytes: it stops by itself
        while time.monotonic() < end and server.sent < total:
            server.send(connection, bytes(chunk))
            time.sleep(pause)

    return stream


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reader_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "compile-cache-remote-call"]


def _ends(condition: Callable[[], bool], seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_reply_announced_over_the_cap_is_refused_unread(engine, tmp_path, monkeypatch):
    def hundred_gb(server: FakeRedis, connection: socket.socket) -> None:
        server.send(connection, b"$%d\r\n" % (100 * 1024**3))
        _zeros_for(20.0, MIB, 0.0)(server, connection)

    with fake_redis(hundred_gb) as server:
        fleet = Fleet(engine, tmp_path, monkeypatch, server.url)
        fleet.machine("victim")
        before = _rss()
        started = time.perf_counter()
        with remote_warnings() as messages, Counted() as counted:
            assert not _was_loaded(fleet.jit(8))  # compiled here, and right
        elapsed = time.perf_counter() - started
        assert server.asked.is_set()
        assert counted["remote.rejected.too-large"] == 2 and counted["remote.timeout"] == 0
        assert any("107374182400 bytes, over the cap" in m for m in messages)
        assert server.cut_off.wait(10)  # the client hung up: the zeros stopped
        assert _ends(lambda: not _reader_threads(), 5)
        assert _rss() - before < 128 * MIB and elapsed < 60
        assert remote.tier() is not None and remote.tier().status() == "on"  # type: ignore[union-attr]


def test_a_read_past_its_deadline_stops_its_thread(engine, tmp_path, monkeypatch):
    announced = 3 * MIB  # under the 4 MiB cap: read, at 640 KiB/s, past its 1.05 s deadline

    def trickle(server: FakeRedis, connection: socket.socket) -> None:
        server.send(connection, b"$%d\r\n" % announced)
        _zeros_for(20.0, 64 * 1024, 0.1)(server, connection)

    with fake_redis(trickle) as server:
        fleet = Fleet(engine, tmp_path, monkeypatch, server.url)
        fleet.machine("victim", **{remote.TIMEOUT_ENV: "0.3", remote.ENTRY_MB_ENV: "4"})
        before = _rss()
        with remote_warnings() as messages, Counted() as counted:
            assert not _was_loaded(fleet.jit(8))
        assert counted["remote.timeout"] == 1
        deadline_s = 0.3 + S_PER_MIB * announced / MIB
        assert any(f"within {deadline_s:.1f} s" in m for m in messages)  # grown by the size
        assert _ends(lambda: not _reader_threads(), 2)  # the reader stopped with its deadline
        assert server.cut_off.wait(5) and server.sent < announced
        assert _rss() - before < 128 * MIB
        assert "off for this process" in remote.off_reason()


def test_a_write_past_its_deadline_is_cut_off_too(engine, tmp_path, monkeypatch):
    """Replies to other commands are read by redis-py: the tier closes their connections."""

    def huge_reply_to_set(server: FakeRedis, connection: socket.socket) -> None:
        server.send(connection, b"$%d\r\n" % (100 * 1024**3))
        _zeros_for(20.0, 64 * 1024, 0.01)(server, connection)  # about 6 MiB/s

    with fake_redis(huge_reply_to_set, b"SET") as server:
        fleet = Fleet(engine, tmp_path, monkeypatch, server.url)
        fleet.machine("writer", **{remote.TIMEOUT_ENV: "0.5"})
        with remote_warnings() as messages, Counted() as counted:
            fleet.jit(8)
            assert server.asked.wait(10)
            assert _ends(lambda: "off for this process" in remote.off_reason(), 10)
        assert counted["remote.timeout"] == 1 and any(
            "a write got no answer" in m for m in messages
        )
        assert server.cut_off.wait(5)  # the connection was closed: nothing reads the zeros
        assert server.sent < 64 * MIB


def test_a_big_entry_over_a_slow_link_gets_time_by_its_size(engine, tmp_path, monkeypatch):
    fleet = Fleet(engine, tmp_path, monkeypatch, "redis://127.0.0.1:1/0")
    key = _disk_cache.artifact_key("module", target="llvm", structural_hash=21)
    library = np.random.default_rng(0).bytes(21 * 1000 * 1000)
    blob = signing.seal(Artifact(key, {"module.so": library}, {"entry": "main"}), KEY)
    rate = 6 * MIB  # 21 MB in about 3.3 s: past the flat 2 s, within 2 s + 0.25 s per MiB

    def slow_link(server: FakeRedis, connection: socket.socket) -> None:
        reply = b"$%d\r\n" % len(blob) + blob + b"\r\n"
        chunk = 256 * 1024
        for start in range(0, len(reply), chunk):
            server.send(connection, reply[start : start + chunk])
            time.sleep(chunk / rate)

    with fake_redis(slow_link) as server:
        fleet.url = server.url
        fleet.machine("reader")
        started = time.perf_counter()
        with remote_warnings() as messages, Counted() as counted:
            stored = _disk_cache.load_artifact(key)
        elapsed = time.perf_counter() - started
    assert messages == [] and counted["remote.timeout"] == 0
    assert stored is not None and counted["remote.hit.module"] == 1
    assert stored.path("module.so").read_bytes() == library
    assert elapsed > 2.0  # the link was slower than the flat timeout


# -- R5: a malformed store URL ------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["redis://u:pw@127.0.0.1:notaport/0", "redis://u:pw@[::1/0"], ids=["port", "ipv6"]
)
def test_a_malformed_url_is_one_warning_and_the_local_cache(
    engine, tmp_path, monkeypatch, capsys, url
):
    assert "pw" not in backends.display_url(url)
    fleet = Fleet(engine, tmp_path, monkeypatch, url)
    fleet.machine("runner")
    with remote_warnings() as messages, Counted() as counted:
        fleet.jit(8)
        assert _was_loaded(fleet.jit(8))  # the local tier works on alone
        lib = relay.build(_mlp(4), "llvm")
    _run_graph(lib, 4)
    assert len(messages) == 1 and messages[0].startswith("remote compile cache off: ")
    assert "pw" not in messages[0] and "***" in messages[0]
    assert not any(k.startswith("remote.") for k in counted.delta)
    assert cli.main(["cache", "info"]) == 0
    captured = capsys.readouterr()
    assert "remote cache: off: " in captured.out and "pw" not in captured.out + captured.err


def test_display_url_never_shows_a_password():
    assert backends.display_url("redis://u:secret@h:1/0") == "redis://u:***@h:1/0"
    assert backends.display_url("redis://u:secret@h:x/0") == "redis://***@h:x/0"
    assert backends.display_url("redis://u:secret@[::1/0") == "redis://***@[::1/0"
    assert backends.display_url("redis://h:1/0") == "redis://h:1/0"
    assert "secret" not in backends.display_url("u:secret@[::1")
