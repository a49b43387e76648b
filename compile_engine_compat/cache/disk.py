"""The persistent compile cache: ``jit`` kernels exported as shared libraries, loaded back later.

Opt-in: set ``COMPILE_ENGINE_COMPAT_CACHE_DIR``. Loading a cached kernel takes ~0.5 ms where
compiling it takes 40-200 ms, so a CI run that compiles the same functions in every process pays
the compile once. ``COMPILE_ENGINE_COMPAT_REMOTE_CACHE`` adds a tier shared by a fleet behind
this one (:mod:`.remote`; docs/remote-cache.md).

Layout: ``<dir>/v2/<digest>/`` is one entry, an *artifact* (:mod:`.artifact`): its files and
``meta.json`` (the layout, the artifact's kind and key material, each file's SHA-256, and the
metadata it was stored with). ``digest`` is the SHA-256 of the key material. Every kind lives
there and shares the size limit: a ``jit`` kernel (kind ``kernel``: ``kernel.so`` and
``source.tvmscript``, the scheduled PrimFunc without its name; meta: the symbol), and what
:func:`store_artifact` stores (a whole-module build, kind ``module``). A kernel's key material
(:func:`entry_key`) is the PrimFunc's structural hash, the target (with the LLVM ``opt-level``
chosen for the kernel, if any: ``CachedFunc.target``), the TVM version, the shim version, the
schedule rules version, the PassContext that ``tvm.compile`` runs under and the arity.

The generic API, for kernels and whole modules alike: :func:`artifact_key` keys an artifact
(kind, then ``name=value`` fields), :func:`store_artifact` stores files (bytes, or paths to
link) and metadata under it, :func:`load_artifact` returns the verified entry
(:class:`StoredArtifact`: its directory, files and metadata) or None. Both go through the remote
tier when one is configured (:mod:`.remote`): a local miss asks it (read-through: the entry is
verified, stored here, then loaded from here), and a new local entry is published to it from a
background thread (write-behind).

``<dir>/index-v2/<digest>.json`` maps a *Relax source function* to the kernel entry it was built
into, so that a warm ``jit`` loads the kernel without tracing and scheduling the function first
(that takes 10-20 ms; loading takes ~1 ms). Its key material is the Relax function's structural
hash with the same target, versions and PassContext; the record holds the function's TVMScript
(the collision check), the kernel entry's digest, the kernel's arity and a SHA-256 of all that.
The kernel entry attests each function indexed to it: ``<digest>/indexed/<source digest>`` holds
that function's TVMScript, and a record is followed only when its entry holds the same text.
The engine uses the index only while no user strategy or ``lower_call`` override is registered,
since those change what a source function lowers to, and only for functions without tensor
constants (their values are bound in the process, not stored).

Safety:

* Loading a shared library runs its code, so the directory must belong to the current user and
  must not be writable by group or others; otherwise :class:`CacheDirectoryError`.
* A library is loaded only from its entry's own directory, itself the user's and not writable
  by group or others, as a regular file (opened without following a symlink) of the user's that
  group and others cannot write, and whole (its ELF headers and segments inside the file):
  :mod:`compile_engine_compat.library_files`. Files are stored that way whatever the umask; an
  entry that fails is discarded with a :class:`CompileCacheWarning` and compiled again.
* An entry is written in a temporary directory and renamed into place, which is atomic: a reader
  sees a whole entry or none, and of two processes writing one key, one rename wins and the
  other's copy is dropped.
* A structural hash collision is caught by comparing the stored TVMScript text with the
  function's: it never loads the wrong kernel.
* An index record resolves only to an entry inside ``<dir>/v2``: its kernel must be an entry name
  (a digest; never ``../``, never an absolute path), the entry must be a real directory (never a
  symlink) whose library is a regular file, and the entry must attest the record's function. A
  record pointing anywhere else, or at another function's entry, is discarded with a
  :class:`CompileCacheWarning`; the function is then traced and compiled (or loaded by its own
  kernel key) as on a miss.
* A truncated, corrupt or foreign entry fails its checksum or key check: it is discarded with a
  :class:`CompileCacheWarning` and the kernel is compiled again. Never a crash.
* Storing never ends the process. LLVM exits the process when a file it writes fails (a file
  size limit, a full disk, a quota), so it writes none: the kernel's code is printed as assembly
  in memory, written by Python, and assembled and linked by the system compiler in a child
  process. A failed store is one :class:`CompileCacheWarning` ("kernel not stored (why)"); the
  kernel is used from memory. This costs ~7 ms per stored library (~60 ms -> ~67 ms).
* ``COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB`` (default 1024) bounds the total size; the least
  recently used entries go first.
* A writer killed mid-store leaves a ``.tmp-*`` staging directory (or a ``.del-*`` one, killed
  mid-delete). ``cache info`` counts them, ``cache clear`` removes them all, and the LRU pass
  after each store reclaims those untouched for :data:`LEFTOVER_AGE_S` (10 minutes): never a live
  writer's, which it keeps touching. The directories of the previous layout (``v1``,
  ``index-v1``) are reclaimed the same way.
* Entries from the remote tier are signed by the fleet's key and checked before they are stored
  here (:mod:`.signing`); once here they are local entries, under the same checks.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import tvm
import tvm.support.cc
import tvm_ffi

from compile_engine_compat import library_files
from compile_engine_compat.boundary import packed_imports_symbol, tvm_warnings_dropped
from compile_engine_compat.cache import remote, stats
from compile_engine_compat.cache.artifact import (
    Artifact,
    ArtifactKey,
    CompileCacheWarning,
    material_text,
    mismatch,
    valid_file_name,
)
from compile_engine_compat.targets import pass_context_text, target_text
from compile_engine_compat.version import __version__

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SIZE_ENV",
    "Artifact",
    "ArtifactKey",
    "CacheDirectoryError",
    "Cleared",
    "CompileCacheWarning",
    "EntryKey",
    "IndexHit",
    "NotStoredError",
    "SourceKey",
    "StoredArtifact",
    "active",
    "artifact_key",
    "cache_dir",
    "clear",
    "enabled",
    "entry_key",
    "export_library",
    "has",
    "info",
    "install",
    "load",
    "load_artifact",
    "load_by_source",
    "local_artifacts",
    "source_key",
    "store",
    "store_artifact",
    "store_index",
    "store_many",
    "store_quietly",
]

CACHE_DIR_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"
CACHE_SIZE_ENV = "COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB"
DEFAULT_SIZE_MB = 1024
_MIB = 1024 * 1024
LAYOUT = "v2"
INDEX = "index-v2"
#: Layouts of earlier releases: reclaimed whole, like a killed writer's leftovers, once untouched
#: for LEFTOVER_AGE_S (an older shim may still be using them meanwhile).
_OLDER_LAYOUTS = ("v1", "index-v1")
#: The kinds of artifact the engine stores: a ``jit`` kernel, a source function's index record.
KERNEL = "kernel"
INDEX_KIND = "index"
_LIBRARY = "kernel.so"
_SOURCE = "source.tvmscript"
_META = "meta.json"
_STAMPS = ".verified.json"  # the entry's files as last verified (see _stamp)
#: Prefix of staging files and directories: written there, then renamed into place.
_STAGING = ".tmp-"
#: Prefix of an entry being deleted: renamed first, so no reader sees it half-deleted.
_TRASH = ".del-"
#: Leftovers untouched for this long belong to a killed writer: the LRU pass reclaims them.
#: A live writer touches its staging directory all along (files created, the linker writing).
LEFTOVER_AGE_S = 600
#: In a kernel entry: ``<source digest>`` files holding the TVMScript of each Relax function the
#: index maps to this entry. The index trusts a record only when its entry attests the function.
_INDEXED = "indexed"
#: An entry's name: a SHA-256 hex digest. An index record naming anything else is refused, so a
#: record can never resolve outside ``<cache>/v1`` (``../``, an absolute path).
_DIGEST = re.compile(r"[0-9a-f]{64}")


class CacheDirectoryError(PermissionError):
    """The cache directory is unsafe (not ours, or writable by others) or unusable."""


@dataclass(frozen=True)
class EntryKey:
    """Identifies one kernel on disk.

    Attributes
    ----------
    digest : str
        SHA-256 hex of ``material``: the entry's directory name.
    material : str
        The key text: structural hash, target, versions, PassContext, arity.
    source : str
        TVMScript of the scheduled PrimFunc without its name: the collision check.
    symbol : str
        The kernel's function name in the library.
    """

    digest: str
    material: str
    source: str
    symbol: str

    @property
    def artifact(self) -> ArtifactKey:
        """The kernel's key as an artifact (same digest), for the generic store and the remote."""
        return ArtifactKey(KERNEL, self.material)


