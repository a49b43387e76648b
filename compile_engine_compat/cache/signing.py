"""Signed entries of the remote cache: HMAC-SHA256 over the whole entry, checked before any use.

Loading a shared library runs its code, so an entry from a shared store is used only when a
holder of the fleet's key wrote it. The key comes from ``COMPILE_ENGINE_COMPAT_CACHE_KEY`` (the
secret itself) or ``COMPILE_ENGINE_COMPAT_CACHE_KEY_FILE`` (a file holding it): at least
:data:`MIN_KEY_LENGTH` characters, for example ``python -c "import secrets;
print(secrets.token_hex(32))"``.

An entry, as stored remotely::

    compile-engine-compat entry 1\\n    the magic line: the format and its version
    <8 bytes: header length, big-endian>
    <header: JSON>                       kind, key material, meta, files (name, size, SHA-256),
                                         the signing key's id, "signature": "hmac-sha256"
    <the files' bytes, in header order>
    <32 bytes: HMAC-SHA256(key, everything above)>

:func:`open_entry` returns the artifact only when every check passes; otherwise it raises
:class:`Rejected` with one of :data:`REASONS`. The size cap comes first (``too-large``), then the
signature, over the raw bytes, before anything is parsed: the last 32 bytes must be this key's
HMAC of the rest. Only a signed entry's header is parsed for use, with bounds
(:data:`MAX_HEADER_BYTES`, :data:`MAX_HEADER_DEPTH`: a header nested 1,000 deep is refused, not
a ``RecursionError``). An entry that fails the check is parsed, by the same bounded parser, only
to name its reason: the format (``corrupt``), the signature's presence (``unsigned``), the length
(``truncated``, or ``corrupt`` for bytes past the end), then ``corrupt`` when the files no longer
match the checksums the header lists (a bit flipped in storage or transit) and
``bad-signature`` when they do (an entry made with another key). A signed entry is then checked
against the key material asked for (``other-tvm``, ``other-shim``, ``other-rules``,
``other-target``, ``other-kind``, ``other-key``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compile_engine_compat.cache.artifact import (
    Artifact,
    ArtifactKey,
    fields,
    mismatch,
    valid_file_name,
)

__all__ = [
    "KEY_ENV",
    "KEY_FILE_ENV",
    "MAGIC",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_DEPTH",
    "MIN_KEY_LENGTH",
    "REASONS",
    "KeyProblem",
    "Rejected",
    "SigningKey",
    "key_from_environment",
    "open_entry",
    "seal",
    "verify_entry",
]

KEY_ENV = "COMPILE_ENGINE_COMPAT_CACHE_KEY"
KEY_FILE_ENV = "COMPILE_ENGINE_COMPAT_CACHE_KEY_FILE"
MIN_KEY_LENGTH = 32
MAGIC = b"compile-engine-compat entry 1\n"
_LENGTH_BYTES = 8
_MAC_BYTES = 32
_ALGORITHM = "hmac-sha256"
#: A header longer than this is refused unparsed (a real one is a few KiB at most).
MAX_HEADER_BYTES = 1 << 20
#: Brackets nested deeper than this in a header are refused unparsed (a real one nests 3 deep).
MAX_HEADER_DEPTH = 8
#: Why an entry was refused; ``cache info`` counts each.
REASONS = (
    "unsigned",
    "bad-signature",
    "truncated",
    "corrupt",
    "other-tvm",
    "other-shim",
    "other-rules",
    "other-target",
    "other-kind",
    "other-key",
    "too-large",
)


class Rejected(ValueError):
    """A remote entry failed a check and must not be used.

    Attributes
    ----------
    reason : str
        One of :data:`REASONS`.
    detail : str
        One line saying what was found.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class KeyProblem(ValueError):
    """No usable signing key: the message says why (the remote tier stays off)."""


