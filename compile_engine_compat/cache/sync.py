"""Whole-store operations for CI: push the local cache, pull the fleet's, verify the store.

``compile-engine-compat cache push|pull|verify`` runs these. Unlike a lookup, each is a
deliberate, synchronous job: a call that fails or passes its deadline ends it with
:class:`SyncError` (the command exits 1) rather than being a quiet miss.

* :func:`push` signs and writes every whole local entry and index record that the store lacks
  (a CI job that warmed its local cache before the remote tier was set up, or in read-only mode).
* :func:`pull` verifies and stores locally every entry of this TVM and shim that the local
  directory lacks (a runner warmed before its tests start).
* :func:`verify` checks the signature of every entry under a prefix of the store (all versions by
  default), and that each lies under its own name; ``delete=True`` removes the refused ones.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from compile_engine_compat.cache import disk, remote
from compile_engine_compat.cache.artifact import Artifact, fields
from compile_engine_compat.cache.bounds import Deadline, OversizedReply
from compile_engine_compat.cache.signing import Rejected, seal, verify_entry

__all__ = ["Outcome", "SyncError", "pull", "push", "verify"]

#: A whole-store job's calls may each take this many lookup timeouts (big entries, listings).
_CALL_TIMEOUTS = 15
_T = TypeVar("_T")


class SyncError(RuntimeError):
    """A push, pull or verify could not run, or a call failed: the message says why."""


@dataclass
class Outcome:
    """What a push, pull or verify did.

    Attributes
    ----------
    done : int
        Entries pushed, pulled or verified.
    skipped : int
        Entries already there (push, pull).
    bytes : int
        Bytes written or read.
    refused : Counter
        Entries refused, by reason.
    """

    done: int = 0
    skipped: int = 0
    bytes: int = 0
    refused: Counter[str] = field(default_factory=Counter)


def _tier() -> remote.RemoteTier:
    if not disk.enabled():
        raise SyncError(f"the local cache is off ({disk.CACHE_DIR_ENV} is not set)")
    tier = remote.tier()
    if tier is None:
        raise SyncError(f"the remote cache is {remote.off_reason()}")
    return tier


def _call(tier: remote.RemoteTier, call: Callable[[Deadline], _T], what: str) -> _T:
    deadline = Deadline(tier.settings.timeout_s * _CALL_TIMEOUTS)  # a read extends it by size
    try:
        return tier.call(lambda: call(deadline), deadline)
    except Rejected:  # an entry refused as announced (too large): counted, never the job's end
        raise
    except TimeoutError as err:
        raise SyncError(f"{tier.url}: {what} got no answer in time") from err
    except Exception as err:
        raise SyncError(f"{tier.url}: {what} failed ({type(err).__name__}: {err})") from err


def push() -> Outcome:
    """Write every whole local entry and index record the store lacks, signed.

    Raises
    ------
    SyncError
        When either tier is off, the runner is read-only, or a call fails.
    """
    tier = _tier()
    if not tier.settings.writes:
        raise SyncError(f"this runner is read-only ({remote.MODE_ENV}): it never writes")
    outcome = Outcome()
    ttl = tier.settings.ttl_s
    for artifact in disk.local_artifacts():
        blob = seal(artifact, tier.key)
        if len(blob) > tier.settings.max_entry_bytes:
            outcome.refused["too-large"] += 1
            continue
        name = tier.name_of(artifact.key.kind, artifact.key.digest)
        written: bool = _call(tier, _put(tier, name, blob, ttl), f"writing {name}")
        if written:
            outcome.done += 1
            outcome.bytes += len(blob)
        else:
            outcome.skipped += 1
    return outcome


def pull() -> Outcome:
    """Verify and store locally every entry of this TVM and shim the local directory lacks.

    Kernels and other entries first, then index records (each needs its kernel).

    Raises
    ------
    SyncError
        When either tier is off or a call fails.
    """
    tier = _tier()
    names = _call(tier, lambda _: tier.backend.names(f"{tier.namespace}/"), "listing")
    names.sort(key=lambda name: "/index/" in name)
    outcome = Outcome()
    for name in names:
        found = _verified(tier, name, outcome)
        if found is None:
            continue
        if disk.has(found.key):
            outcome.skipped += 1
        elif disk.install(found):
            outcome.done += 1
        else:
            outcome.refused["not-installed"] += 1
    return outcome


def verify(prefix: str = "", delete: bool = False) -> Outcome:
    """Check every entry under ``prefix`` (the whole store by default); count the refused ones.

    Raises
    ------
    SyncError
        When the remote tier is off or a call fails.
    """
    tier = remote.tier()
    if tier is None:
        raise SyncError(f"the remote cache is {remote.off_reason()}")
    outcome = Outcome()
    for name in _call(tier, lambda _: tier.backend.names(prefix), "listing"):
        if _verified(tier, name, outcome) is not None:
            outcome.done += 1
        elif delete:
            _call(tier, _delete(tier, name), f"deleting {name}")
    return outcome


def _put(
    tier: remote.RemoteTier, name: str, blob: bytes, ttl: int | None
) -> Callable[[Deadline], bool]:
    def put(deadline: Deadline) -> bool:
        deadline.extend_for(len(blob))
        return tier.backend.put(name, blob, ttl)

    return put


def _get(tier: remote.RemoteTier, name: str, limit: int) -> Callable[[Deadline], bytes | None]:
    def get(deadline: Deadline) -> bytes | None:
        try:
            return tier.backend.get(name, limit, deadline)
        except OversizedReply as refused:
            raise Rejected("too-large", str(refused)) from refused

    return get


def _delete(tier: remote.RemoteTier, name: str) -> Callable[[Deadline], None]:
    return lambda _: tier.backend.delete(name)


def _verified(tier: remote.RemoteTier, name: str, outcome: Outcome) -> Artifact | None:
    """Read ``name`` and return its artifact when it is signed and lies under its own name."""
    limit = tier.settings.max_entry_bytes
    try:
        blob = _call(tier, _get(tier, name, limit), f"reading {name}")
        if blob is None:  # removed meanwhile
            return None
        outcome.bytes += len(blob)
        artifact = _opened(blob, tier, limit)
        material = fields(artifact.key.material)
        own_name = (
            f"tvm-{material.get('tvm')}_shim-{material.get('shim')}/"
            f"{artifact.key.kind}/{artifact.key.digest}"
        )
        if name != own_name:
            raise Rejected("other-key", f"{name} holds the entry {own_name}")
    except Rejected as rejected:
        outcome.refused[rejected.reason] += 1
        tier.reject(rejected.reason, f"{name}: {rejected.detail}")
        return None
    return artifact


def _opened(blob: bytes, tier: remote.RemoteTier, limit: int) -> Artifact:
    """verify_entry, every failure a refusal: verify --delete removes what it cannot parse."""
    try:
        return verify_entry(blob, tier.key, limit)
    except Rejected:
        raise
    except Exception as err:
        raise Rejected("corrupt", f"unreadable ({type(err).__name__}: {err!s:.100})") from err