@dataclass(frozen=True)
class SourceKey:
    """Identifies a Relax source function in the index.

    Attributes
    ----------
    digest : str
        SHA-256 hex of ``material``: the index record's file name.
    material : str
        The key text: the function's structural hash, target, versions, PassContext.
    function : tvm.relax.Function
        The function, without its ``global_symbol``; its TVMScript is the collision check.
    """

    digest: str
    material: str
    function: Any

    def source(self) -> str:
        """Return the function's TVMScript (printed on demand: it costs ~0.5 ms)."""
        return str(self.function.script(show_meta=False))

    @property
    def artifact(self) -> ArtifactKey:
        """The index record's key as an artifact (same digest), for the remote tier."""
        return ArtifactKey(INDEX_KIND, self.material)


@dataclass(frozen=True)
class StoredArtifact:
    """An artifact in the local directory, verified: its files are ``directory / name``.

    Attributes
    ----------
    key : ArtifactKey
    directory : Path
        The entry's directory; it may be evicted by another process's LRU pass later, so load
        what it holds soon (a loaded shared library stays loaded).
    files : tuple of str
        The names of its files.
    meta : Mapping[str, Any]
        The metadata it was stored with.
    """

    key: ArtifactKey
    directory: Path
    files: tuple[str, ...]
    meta: Mapping[str, Any]

    def path(self, name: str) -> Path:
        """Return the path of the file ``name`` (one of :attr:`files`)."""
        if name not in self.files:
            raise KeyError(f"the {self.key.kind} artifact has no file {name!r} ({self.files})")
        return self.directory / name

    def read(self, name: str) -> bytes:
        """Return the content of the file ``name``."""
        return self.path(name).read_bytes()

    def load_library(self, name: str) -> Any | None:
        """Return the shared library ``name`` loaded (``tvm.runtime.load_module``), or None when
        it does not load: the entry is then discarded with a :class:`CompileCacheWarning`.

        The library is loaded only from the entry's own private folder, as a regular file of
        the current user's that others cannot write (:mod:`compile_engine_compat.library_files`).
        """
        try:
            return _load_module(self.path(name))
        except Exception as err:  # unsafe, truncated, or not a library TVM loads
            _discard(self.directory, f"the library does not load ({type(err).__name__}: {err})")
            return None


@dataclass(frozen=True)
class IndexHit:
    """A kernel found through the index: its module, symbol and arity."""

    module: Any
    symbol: str
    num_inputs: int
    num_outputs: int


def cache_dir() -> Path | None:
    """Return the configured cache root, or None when the cache is off."""
    value = os.environ.get(CACHE_DIR_ENV, "")
    return Path(value).expanduser() if value else None


def enabled() -> bool:
    """Return True when ``COMPILE_ENGINE_COMPAT_CACHE_DIR`` is set (the cache is on)."""
    return bool(os.environ.get(CACHE_DIR_ENV, ""))


def active() -> bool:
    """Return True when the cache is on and its directory is safe to load libraries from.

    Raises
    ------
    CacheDirectoryError
        When the directory is set but unsafe (not the user's, writable by others) or unusable.
    """
    return _checked_root() is not None


def _checked_root(configured: Path | None = None) -> Path | None:
    root = cache_dir() if configured is None else configured
    if root is None:
        return None
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        layout = root / LAYOUT
        layout.mkdir(mode=0o700, exist_ok=True)
        index = root / INDEX
        index.mkdir(mode=0o700, exist_ok=True)
    except OSError as err:
        raise CacheDirectoryError(f"{CACHE_DIR_ENV}={root}: cannot create it ({err})") from err
    for path in (root, layout, index):
        _check_owner_and_mode(path)
    return layout


def _check_owner_and_mode(path: Path) -> None:
    info_ = path.stat()  # a symlink to a safe directory is fine: its target is what is checked
    if not stat.S_ISDIR(info_.st_mode):
        raise CacheDirectoryError(f"{CACHE_DIR_ENV}: {path} is not a directory")
    if info_.st_uid != os.getuid():
        raise CacheDirectoryError(
            f"{CACHE_DIR_ENV}: {path} belongs to uid {info_.st_uid}, not to the current user "
            f"(uid {os.getuid()}); cached kernels are shared libraries that run when loaded, "
            "so only a directory of your own is used"
        )
    if info_.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheDirectoryError(
            f"{CACHE_DIR_ENV}: {path} is writable by group or others (mode "
            f"{stat.S_IMODE(info_.st_mode):o}); cached kernels are shared libraries that run when "
            f"loaded. Fix it with: chmod go-w {path}"
        )


def entry_key(
    funcs: tvm.IRModule, symbol: str, target: Any, arity: tuple[int, int], rules: str
) -> EntryKey:
    """Key the kernel ``symbol`` of ``funcs`` built for ``target``.

    The PrimFunc's name is stripped: equal kernels lowered under different unique names share
    one entry (the stored symbol is looked up in the library). ``rules`` is the version of the
    schedule rules that made it (the pipeline's ``RULES_VERSION``): the cache stores, it does
    not know how kernels are made.
    """
    prim_func = funcs[symbol].without_attr("global_symbol")
    key = artifact_key(
        KERNEL,
        rules=rules,
        target=target_text(target),
        pass_context=pass_context_text(),
        structural_hash=tvm_ffi.structural_hash(prim_func),
        arity=f"{arity[0]},{arity[1]}",
    )
    return EntryKey(key.digest, key.material, str(prim_func.script()), symbol)