@dataclass(frozen=True, repr=False)
class SigningKey:
    """The fleet's secret, and its public id (a hash prefix, safe to print and to store)."""

    secret: bytes
    where: str

    @property
    def key_id(self) -> str:
        """Return the key's id: 12 hex digits of a hash of it, shown in entries and messages."""
        return hashlib.sha256(b"compile-engine-compat key id\0" + self.secret).hexdigest()[:12]

    def __repr__(self) -> str:  # never the secret
        return f"SigningKey(id={self.key_id}, from {self.where})"


def key_from_environment() -> SigningKey:
    """Return the signing key from ``COMPILE_ENGINE_COMPAT_CACHE_KEY`` or its ``_FILE`` twin.

    The variable wins when both are set. A key file must be a regular file owned by the current
    user or root and not writable by group or others, as OpenSSH's ``StrictModes`` asks of
    ``authorized_keys``: whoever owns the file, or may write it, can read or replace the key and
    so make this runner trust entries of their own (a library with a constructor, say).

    Raises
    ------
    KeyProblem
        When neither is set, the file is unreadable or unsafe, or the key is too short.
    """
    value = os.environ.get(KEY_ENV, "")
    if value:
        return _checked(value.encode(), KEY_ENV)
    path_text = os.environ.get(KEY_FILE_ENV, "")
    if not path_text:
        raise KeyProblem(
            f"no signing key: set {KEY_ENV} (or {KEY_FILE_ENV}); "
            "unsigned remote entries are never loaded"
        )
    path = Path(path_text).expanduser()
    try:
        with open(path, "rb") as file:  # checked as opened: no swap between check and read
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise KeyProblem(f"{KEY_FILE_ENV}={path} is not a regular file")
            if status.st_uid not in (os.getuid(), 0):
                raise KeyProblem(
                    f"{KEY_FILE_ENV}={path} belongs to uid {status.st_uid}, neither the current "
                    f"user (uid {os.getuid()}) nor root: its owner knows the key and can change "
                    "it, and so sign entries this runner would load; use a key file of your own"
                )
            if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                raise KeyProblem(
                    f"{KEY_FILE_ENV}={path} is writable by group or others (mode "
                    f"{stat.S_IMODE(status.st_mode):o}): fix it with chmod go-w {path}"
                )
            secret = file.read().strip()
    except OSError as err:
        raise KeyProblem(f"{KEY_FILE_ENV}={path} cannot be read ({err.strerror})") from err
    return _checked(secret, f"{KEY_FILE_ENV}={path}")


def _checked(secret: bytes, where: str) -> SigningKey:
    if len(secret) < MIN_KEY_LENGTH:
        raise KeyProblem(
            f"the signing key from {where} has {len(secret)} characters, fewer than "
            f'{MIN_KEY_LENGTH}; make one with: python -c "import secrets; '
            'print(secrets.token_hex(32))"'
        )
    return SigningKey(secret, where)


def seal(artifact: Artifact, key: SigningKey | None) -> bytes:
    """Return ``artifact`` as a signed entry (``key`` None: unsigned, for tests of refusal)."""
    names = sorted(artifact.files)
    header = {
        "kind": artifact.key.kind,
        "material": artifact.key.material,
        "meta": dict(artifact.meta),
        "files": [
            [name, len(artifact.files[name]), hashlib.sha256(artifact.files[name]).hexdigest()]
            for name in names
        ],
        "key_id": key.key_id if key is not None else None,
        "signature": _ALGORITHM if key is not None else None,
    }
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    prefix = MAGIC + len(header_bytes).to_bytes(_LENGTH_BYTES, "big") + header_bytes
    parts = [prefix, *(artifact.files[name] for name in names)]
    if key is not None:
        mac = hmac.new(key.secret, digestmod=hashlib.sha256)
        for part in parts:
            mac.update(part)
        parts.append(mac.digest())
    return b"".join(parts)


