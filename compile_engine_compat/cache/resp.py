"""One Redis reply to ``GETRANGE``, read off the socket with bounds on its size and its time.

redis-py reads whatever length a server announces: a hostile server that announces 100 GB and
streams zeros fills memory, and a read past the tier's deadline goes on in its thread. So the
remote tier reads the reply to its one big read itself (:func:`read_bulk`): a bulk length over
the cap is refused as it is announced, the deadline grows with the announced size (as a
write's does), and a read past its deadline stops, drops its buffer and says so; the caller then
closes the connection. Every other command goes through redis-py as usual.
"""

from __future__ import annotations

import socket

from compile_engine_compat.cache.bounds import MIB, Deadline, OversizedReply

__all__ = ["ReplyError", "read_bulk"]

#: The longest first line of a reply to GETRANGE: a type byte, a length, CRLF.
_MAX_LINE = 64
#: Each recv waits at most this long before the deadline is looked at again.
_SLICE_S = 0.25
_CHUNK = MIB


class ReplyError(RuntimeError):
    """The server answered with an error, or with something that is no reply to GETRANGE."""


def read_bulk(sock: socket.socket, limit: int, deadline: Deadline | None) -> bytes | None:
    """Read one bulk-string reply of at most ``limit + 1`` bytes; None for a missing key.

    Parameters
    ----------
    sock : socket.socket
        A connection on which ``GETRANGE key 0 limit`` was just sent.
    limit : int
        The entry size cap.
    deadline : Deadline or None
        The call's deadline (None: each recv waits up to the socket's own timeout); extended
        by the size the server announces.

    Raises
    ------
    OversizedReply
        When the server announces more than ``limit + 1`` bytes (nothing of it is read).
    TimeoutError
        When the deadline passes first; the buffer is dropped, the caller closes the socket.
    ReplyError, ConnectionError
        For an error reply, a malformed one, or a connection closed mid-reply.
    """
    previous = sock.gettimeout()
    line, rest = _first_line(sock, deadline)
    kind, text = line[:1], line[1:]
    if kind == b"-":
        raise ReplyError(text.decode("utf-8", "replace")[:200])
    if line == b"_":  # RESP3's null, should a URL ask for protocol 3
        return None
    if kind != b"$" or not (text == b"-1" or (text.isdigit() and len(text) < 20)):
        raise ReplyError(f"not a reply to GETRANGE: {line[:40]!r}")
    if text == b"-1":
        return None
    size = int(text)
    if size > limit + 1:
        raise OversizedReply(size, limit)
    if deadline is not None:
        deadline.extend_for(size)
    body = _exactly(sock, size + 2, rest, deadline)
    if body is None:
        raise TimeoutError(f"a reply of {size} bytes was not read before the deadline")
    if body[size:] != b"\r\n":
        raise ReplyError("a bulk reply not ended by CRLF")
    sock.settimeout(previous)
    del body[size:]
    return bytes(body)


def _recv(sock: socket.socket, into: memoryview, deadline: Deadline | None) -> int | None:
    """recv_into ``into`` (None: the deadline passed); raise ConnectionError when closed."""
    while True:
        left = None if deadline is None else deadline.left()
        if left is not None and left <= 0:
            return None
        sock.settimeout(None if left is None else min(left, _SLICE_S))
        try:
            count = sock.recv_into(into)
        except TimeoutError:
            if deadline is None:
                raise
            continue
        if count == 0:
            raise ConnectionError("the server closed the connection mid-reply")
        return count


def _first_line(sock: socket.socket, deadline: Deadline | None) -> tuple[bytes, bytes]:
    """Return the reply's first line (without CRLF) and the bytes read past it."""
    buffer = bytearray(_MAX_LINE)
    filled = 0
    while b"\r\n" not in buffer[:filled]:
        if filled == _MAX_LINE:
            raise ReplyError(f"a reply line longer than {_MAX_LINE} bytes")
        count = _recv(sock, memoryview(buffer)[filled:], deadline)
        if count is None:
            raise TimeoutError("no reply before the deadline")
        filled += count
    end = buffer.index(b"\r\n")
    return bytes(buffer[:end]), bytes(buffer[end + 2 : filled])


def _exactly(
    sock: socket.socket, size: int, start: bytes, deadline: Deadline | None
) -> bytearray | None:
    """Return ``size`` bytes (``start`` first), or None once the deadline passed."""
    body = bytearray(size)  # zero pages: memory is taken only as bytes arrive
    view = memoryview(body)
    filled = min(len(start), size)
    view[:filled] = start[:filled]
    while filled < size:
        count = _recv(sock, view[filled : min(size, filled + _CHUNK)], deadline)
        if count is None:
            view.release()
            return None  # the buffer goes with this frame: nothing keeps it
        filled += count
    view.release()
    return body