def artifact_key(kind: str, **fields: object) -> ArtifactKey:
    """Key an artifact of ``kind`` built by this TVM and this shim from what ``fields`` name.

    The key material is ``kind=<kind>``, ``tvm=<version>``, ``shim=<version>``, then one
    ``name=value`` line per field, in order. Name everything the artifact depends on: by
    convention ``rules`` (the schedule rules' version), ``target`` (:func:`.targets.target_text`),
    ``pass_context`` (:func:`.targets.pass_context_text`) and ``structural_hash``; the remote tier
    says which of ``tvm``, ``shim``, ``rules`` and ``target`` differ when it refuses an entry.

    Examples
    --------
    A whole-module build (what ``relay.build``'s cache keys)::

        key = disk.artifact_key("module", rules=RULES_VERSION, target=target_text(target),
                                pass_context=pass_context_text(),
                                structural_hash=tvm_ffi.structural_hash(mod))
    """
    versions = {"tvm": tvm.__version__, "shim": __version__}
    return ArtifactKey(kind, material_text(kind, {**versions, **fields}))


def source_key(function: Any, structural_hash: int, target: Any, rules: str) -> SourceKey:
    """Key the Relax source ``function`` (``global_symbol`` already stripped) for ``target``.

    Parameters
    ----------
    function : tvm.relax.Function
    structural_hash : int
        ``tvm_ffi.structural_hash(function)``; the engine has it already from its own key.
    target : tvm.target.Target
    rules : str
        The schedule rules' version, as for :func:`entry_key`.
    """
    key = artifact_key(
        INDEX_KIND,
        rules=rules,
        target=target_text(target),
        pass_context=pass_context_text(),
        structural_hash=structural_hash,
    )
    return SourceKey(key.digest, key.material, function)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(key: EntryKey) -> tuple[Any, str] | None:
    """Return ``(module, symbol)`` from the cache, or None on a miss (or a discarded entry).

    A local miss asks the remote tier when one is configured (read-through).
    """
    layout = _checked_root()
    if layout is None:
        return None
    found = _entry_for(layout, key.artifact)
    if found is None:
        return None
    entry, meta = found
    try:
        source = (entry / _SOURCE).read_text()
    except (OSError, UnicodeDecodeError) as err:  # an entry of this key, but not a kernel's files
        _discard(entry, f"not a kernel entry ({type(err).__name__})")
        return None
    if source != key.source:
        # Same key material (a structural hash collision), another function: never load it.
        # The entry stays: it is a valid kernel for that other function.
        _warn_collision(entry)
        return None
    return _load_library(entry, meta)


def _entry_for(
    layout: Path, key: ArtifactKey, deadline: remote.Deadline | None = None
) -> tuple[Path, dict[str, Any]] | None:
    """Return ``(entry, meta)`` of ``key``'s local entry; on a miss, pull it from the remote."""
    found = _verified_entry(layout / key.digest)
    if found is not None:
        stats.count(f"local.hit.{key.kind}")
        return found
    stats.count(f"local.miss.{key.kind}")
    tier = remote.tier()
    if tier is None:
        return None
    artifact = tier.fetch(key, deadline)
    if artifact is None:
        return None
    installed = _install_entry(layout, artifact)
    if installed is not None:
        return layout / key.digest, installed  # just written from verified bytes: not re-read
    return _verified_entry(layout / key.digest)  # another process installed it first


def _install_entry(layout: Path, artifact: Artifact) -> dict[str, Any] | None:
    """Store a verified remote ``artifact`` as a local entry (not published back); return its
    ``meta.json`` record, or None when it was there already or could not be written."""
    try:
        installed = _write_entry(layout, artifact.key, artifact.files, artifact.meta)
    except (OSError, ValueError) as err:
        warnings.warn(
            f"compile cache: a remote {artifact.key.kind} entry was not stored locally "
            f"({_reason(err)}); it is compiled here",
            CompileCacheWarning,
            stacklevel=4,
        )
        return None
    _evict_when_due(layout, artifact.size())
    return installed


def _warn_collision(path: Path) -> None:
    warnings.warn(
        f"compile cache: {path} holds another function with the same structural hash; "
        "compiling instead of loading it",
        CompileCacheWarning,
        stacklevel=3,
    )