def open_entry(
    blob: bytes, key: SigningKey, expected: ArtifactKey, max_bytes: int | None = None
) -> Artifact:
    """Return the artifact in ``blob`` when it is whole, signed with ``key`` and ``expected``'s.

    The signature is checked over the raw bytes first; the header is parsed only after that
    (with bounds on its size and nesting), and an entry that fails the check is parsed only to
    name the reason, by the same bounded parser.

    Parameters
    ----------
    blob : bytes
        The entry as read from the store.
    key : SigningKey
    expected : ArtifactKey
        What was asked for: the entry's kind and key material must be exactly these.
    max_bytes : int, optional
        The size cap: a longer entry is refused (``too-large``).

    Raises
    ------
    Rejected
        When any check fails; nothing from ``blob`` may be used then.
    """
    artifact = _opened(blob, key, max_bytes)
    problem = mismatch(expected.material, artifact.key.material)
    if problem is not None or artifact.key.kind != expected.kind:
        raise Rejected(problem or "other-kind", _difference(expected.material, artifact))
    return artifact


def verify_entry(blob: bytes, key: SigningKey, max_bytes: int | None = None) -> Artifact:
    """Return the artifact in ``blob`` when it is whole and signed with ``key``, whatever its key.

    ``cache verify`` and ``cache pull`` use it: the entry's key material is checked against its
    name by the caller. Raises :class:`Rejected` like :func:`open_entry`.
    """
    return _opened(blob, key, max_bytes)


def _opened(blob: bytes, key: SigningKey, max_bytes: int | None) -> Artifact:
    if max_bytes is not None and len(blob) > max_bytes:
        raise Rejected("too-large", f"{len(blob)} bytes, over the cap of {max_bytes}")
    if not _signed_by(blob, key):
        raise _why_refused(blob, key)
    # Signed with the fleet's key: still parsed with bounds, and a malformed one is refused.
    header, body_start = _header(blob)
    if header.get("signature") != _ALGORITHM:
        raise Rejected("corrupt", "signed, yet its header names no signature")
    body_end = body_start + sum(size for _, size, _ in header["files"])
    if body_end + _MAC_BYTES != len(blob):
        raise Rejected("corrupt", "signed, yet its files do not fill it")
    try:
        artifact_key = ArtifactKey(header["kind"], header["material"])
    except ValueError as err:  # signed by us, yet malformed: a bug of the writer, never used
        raise Rejected("corrupt", str(err)) from err
    return Artifact(artifact_key, _files(blob, header, body_start), header["meta"])


def _signed_by(blob: bytes, key: SigningKey) -> bool:
    """Return True when the last 32 bytes are ``key``'s HMAC of the rest (nothing is parsed)."""
    if len(blob) < len(MAGIC) + _LENGTH_BYTES + _MAC_BYTES or not blob.startswith(MAGIC):
        return False
    signed = memoryview(blob)[:-_MAC_BYTES]  # no copy of a big entry
    expected_mac = hmac.new(key.secret, signed, hashlib.sha256).digest()
    return hmac.compare_digest(expected_mac, bytes(blob[-_MAC_BYTES:]))


def _why_refused(blob: bytes, key: SigningKey) -> Rejected:
    """Name the reason an entry failed its signature check (nothing of it is used)."""
    if not blob.startswith(MAGIC):
        if MAGIC.startswith(bytes(blob)):
            return Rejected("truncated", f"{len(blob)} bytes, ends inside the format line")
        return Rejected("corrupt", "not an entry of this format (no format line)")
    try:
        header, body_start = _header(blob)
    except Rejected as rejected:
        return rejected
    if header.get("signature") is None:
        return Rejected("unsigned", "the entry carries no signature")
    if header["signature"] != _ALGORITHM:
        return Rejected("unsigned", f"unknown signature algorithm {header['signature']!r}")
    body_end = body_start + sum(size for _, size, _ in header["files"])
    if len(blob) < body_end + _MAC_BYTES:
        return Rejected(
            "truncated", f"{len(blob)} bytes of the {body_end + _MAC_BYTES} its header announces"
        )
    if len(blob) > body_end + _MAC_BYTES:
        return Rejected("corrupt", f"{len(blob) - body_end - _MAC_BYTES} bytes past its end")
    files = _files(blob, header, body_start)
    damaged = [
        name
        for name, _, digest in header["files"]
        if hashlib.sha256(files[name]).hexdigest() != digest
    ]
    if damaged:
        return Rejected("corrupt", f"{', '.join(damaged)} changed since it was signed")
    return Rejected(
        "bad-signature",
        f"signed with key id {_short(str(header.get('key_id')))!r}, not with this runner's "
        f"({key.key_id}): forged, or written by a fleet with another key",
    )


