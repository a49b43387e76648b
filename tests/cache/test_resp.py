"""The bounded reader of one Redis reply (``cache.resp``), on a socket pair and a real server."""

from __future__ import annotations

import socket
import threading

import pytest

from compile_engine_compat import boundary
from compile_engine_compat.cache.bounds import MIB, S_PER_MIB, Deadline, OversizedReply
from compile_engine_compat.cache.resp import ReplyError, read_bulk


def _read(reply: bytes, limit: int = 100, deadline: Deadline | None = None) -> bytes | None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(reply)
        return read_bulk(ours, limit, deadline)


def test_a_bulk_reply_and_a_missing_key():
    assert _read(b"$5\r\nhello\r\n") == b"hello"
    assert _read(b"$0\r\n\r\n") == b""
    assert _read(b"$-1\r\n") is None
    assert _read(b"_\r\n") is None


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"-ERR wrong type\r\n", "ERR wrong type"),
        (b"+OK\r\n", "not a reply to GETRANGE"),
        (b"$abc\r\n", "not a reply to GETRANGE"),
        (b"$3\r\nabcXY", "not ended by CRLF"),
        (b"$" + b"9" * 80 + b"\r\n", "longer than 64 bytes"),
    ],
)
def test_a_malformed_reply_is_a_reply_error(reply, message):
    with pytest.raises(ReplyError, match=message):
        _read(reply)


def test_a_length_over_the_cap_is_refused_as_announced():
    with pytest.raises(OversizedReply) as caught:
        _read(b"$107374182400\r\n", limit=MIB)  # nothing follows: nothing is waited for
    assert caught.value.size == 100 * 1024**3 and caught.value.limit == MIB
    assert _read(b"$101\r\n" + bytes(101) + b"\r\n") == bytes(101)  # limit + 1: read, refused later


def test_the_deadline_grows_with_the_announced_size_and_stops_the_read():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"$%d\r\n" % (4 * MIB) + bytes(1000))  # then nothing: a stalled server
        deadline = Deadline(0.2)
        given = deadline.seconds()
        with pytest.raises(TimeoutError, match="not read before the deadline"):
            read_bulk(ours, 8 * MIB, deadline)
        assert deadline.seconds() == pytest.approx(given + 4 * S_PER_MIB)


def test_an_expired_deadline_is_not_extended():
    deadline = Deadline(5)
    deadline.expire()
    deadline.extend_for(100 * MIB)
    assert deadline.left() == 0


def test_the_connection_socket_of_a_real_redis_py_connection(redis_server):
    import redis

    pool = redis.Redis(host="127.0.0.1", port=redis_server.port, protocol=2).connection_pool
    connection = pool.get_connection()
    try:
        redis_server.client.set("compile-engine-compat/probe", b"abc")
        connection.send_command("GETRANGE", "compile-engine-compat/probe", 0, 10)
        assert read_bulk(boundary.connection_socket(connection), 10, Deadline(5)) == b"abc"
    finally:
        pool.release(connection)
    with pytest.raises(ImportError, match="redis-py renamed it"):
        boundary.connection_socket(threading.Lock())