def _verified_entry(entry: Path) -> tuple[Path, dict[str, Any]] | None:
    """Return ``(entry, meta)`` for a whole entry of this layout; discard a damaged one.

    ``entry`` is ``<cache>/v2/<digest>``: a symlink there could resolve anywhere, so it is refused
    (a library is only ever loaded from a real directory inside the cache).
    """
    try:
        status = entry.lstat()
    except FileNotFoundError:
        return None
    except OSError as err:
        _discard(entry, f"unreadable entry ({err})")
        return None
    if stat.S_ISLNK(status.st_mode):
        _discard(entry, "a symlink (only entries inside the cache directory are loaded)")
        return None
    try:
        meta = json.loads((entry / _META).read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        _discard(entry, f"unreadable metadata ({err})")
        return None
    problem = _verify(entry, meta)
    if problem:
        _discard(entry, problem)
        return None
    return entry, meta


def _load_module(library: Path) -> Any:
    """``tvm.runtime.load_module(library)`` after the checks of :func:`.library_files
    .private_library`: the entry's folder and the file are the user's own and private, the
    file is no symlink and is a whole shared library."""
    with library_files.private_library(library, "a cached library") as path:
        return tvm.runtime.load_module(path)


def _load_library(entry: Path, meta: dict[str, Any]) -> tuple[Any, str] | None:
    try:
        with tvm_warnings_dropped():
            module = _load_module(entry / _LIBRARY)
        symbol = str(meta["meta"]["symbol"])
        module[symbol]  # fails now, not at the first call, if the symbol is missing
    except Exception as err:  # a library that passed its checksum but does not load
        _discard(entry, f"the library does not load ({type(err).__name__}: {err})")
        return None
    _touch(entry)
    return module, symbol


def _touch(entry: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(entry / _META)  # recency for the LRU eviction


def load_by_source(key: SourceKey) -> IndexHit | None:
    """Return the kernel the index maps ``key``'s function to, or None.

    None on a miss, on a record whose function text differs (a structural hash collision), and
    on a record or kernel entry that is damaged, foreign or gone (discarded with a
    :class:`CompileCacheWarning`): the caller then traces and compiles the function. A local
    miss asks the remote tier when one is configured: its record and kernel are pulled, checked
    and stored here, then used like local ones.
    """
    layout = _checked_root()
    if layout is None:
        return None
    path = layout.parent / INDEX / f"{key.digest}.json"
    try:
        text = path.read_text()
    except FileNotFoundError:
        stats.count(f"local.miss.{INDEX_KIND}")
        if not _pull_index(layout, key):
            return None
        text = None
    else:
        stats.count(f"local.hit.{INDEX_KIND}")
    try:
        record = _verified_record(json.loads(path.read_text() if text is None else text), key)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as err:
        _discard(path, f"bad index record ({type(err).__name__}: {err})")
        return None
    source = key.source()
    if record["source"] != source:
        _warn_collision(path)
        return None
    found = _verified_entry(layout / record["kernel"])
    if found is None:
        return None  # the kernel was evicted or damaged; the caller compiles and re-indexes
    if _attested(found[0], key.digest) != source:
        # A record pointing at a whole entry of another function (forged, or copied from another
        # cache): never load it. The entry stays: it is a valid kernel for that function.
        _discard(path, f"index record: {found[0]} was not built from this function")
        return None
    loaded = _load_library(*found)
    if loaded is None:
        return None  # the kernel was evicted or damaged; the caller compiles and re-indexes
    num_inputs, num_outputs = record["arity"]
    return IndexHit(loaded[0], loaded[1], int(num_inputs), int(num_outputs))


def _pull_index(layout: Path, key: SourceKey) -> bool:
    """Pull ``key``'s index record and its kernel from the remote tier; True when stored here."""
    tier = remote.tier()
    if tier is None:
        return False
    deadline = tier.deadline()  # one timeout for the record and its kernel together
    artifact = tier.fetch(key.artifact, deadline)
    return artifact is not None and _install_index(layout, tier, artifact, deadline)


def _install_index(
    layout: Path, tier: remote.RemoteTier, artifact: Artifact, deadline: remote.Deadline
) -> bool:
    """Store a verified remote index record here, with its kernel (local, or pulled too).

    The record is signed, and says which kernel entry (its key material) the function was built
    into: that kernel must come from this TVM, shim, rules version and PassContext too.
    """
    try:
        kernel = ArtifactKey(KERNEL, str(artifact.meta["kernel_material"]))
        if kernel.digest != artifact.meta["kernel"]:
            raise ValueError("its kernel's digest does not match the kernel's key material")
        num_inputs, num_outputs = (int(n) for n in artifact.meta["arity"])
        source = artifact.files[_SOURCE].decode()
    except (KeyError, TypeError, ValueError, UnicodeDecodeError) as err:
        tier.reject("corrupt", f"index record {artifact.key.digest}: {err}")
        return False
    problem = mismatch(
        artifact.key.material, kernel.material, only=("tvm", "shim", "rules", "pass_context")
    )
    if problem is not None:
        tier.reject(problem, f"index record {artifact.key.digest} names a kernel of another build")
        return False
    found = _entry_for(layout, kernel, deadline)
    if found is None or not _attest(found[0], artifact.key.digest, source):
        return False
    _write_record(layout, artifact.key, source, kernel.digest, (num_inputs, num_outputs))
    return True


def _record_digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def _verified_record(record: Any, key: SourceKey) -> dict[str, Any]:
    """Return the record's payload; raise ValueError when it is damaged or foreign."""
    payload = record["payload"]
    if record["sha256"] != _record_digest(payload):
        raise ValueError("checksum mismatch")
    if payload["layout"] != INDEX or payload["material"] != key.material:
        raise ValueError("foreign record (its key material does not match its name)")
    if not isinstance(payload["source"], str) or len(payload["arity"]) != 2:
        raise ValueError("malformed record")
    kernel = payload["kernel"]
    if not isinstance(kernel, str) or not _DIGEST.fullmatch(kernel):
        raise ValueError(f"its kernel {kernel!r} is outside the cache (not an entry name)")
    return dict(payload)


def _attested(entry: Path, source_digest: str) -> str | None:
    """Return the function text ``entry`` holds for a source digest (None: it holds none)."""
    try:
        return (entry / _INDEXED / source_digest).read_text()
    except (OSError, UnicodeDecodeError):
        return None


def _attest(entry: Path, source_digest: str, source: str) -> bool:
    """Record in ``entry`` that the function ``source`` (of that digest) is built into it; atomic.

    Returns False when the entry is gone (evicted or discarded meanwhile) or is no real
    directory (a symlink would take the write outside the cache): nothing to index then.
    """
    try:
        if not stat.S_ISDIR(entry.lstat().st_mode):
            return False
        if _attested(entry, source_digest) == source:
            return True
        indexed = entry / _INDEXED
        indexed.mkdir(mode=0o700, exist_ok=True)
        _write_atomically(indexed, source_digest, source)
    except FileNotFoundError:
        return False
    return True


def _write_atomically(directory: Path, name: str, text: str) -> None:
    """Write ``directory/name`` through a staging file and a rename: readers see all or nothing."""
    handle, staging = tempfile.mkstemp(prefix=_STAGING, dir=directory)
    os.close(handle)
    try:
        _write_bytes(Path(staging), text.encode())
        os.replace(staging, directory / name)  # atomic; equal texts race harmlessly
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)


def store_index(key: SourceKey, kernel: EntryKey, arity: tuple[int, int]) -> None:
    """Record that ``key``'s function is built into ``kernel``'s entry; atomic.

    A new record is published to the remote tier too (write-behind).
    """
    layout = _checked_root()
    if layout is None:
        return
    source = key.source()
    # The entry's attestation first: a reader that sees the record then always sees it too.
    if not _attest(layout / kernel.digest, key.digest, source):
        return
    if _write_record(layout, key.artifact, source, kernel.digest, arity):
        tier = remote.tier()
        if tier is not None:
            artifact = Artifact(
                key.artifact,
                {_SOURCE: source.encode()},
                {"kernel": kernel.digest, "kernel_material": kernel.material, "arity": [*arity]},
            )
            tier.publish(lambda: artifact)


def _write_record(
    layout: Path, key: ArtifactKey, source: str, kernel: str, arity: tuple[int, int]
) -> bool:
    """Write the index record of ``key``; False when the same record is there already."""
    payload = {
        "layout": INDEX,
        "material": key.material,
        "source": source,
        "kernel": kernel,
        "arity": list(arity),
    }
    record = json.dumps({"payload": payload, "sha256": _record_digest(payload)}, indent=1)
    path = layout.parent / INDEX / f"{key.digest}.json"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if path.read_text() == record:
            return False
    _write_atomically(layout.parent / INDEX, f"{key.digest}.json", record)
    return True


def _verify(entry: Path, meta: Any) -> str:
    """Return "" when the entry is whole and of this layout, else why not."""
    if not isinstance(meta, dict) or meta.get("layout") != LAYOUT:
        return "foreign entry (unknown layout)"
    material = meta.get("material")
    if not isinstance(material, str) or hashlib.sha256(material.encode()).hexdigest() != entry.name:
        return "foreign entry (its key material does not match its name)"
    files = meta.get("files")
    if (
        not isinstance(files, dict)
        or not files
        or not isinstance(meta.get("meta"), dict)
        or not all(valid_file_name(name) and isinstance(d, str) for name, d in files.items())
    ):
        return "foreign entry (malformed file list)"
    stamps = _read_stamps(entry)
    checked: dict[str, list[Any]] = {}
    try:
        for name, digest in files.items():
            status = (entry / name).lstat()
            if not stat.S_ISREG(status.st_mode):
                return f"foreign entry (its {name} is not a regular file: a symlink?)"
            stamp = _stamp(digest, status)
            if stamps.get(name) == stamp:
                continue  # this very file was hashed before and has not changed since
            if _sha256(entry / name) != digest:
                return f"corrupt or truncated entry ({name}: checksum mismatch)"
            checked[name] = stamp
    except OSError as err:
        return f"incomplete entry ({err})"
    if checked:
        _write_stamps(entry, {**stamps, **checked})
    return ""


def _stamp(digest: str, status: os.stat_result) -> list[Any]:
    """What a verified file is recognised by later: its digest, size, mtime and inode.

    Any write to the file (a truncation, a bit flipped by a tool, a replacement) changes one of
    them, so a model's library of tens of MB is hashed once, not at every load (~60 ms for
    ResNet-18's 45 MB). Moving or linking the file does not change them.
    """
    return [digest, status.st_size, status.st_mtime_ns, status.st_ino]


def _read_stamps(entry: Path) -> dict[str, Any]:
    try:
        stamps = json.loads((entry / _STAMPS).read_text())
    except (OSError, ValueError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _write_stamps(entry: Path, stamps: Mapping[str, list[Any]]) -> None:
    """Record ``stamps`` in the entry (best effort: without them the files are hashed again)."""
    staged = entry / f"{_STAMPS}.{os.getpid()}.{threading.get_ident()}"
    with contextlib.suppress(OSError):
        _write_bytes(staged, json.dumps(stamps).encode())
        staged.replace(entry / _STAMPS)
    with contextlib.suppress(OSError):
        staged.unlink(missing_ok=True)


def store(key: EntryKey, module: Any) -> None:
    """Export ``module`` as ``key``'s entry; atomic, and a no-op when the entry exists.

    Raises
    ------
    NotStoredError
        When the library cannot be written (a size limit, a full disk, no system compiler).
    """
    store_many([key], module)


def store_many(keys: Sequence[EntryKey], module: Any) -> None:
    """Export ``module`` once and store it as each of ``keys``'s entries (``jit_many``).

    One library is built in a staging directory and hard-linked into every entry; each entry is
    renamed into place whole (atomic), and entries that exist already are left alone. Each new
    entry is published to the remote tier too (write-behind).

    Raises
    ------
    NotStoredError
        When the library cannot be written (a size limit, a full disk, no system compiler).
    """
    layout = _checked_root()
    if layout is None:
        return
    missing = [key for key in keys if not (layout / key.digest).exists()]
    if not missing:
        return
    with _staging(layout) as build:
        with tvm_warnings_dropped():
            library = _export(module, build)
        added = library.stat().st_size
        for key in missing:
            files: dict[str, bytes | Path] = {_LIBRARY: library, _SOURCE: key.source.encode()}
            if _write_entry(layout, key.artifact, files, {"symbol": key.symbol}) is not None:
                _publish(layout, key.artifact)
                added += len(key.source)
    _evict_when_due(layout, added)


def store_artifact(
    key: ArtifactKey,
    files: Mapping[str, bytes | Path],
    meta: Mapping[str, Any] | None = None,
    root: Path | None = None,
) -> bool:
    """Store an artifact under ``key``: locally (atomic), then in the remote tier (write-behind).

    The generic form of what :func:`store_many` does for kernels: ``relay.build``'s whole-module
    libraries and any other build output use it. A no-op when the entry exists.

    Parameters
    ----------
    key : ArtifactKey
        From :func:`artifact_key`.
    files : Mapping[str, bytes or Path]
        File name -> content, or a path to a file to hard-link (or copy) into the entry, such as
        a library from :func:`export_library`. Names are plain (no ``/``), never ``meta.json``.
    meta : Mapping[str, Any], optional
        JSON-able details for the loader (a symbol, an arity, input names).
    root : pathlib.Path, optional
        The cache root to store under: the configured one (:func:`cache_dir`) by default. A
        store behind a build passes the root of the build's time, so that an entry never lands
        in a directory configured after the build returned.

    Returns
    -------
    bool
        True when this call stored it; False when the cache is off or the entry was there.

    Raises
    ------
    ValueError
        For a file name that is not one plain name.
    OSError
        When a file cannot be written (a full disk, a size limit); see :func:`store_quietly`.
    """
    layout = _checked_root(root)
    if layout is None:
        return False
    created = _write_entry(layout, key, files, dict(meta or {})) is not None
    if created:
        _publish(layout, key)
        _evict_when_due(layout, _files_size(files))
    return created


def _files_size(files: Mapping[str, bytes | Path]) -> int:
    return sum(c.stat().st_size if isinstance(c, Path) else len(c) for c in files.values())


def load_artifact(key: ArtifactKey) -> StoredArtifact | None:
    """Return ``key``'s artifact from the local directory, else from the remote tier, else None.

    The entry's files are checked against their checksums first; a damaged one is discarded
    with a :class:`CompileCacheWarning` (None). A remote entry is verified (signature, versions,
    target), stored locally, then returned from there.
    """
    layout = _checked_root()
    if layout is None:
        return None
    found = _entry_for(layout, key)
    if found is None:
        return None
    entry, meta = found
    _touch(entry)
    return StoredArtifact(key, entry, tuple(meta["files"]), meta["meta"])


def _write_entry(
    layout: Path, key: ArtifactKey, files: Mapping[str, bytes | Path], meta: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Write ``key``'s entry through a staging directory and a rename; return its ``meta.json``
    record when this call wrote it, None when the entry was there (or another process won)."""
    for name in files:
        if not valid_file_name(name):
            raise ValueError(f"artifact file name {name!r} is not one plain name")
    if (layout / key.digest).exists():
        return None
    with _staging(layout) as entry:
        digests = {}
        for name, content in files.items():
            if isinstance(content, Path):
                _link_or_copy(content, entry / name)
                digests[name] = _sha256(entry / name)
            else:  # hashed in memory: a big artifact is not read back
                _write_bytes(entry / name, content)
                digests[name] = hashlib.sha256(content).hexdigest()
            _private_mode(entry / name)  # a linked library has the compiler's mode
        # Renaming the entry keeps its files' stamps: the first load need not hash them again.
        _write_stamps(entry, {n: _stamp(d, (entry / n).lstat()) for n, d in digests.items()})
        record = {
            "layout": LAYOUT,
            "kind": key.kind,
            "material": key.material,
            "files": digests,
            "meta": dict(meta),
        }
        _write_bytes(entry / _META, json.dumps(record, indent=1).encode())
        try:
            entry.rename(layout / key.digest)
        except OSError:  # another process renamed its copy first
            return None
    return record


def _publish(layout: Path, key: ArtifactKey) -> None:
    """Hand ``key``'s new local entry to the remote tier (read on its writer thread)."""
    tier = remote.tier()
    if tier is not None:
        tier.publish(lambda: _local_artifact(layout / key.digest))


def _local_artifact(entry: Path) -> Artifact | None:
    """Return the local entry as an artifact (files read), or None when it is gone or damaged."""
    found = _verified_entry(entry)
    if found is None:
        return None
    meta = found[1]
    files = {name: (entry / name).read_bytes() for name in meta["files"]}
    return Artifact(ArtifactKey(meta["kind"], meta["material"]), files, meta["meta"])


def install(artifact: Artifact) -> bool:
    """Store a verified remote ``artifact`` locally (``cache pull``); True when it is here now.

    An index record is stored with its kernel, which must be here or in the remote tier.
    """
    layout = _checked_root()
    if layout is None:
        return False
    if artifact.key.kind != INDEX_KIND:
        return (layout / artifact.key.digest).exists() or _install_entry(
            layout, artifact
        ) is not None
    tier = remote.tier()
    if tier is None:
        return False
    return _install_index(layout, tier, artifact, tier.deadline())


def has(key: ArtifactKey) -> bool:
    """Return True when ``key``'s entry (or index record) is in the local directory."""
    layout = _checked_root()
    if layout is None:
        return False
    if key.kind == INDEX_KIND:
        return (layout.parent / INDEX / f"{key.digest}.json").exists()
    return (layout / key.digest).exists()


def local_artifacts() -> Iterator[Artifact]:
    """Yield every whole local entry and index record as an artifact (``cache push``)."""
    layout = _checked_root()
    if layout is None:
        return
    for entry in sorted(layout.iterdir()):
        if not entry.name.startswith("."):
            artifact = _local_artifact(entry)
            if artifact is not None:
                yield artifact
    for path in _index_records(layout.parent / INDEX):
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            payload = json.loads(path.read_text())["payload"]
            if not _DIGEST.fullmatch(str(payload["kernel"])):
                continue  # a record pointing outside the cache: never followed
            kernel = json.loads((layout / payload["kernel"] / _META).read_text())
            yield Artifact(
                ArtifactKey(INDEX_KIND, payload["material"]),
                {_SOURCE: payload["source"].encode()},
                {
                    "kernel": payload["kernel"],
                    "kernel_material": kernel["material"],
                    "arity": payload["arity"],
                },
            )


@contextlib.contextmanager
def _staging(layout: Path) -> Iterator[Path]:
    """Yield a new ``.tmp-*`` directory in ``layout``, removed afterwards unless renamed away."""
    staging = Path(tempfile.mkdtemp(prefix=_STAGING, dir=layout))
    try:
        yield staging
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


class NotStoredError(RuntimeError):
    """A kernel could not be written to the cache; the message is one line saying why."""


def export_library(module: Any, directory: Path) -> Path:
    """Export ``module`` (a ``tvm.compile`` result) as ``directory/kernel.so``, never letting LLVM
    write a file (see below); pass the path to :func:`store_artifact`.

    Raises
    ------
    NotStoredError
        When the library cannot be written (a size limit, a full disk, no system compiler).
    """
    with tvm_warnings_dropped():
        return _export(module, directory)


def _export(module: Any, directory: Path) -> Path:
    """Export ``module`` as ``directory/kernel.so`` with no file written by LLVM in this process.

    LLVM ends the whole process (``report_fatal_error``, exit code 1) when a file it writes fails:
    a file size limit, a full disk, a quota. So no LLVM stream ever touches a file here: the code
    is printed as assembly in memory, written by Python (a failure is an ``OSError``), then
    assembled and linked by the system compiler in a child process (a failure is an exit code).
    This mirrors ``Module.export_library``, whose object files LLVM writes itself.
    """
    lib = getattr(module, "mod", module)  # tvm.compile gives an Executable around the library
    return _export_parts(lib, _llvm_modules(lib), directory)


def _llvm_modules(lib: Any) -> list[Any]:
    dsos = list(lib._collect_dso_modules())
    for dso in dsos:
        if dso.kind != "llvm":
            raise NotStoredError(f"a {dso.kind!r} module is not exported through assembly")
    return dsos


@dataclass(frozen=True)
class DetachedLibrary:
    """What exporting a built module takes, read from it in the builder's thread.

    The LLVM modules' code as LLVM IR text (printing it only reads the module), and the module
    itself for its imports (the VM's bytecode and constants, read when packed). The export
    (:func:`export_detached`) parses the IR into LLVM modules of its own: it may run on another
    thread while this process runs, JIT-compiles or exports the module it was detached from,
    since no LLVM context is ever used by two threads at once.
    """

    module: Any
    llvm_ir: tuple[str, ...]


def detach_library(module: Any) -> DetachedLibrary:
    """Take what :func:`export_detached` needs from ``module`` (a ``tvm.compile`` result).

    Raises
    ------
    NotStoredError
        For a module holding code other than LLVM's (device code).
    """
    lib = getattr(module, "mod", module)
    return DetachedLibrary(lib, tuple(str(dso.inspect_source("ll")) for dso in _llvm_modules(lib)))


def export_detached(detached: DetachedLibrary, directory: Path) -> Path:
    """:func:`export_library` of a :class:`DetachedLibrary`, its LLVM modules parsed afresh from
    their IR (in ``directory``, the caller's private staging directory).

    Raises
    ------
    NotStoredError
        When the library cannot be written (a size limit, a full disk, no system compiler).
    """
    sources = [directory / f"lib{index}.ll" for index in range(len(detached.llvm_ir))]
    try:
        for path, text in zip(sources, detached.llvm_ir):
            _write_bytes(path, text.encode())
        # Not under tvm_warnings_dropped() as a whole: this runs on the store-behind thread while
        # the program goes on, and taking file descriptor 2 for the store's seconds would hold
        # back the program's own stderr. Only the VM's serialization, which logs "Scope Saving"
        # lines, is (_export_parts).
        dsos = [tvm.runtime.module.load_module(str(path)) for path in sources]
        return _export_parts(detached.module, dsos, directory)
    finally:
        for path in sources:
            with contextlib.suppress(OSError):
                path.unlink()


def _export_parts(lib: Any, dsos: list[Any], directory: Path) -> Path:
    """Export ``lib`` whose LLVM code is ``dsos`` (its own modules, or ones parsed from them)."""
    sources: list[Path] = []
    try:
        paths = [directory / f"lib{index}.s" for index in range(len(dsos))]
        # LLVM prints each module's assembly with the GIL released: one module per CPU at once.
        sources.extend(_on_threads(_write_assembly, list(zip(paths, dsos))))
        if lib.imports:  # device code, the VM's bytecode and constants: packed, as TVM does
            if not dsos:
                raise NotStoredError("device code without a host LLVM module")
            with tvm_warnings_dropped():  # TVM's C++ log of the VM's sections: a moment
                sources.extend(_write_packed_imports(directory, lib, dsos[0]))
        library = directory / _LIBRARY
        try:
            tvm.support.cc.create_shared(
                str(library), [str(path) for path in sources if path.suffix == ".s"]
            )
        except RuntimeError as err:  # the compiler's exit code: its first message says why
            lines = [line for line in str(err).splitlines()[1:] if line.strip()]
            raise NotStoredError(
                f"the system compiler could not link it ({lines[0] if lines else err})"
            ) from err
        return library
    finally:
        for path in sources:
            with contextlib.suppress(OSError):
                path.unlink()


# GNU as before DWARF 5 support (binutils < 2.35, and >= 2.35 without --gdwarf-5) rejects the
# `.file N "dir" "name" [md5 ...]` form LLVM prints; `.file N "dir/name"` names the same file.
_DWARF5_FILE = re.compile(r'^(\s*\.file\s+\d+\s+)"([^"\n]*)"\s+"([^"\n]*)"[^\n]*$', re.MULTILINE)


def _on_threads(function: Callable[[Path, Any], Path], calls: list[tuple[Path, Any]]) -> list[Path]:
    """``[function(*call) for call in calls]``, on up to one plain thread per CPU.

    Not a ``ThreadPoolExecutor``: a store may run while the interpreter exits (the writer thread
    of :mod:`.store_behind`, flushed at exit), when executors refuse new work.
    """
    results: list[Path | None] = [None] * len(calls)
    errors: list[BaseException] = []
    lock = threading.Lock()
    todo = iter(range(len(calls)))

    def work() -> None:
        while True:
            with lock:
                index = next(todo, None)
            if index is None:
                return
            try:
                results[index] = function(*calls[index])
            except BaseException as err:  # re-raised in the caller's thread
                errors.append(err)
                return

    threads = [threading.Thread(target=work) for _ in range(max(1, min(len(calls), _cpus())))]
    for thread in threads[1:]:
        thread.start()
    work()  # the caller's thread takes a share too
    for thread in threads[1:]:
        thread.join()
    if errors:
        raise errors[0]
    return [path for path in results if path is not None]


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _write_packed_imports(directory: Path, lib: Any, host: Any) -> list[Path]:
    """Write ``lib``'s imports packed as TVM packs them, as the files that link them in.

    On ELF platforms the packed bytes (a model's constants: tens of MB) are written as they are
    and the assembler includes them (``.incbin``) under TVM's symbol for them
    (:func:`.boundary.packed_imports_symbol`): printing them as assembly text through LLVM took
    seconds per 10 MB, and assembling that text as long again. Elsewhere, LLVM's packing module
    is printed as assembly, as before.
    """
    if sys.platform.startswith("linux"):
        blob = tvm.get_global_func("runtime.ModulePackImportsToTensor")(lib)
        data = directory / "devc.bin"
        _write_bytes(data, memoryview(blob.numpy()).cast("B"))
        symbol = packed_imports_symbol()
        quoted = str(data).replace("\\", "\\\\").replace('"', '\\"')
        text = (
            f'\t.section .rodata.{symbol},"a",@progbits\n\t.globl {symbol}\n'
            f"\t.type {symbol}, @object\n\t.p2align 4\n{symbol}:\n"
            f'\t.incbin "{quoted}"\n\t.size {symbol}, .-{symbol}\n'
            '\t.section .note.GNU-stack,"",@progbits\n'
        )
        assembly = directory / "devc.s"
        _write_bytes(assembly, text.encode())
        return [assembly, data]
    target = host.get_function("_get_target_string")()
    pack = tvm.get_global_func("runtime.ModulePackImportsToLLVM")
    return [_write_assembly(directory / "devc.s", pack(lib, False, target, ""))]


def _write_assembly(path: Path, module: Any) -> Path:
    text = _DWARF5_FILE.sub(r'\1"\2/\3"', str(module.inspect_source("s")))
    _write_bytes(path, text.encode())
    return path


def _write_bytes(path: Path, data: bytes | memoryview) -> None:
    """Write a new file ``path`` through Python: a failure is an ``OSError``, never a signal.

    Python ignores SIGXFSZ, so a write past ``RLIMIT_FSIZE`` fails with EFBIG. An interpreter
    embedded without that (SIGXFSZ at its default action) would be killed instead: the size is
    checked against the limit first, exactly, since the file is new and ``data`` is all of it.
    """
    if hasattr(signal, "SIGXFSZ") and signal.getsignal(signal.SIGXFSZ) != signal.SIG_IGN:
        import resource  # POSIX only, like SIGXFSZ

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY and len(data) > limit:
            raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), str(path))
    # 0o644 before the umask: never writable by group or others, whatever the umask.
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)
    with os.fdopen(os.open(path, flags, 0o644), "wb") as file:
        file.write(data)