def _header(blob: bytes) -> tuple[dict[str, Any], int]:
    """Parse the header with bounds: its size, its nesting; every failure is a refusal."""
    start = len(MAGIC) + _LENGTH_BYTES
    if len(blob) < start:
        raise Rejected("truncated", f"{len(blob)} bytes, ends before the header")
    length = int.from_bytes(blob[len(MAGIC) : start], "big")
    if length > MAX_HEADER_BYTES:
        raise Rejected(
            "corrupt", f"a header of {length} bytes, over the {MAX_HEADER_BYTES} one may have"
        )
    if len(blob) < start + length:
        raise Rejected("truncated", f"{len(blob)} bytes, ends inside the header")
    raw = bytes(blob[start : start + length])
    depth = _nesting(raw)
    if depth > MAX_HEADER_DEPTH:
        raise Rejected(
            "corrupt", f"a header nested {depth} deep, over the {MAX_HEADER_DEPTH} one may be"
        )
    try:
        header = json.loads(raw)
        _check_header(header)
    except (ValueError, TypeError, KeyError, RecursionError) as err:
        raise Rejected("corrupt", f"unreadable header ({_short(str(err))})") from err
    return header, start + length


#: A JSON string (skipped whole, escapes included) or a bracket; possessive: linear time.
_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"|[\[\]{}]', re.DOTALL)


def _nesting(raw: bytes) -> int:
    """Return how deep brackets nest in ``raw``, outside strings, without parsing it."""
    depth = deepest = 0
    for token in _TOKEN.finditer(raw):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif bracket in (b"]", b"}"):
            depth -= 1
    return deepest


def _check_header(header: Any) -> None:
    if not isinstance(header, dict):
        raise TypeError("the header is not an object")
    if not isinstance(header["kind"], str) or not isinstance(header["material"], str):
        raise TypeError("kind and material must be text")
    if not isinstance(header["meta"], dict) or not isinstance(header["files"], list):
        raise TypeError("meta must be an object and files a list")
    for item in header["files"]:
        name, size, digest = item
        if not (isinstance(name, str) and valid_file_name(name)):
            raise ValueError(f"bad file name {_short(repr(name))}")
        if not (isinstance(size, int) and size >= 0 and isinstance(digest, str)):
            raise TypeError(f"bad size or checksum for {name!r}")
    if len({item[0] for item in header["files"]}) != len(header["files"]):
        raise ValueError("a file is listed twice")


def _files(blob: bytes, header: dict[str, Any], body_start: int) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    offset = body_start
    for name, size, _ in header["files"]:
        files[name] = bytes(blob[offset : offset + size])
        offset += size
    return files


def _difference(expected: str, artifact: Artifact) -> str:
    want, got = fields(expected), fields(artifact.key.material)
    first = ("kind", "tvm", "shim", "rules", "target")  # in the order mismatch() names reasons
    for name in sorted({*want, *got}, key=lambda n: (first.index(n) if n in first else 9, n)):
        if want.get(name) != got.get(name):
            theirs, ours = got.get(name, "(none)"), want.get(name, "(none)")
            return f"{name} is {_short(theirs)}, this runner's is {_short(ours)}"
    return f"a {artifact.key.kind} entry where a {want.get('kind')} was asked for"


def _short(text: str) -> str:
    return text if len(text) <= 60 else f"{text[:57]}..."