def _private_mode(path: Path) -> None:
    """Make ``path`` unwritable by group and others, whatever the umask (a library others may
    write is never loaded: :mod:`compile_engine_compat.library_files`)."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        path.chmod(mode & ~(stat.S_IWGRP | stat.S_IWOTH))


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        _write_bytes(target, source.read_bytes())


def _discard(entry: Path, why: str) -> None:
    warnings.warn(
        f"compile cache: discarding {entry}: {why}; the kernel is compiled again",
        CompileCacheWarning,
        stacklevel=2,
    )
    _remove(entry)


def _remove(entry: Path) -> None:
    # Rename first: other processes then see the entry gone at once, never half-deleted.
    trash = entry.with_name(f"{_TRASH}{entry.name}-{uuid.uuid4().hex[:8]}")
    try:
        entry.rename(trash)
    except OSError:
        return
    _delete(trash)


def _delete(path: Path) -> None:
    """Delete a file or a directory tree; a symlink goes, never what it points to."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _size_limit() -> int:
    """Return the size limit in bytes from ``COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB``.

    A value that is not a finite number >= 0 (``nan``, ``inf``, ``1e400``, ``-5``, ``abc``) gives
    one :class:`CompileCacheWarning` naming it and the default: like the package's other
    settings, a bad one never fails a ``jit``, and eviction always runs with a real limit.
    """
    value = os.environ.get(CACHE_SIZE_ENV, "")
    if not value.strip():
        return DEFAULT_SIZE_MB * _MIB
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = math.nan
    if not (math.isfinite(megabytes) and megabytes >= 0):
        warnings.warn(
            f"compile cache: {CACHE_SIZE_ENV}={value!r} is not a size in MiB (a finite number "
            f">= 0); using the default, {DEFAULT_SIZE_MB}",
            CompileCacheWarning,
            stacklevel=2,
        )
        return DEFAULT_SIZE_MB * _MIB
    return int(megabytes * _MIB)


def _entries(layout: Path) -> Iterator[tuple[Path, float, int]]:
    """Yield ``(entry, last use, size)`` for every whole entry.

    A library hard-linked into several entries (``jit_many``) counts once, in the first entry.
    """
    seen: set[tuple[int, int]] = set()
    for entry in layout.iterdir():
        if entry.name.startswith("."):
            continue
        try:
            used = (entry / _META).stat().st_mtime
            _, size = _tree_usage(entry, seen)
        except OSError:
            continue
        yield entry, used, size


def _tree_usage(top: Path, seen: set[tuple[int, int]]) -> tuple[float, int]:
    """Return ``(latest mtime, bytes)`` of ``top`` and the files under it.

    Each inode's bytes count once across ``seen``. The latest mtime is the last activity: a
    writer adding files to a directory, or a linker writing a file in it, moves it forward.
    """
    status = os.lstat(top)
    if not stat.S_ISDIR(status.st_mode):
        seen.add((status.st_dev, status.st_ino))
        return status.st_mtime, status.st_size
    latest, size = status.st_mtime, 0
    for directory, _, files in os.walk(top):
        for name in files:
            status = os.lstat(os.path.join(directory, name))
            latest = max(latest, status.st_mtime)
            if (status.st_dev, status.st_ino) not in seen:
                seen.add((status.st_dev, status.st_ino))
                size += status.st_size
    return latest, size


def _leftovers(root: Path) -> list[tuple[Path, float, int]]:
    """Return ``(path, last activity, bytes)`` for each staging or trash leftover.

    A writer stages an entry (``v2/.tmp-*``) or an index record (``index-v2/.tmp-*``) and renames
    it into place; a deleted entry is renamed to ``v2/.del-*`` first. A process killed meanwhile
    leaves them behind, and nothing else ever removes them. The directories of older layouts
    (``v1``, ``index-v1``) count as leftovers too, whole: no release of this shim reads them.
    """
    found = []
    seen: set[tuple[int, int]] = set()
    for directory in (root / LAYOUT, root / INDEX):
        for path in directory.iterdir():
            if path.name.startswith((_STAGING, _TRASH)):
                with contextlib.suppress(OSError):  # gone meanwhile: renamed or removed
                    found.append((path, *_tree_usage(path, seen)))
    for name in _OLDER_LAYOUTS:
        with contextlib.suppress(OSError):  # absent, or removed meanwhile
            found.append((root / name, *_tree_usage(root / name, seen)))
    return found


def _reclaim_stale_leftovers(root: Path) -> None:
    # Only those untouched for LEFTOVER_AGE_S: a live writer's staging directory is younger.
    stale_before = time.time() - LEFTOVER_AGE_S
    for path, last_activity, _ in _leftovers(root):
        if last_activity < stale_before:
            _delete(path)


#: The LRU pass walks every entry (~30 us each), too slow to follow each of a thousand kernels
#: pulled from the remote tier: a process runs it on its first store into a directory, then once
#: it has added this share of the size limit there since its last pass (the limit may be
#: overshot by that much meanwhile).
_EVICT_SHARE = 1 / 32
_evict_lock = threading.Lock()
_added_since_pass: dict[Path, int] = {}  # layout -> bytes this process added since its last pass


def _evict_when_due(layout: Path, added: int) -> None:
    limit = _size_limit()
    with _evict_lock:
        if layout in _added_since_pass:
            total = _added_since_pass[layout] + added
            if total < limit * _EVICT_SHARE:
                _added_since_pass[layout] = total
                return
        _added_since_pass[layout] = 0
    _evict(layout, limit)


def _evict(layout: Path, limit: int) -> None:
    _reclaim_stale_leftovers(layout.parent)
    entries = sorted(_entries(layout), key=lambda e: e[1])
    total = sum(size for _, _, size in entries)
    evicted: set[str] = set()
    for entry, _, size in entries:
        if total <= limit:
            break
        _remove(entry)
        evicted.add(entry.name)
        total -= size
    if evicted:  # index records of evicted kernels would only ever miss: drop them too
        for record in _index_records(layout.parent / INDEX):
            with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
                if json.loads(record.read_text())["payload"]["kernel"] in evicted:
                    record.unlink()


def info() -> dict[str, Any]:
    """Describe the cache.

    Returns
    -------
    dict
        ``directory`` (None when the cache is off), ``entries``, ``kinds`` (entries by kind:
        ``kernel``, ``module``, ...), ``indexed_functions``,
        ``bytes`` (all of it on disk, leftovers included), ``leftovers`` and ``leftover_bytes``
        (staging and trash left by killed writers) and ``limit_bytes``.

    Raises
    ------
    CacheDirectoryError
        When the directory is unsafe.
    """
    layout = _checked_root()
    if layout is None:
        return {
            "directory": None,
            "entries": 0,
            "kinds": {},
            "indexed_functions": 0,
            "bytes": 0,
            "leftovers": 0,
            "leftover_bytes": 0,
            "limit_bytes": _size_limit(),
        }
    entries = list(_entries(layout))
    leftovers = _leftovers(layout.parent)
    leftover_bytes = sum(size for _, _, size in leftovers)
    kinds: dict[str, int] = {}
    for entry, _, _ in entries:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            kind = str(json.loads((entry / _META).read_text()).get("kind"))
            kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "directory": str(layout.parent),
        "entries": len(entries),
        "kinds": dict(sorted(kinds.items())),
        "indexed_functions": len(_index_records(layout.parent / INDEX)),
        "bytes": sum(size for _, _, size in entries) + leftover_bytes,
        "leftovers": len(leftovers),
        "leftover_bytes": leftover_bytes,
        "limit_bytes": _size_limit(),
    }


def _index_records(index: Path) -> list[Path]:
    return [p for p in index.glob("*.json") if not p.name.startswith(".")]


class Cleared(NamedTuple):
    """What :func:`clear` removed: kernel entries, and leftovers of killed writers."""

    entries: int
    leftovers: int


def clear() -> Cleared:
    """Remove every entry, index record and leftover (however recent), and the saved counters;
    say how many went. The remote tier is left alone."""
    layout = _checked_root()
    if layout is None:
        return Cleared(0, 0)
    leftovers = _leftovers(layout.parent)
    for path, _, _ in leftovers:
        _delete(path)
    count = 0
    for entry in list(layout.iterdir()):
        if not entry.name.startswith("."):
            count += 1
            _remove(entry)
    for record in list((layout.parent / INDEX).iterdir()):
        _delete(record)
    stats.reset(layout.parent)
    return Cleared(count, len(leftovers))


def store_quietly(write: Callable[[], None], what: str = "kernel") -> None:
    """Run ``write``; a failure (a full disk, a size limit) is one one-line warning.

    A cache is an optimisation: a failed store never fails the caller. An unsafe directory
    (:class:`CacheDirectoryError`) is the user's to fix and is raised.
    """
    try:
        write()
    except CacheDirectoryError:
        raise
    except Exception as err:  # a cache is an optimisation: it must not fail the jit itself
        consequence = "it is used from memory" if what == "kernel" else "the next jit traces it"
        warnings.warn(
            f"compile cache: {what} not stored ({_reason(err)}); {consequence}",
            CompileCacheWarning,
            stacklevel=3,
        )


def _reason(err: Exception) -> str:
    """Say in one line why a store failed (a compiler's error can span many lines)."""
    if isinstance(err, OSError) and err.strerror:
        return f"{err.strerror}: {err.filename}" if err.filename else err.strerror
    first = (str(err).strip().splitlines() or [""])[0]
    return first if isinstance(err, NotStoredError) else f"{type(err).__name__}: {first}"
