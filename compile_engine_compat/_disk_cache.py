"""The persistent compile cache: ``jit`` kernels exported as shared libraries, loaded back later.

Opt-in: set ``COMPILE_ENGINE_COMPAT_CACHE_DIR``. Loading a cached kernel takes ~0.5 ms where
compiling it takes 40-200 ms, so a CI run that compiles the same functions in every process pays
the compile once.

Layout: ``<dir>/v1/<digest>/`` holds ``kernel.so``, ``source.tvmscript`` (the scheduled PrimFunc,
its name stripped) and ``meta.json`` (the key material, the kernel's symbol and the SHA-256 of the
other two files). ``digest`` is the SHA-256 of the key material: the PrimFunc's structural hash,
the target, the TVM version, the shim version, the schedule rules version and the PassContext
that ``tvm.compile`` runs under.

``<dir>/index-v1/<digest>.json`` maps a *Relax source function* to the kernel entry it was built
into, so that a warm ``jit`` loads the kernel without tracing and scheduling the function first
(that takes 10-20 ms; loading takes ~1 ms). Its key material is the Relax function's structural
hash with the same target, versions and PassContext; the record holds the function's TVMScript
(the collision check), the kernel entry's digest, the kernel's arity and a SHA-256 of all that.
The engine uses the index only while no user strategy or ``lower_call`` override is registered,
since those change what a source function lowers to, and only for functions without tensor
constants (their values are bound in the process, not stored).

Safety:

* Loading a shared library runs its code, so the directory must belong to the current user and
  must not be writable by group or others; otherwise :class:`CacheDirectoryError`.
* An entry is written in a temporary directory and renamed into place, which is atomic: a reader
  sees a whole entry or none, and of two processes writing one key, one rename wins and the
  other's copy is dropped.
* A structural hash collision is caught by comparing the stored TVMScript text with the
  function's: it never loads the wrong kernel.
* A truncated, corrupt or foreign entry fails its checksum or key check: it is discarded with a
  :class:`CompileCacheWarning` and the kernel is compiled again. Never a crash.
* ``COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB`` (default 1024) bounds the total size; the least
  recently used entries go first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tvm
import tvm_ffi

from ._cache import CachedFunc, pass_context_text, target_text  # the shared build fingerprint
from ._lowering import Kernel, build_kernel
from ._schedule import RULES_VERSION
from ._version import __version__

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SIZE_ENV",
    "CacheDirectoryError",
    "CompileCacheWarning",
    "EntryKey",
    "IndexHit",
    "SourceKey",
    "cache_dir",
    "clear",
    "enabled",
    "entry_key",
    "info",
    "kernel_for",
    "kernels_for",
    "load",
    "load_by_source",
    "source_key",
    "store",
]

CACHE_DIR_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"
CACHE_SIZE_ENV = "COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB"
DEFAULT_SIZE_MB = 1024
LAYOUT = "v1"
INDEX = "index-v1"
_LIBRARY = "kernel.so"
_SOURCE = "source.tvmscript"
_META = "meta.json"


class CacheDirectoryError(PermissionError):
    """The cache directory is unsafe (not ours, or writable by others) or unusable."""


class CompileCacheWarning(UserWarning):
    """A cache entry was unusable (corrupt, truncated, foreign) and was recompiled."""


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


def _checked_root() -> Path | None:
    root = cache_dir()
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


def entry_key(funcs: tvm.IRModule, symbol: str, target: Any, arity: tuple[int, int]) -> EntryKey:
    """Key the kernel ``symbol`` of ``funcs`` built for ``target``.

    The PrimFunc's name is stripped: equal kernels lowered under different unique names share
    one entry (the stored symbol is looked up in the library).
    """
    prim_func = funcs[symbol].without_attr("global_symbol")
    material = "\n".join(
        [
            f"structural_hash={tvm_ffi.structural_hash(prim_func)}",
            f"target={target_text(target)}",
            f"tvm={tvm.__version__}",
            f"shim={__version__}",
            f"rules={RULES_VERSION}",
            f"pass_context={pass_context_text()}",
            f"arity={arity[0]},{arity[1]}",
        ]
    )
    digest = hashlib.sha256(material.encode()).hexdigest()
    return EntryKey(digest, material, str(prim_func.script()), symbol)


def source_key(function: Any, structural_hash: int, target: Any) -> SourceKey:
    """Key the Relax source ``function`` (``global_symbol`` already stripped) for ``target``.

    Parameters
    ----------
    function : tvm.relax.Function
    structural_hash : int
        ``tvm_ffi.structural_hash(function)``; the engine has it already from its own key.
    target : tvm.target.Target
    """
    material = "\n".join(
        [
            "kind=relax-source",
            f"structural_hash={structural_hash}",
            f"target={target_text(target)}",
            f"tvm={tvm.__version__}",
            f"shim={__version__}",
            f"rules={RULES_VERSION}",
            f"pass_context={pass_context_text()}",
        ]
    )
    return SourceKey(hashlib.sha256(material.encode()).hexdigest(), material, function)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(key: EntryKey) -> tuple[Any, str] | None:
    """Return ``(module, symbol)`` from the cache, or None on a miss (or a discarded entry)."""
    layout = _checked_root()
    if layout is None:
        return None
    found = _verified_entry(layout / key.digest)
    if found is None:
        return None
    entry, meta = found
    if (entry / _SOURCE).read_text() != key.source:
        # Same key material (a structural hash collision), another function: never load it.
        # The entry stays: it is a valid kernel for that other function.
        _warn_collision(entry)
        return None
    return _load_library(entry, meta)


def _warn_collision(path: Path) -> None:
    warnings.warn(
        f"compile cache: {path} holds another function with the same structural hash; "
        "compiling instead of loading it",
        CompileCacheWarning,
        stacklevel=3,
    )


def _verified_entry(entry: Path) -> tuple[Path, dict[str, Any]] | None:
    """Return ``(entry, meta)`` for a whole entry of this layout; discard a damaged one."""
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


def _load_library(entry: Path, meta: dict[str, Any]) -> tuple[Any, str] | None:
    try:
        module = tvm.runtime.load_module(str(entry / _LIBRARY))
        symbol = str(meta["symbol"])
        module[symbol]  # fails now, not at the first call, if the symbol is missing
    except Exception as err:  # a library that passed its checksum but does not load
        _discard(entry, f"the library does not load ({type(err).__name__}: {err})")
        return None
    with contextlib.suppress(OSError):
        os.utime(entry / _META)  # recency for the LRU eviction
    return module, symbol


def load_by_source(key: SourceKey) -> IndexHit | None:
    """Return the kernel the index maps ``key``'s function to, or None.

    None on a miss, on a record whose function text differs (a structural hash collision), and
    on a damaged record or kernel entry, which is discarded with a :class:`CompileCacheWarning`.
    """
    layout = _checked_root()
    if layout is None:
        return None
    path = layout.parent / INDEX / f"{key.digest}.json"
    try:
        record = _verified_record(json.loads(path.read_text()), key)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as err:
        _discard(path, f"unreadable index record ({type(err).__name__}: {err})")
        return None
    if record["source"] != key.source():
        _warn_collision(path)
        return None
    found = _verified_entry(layout / str(record["kernel"]))
    loaded = _load_library(*found) if found is not None else None
    if loaded is None:
        return None  # the kernel was evicted or damaged; the caller compiles and re-indexes
    num_inputs, num_outputs = record["arity"]
    return IndexHit(loaded[0], loaded[1], int(num_inputs), int(num_outputs))


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
    return dict(payload)


def store_index(key: SourceKey, kernel: EntryKey, arity: tuple[int, int]) -> None:
    """Record that ``key``'s function is built into ``kernel``'s entry; atomic."""
    layout = _checked_root()
    if layout is None:
        return
    payload = {
        "layout": INDEX,
        "material": key.material,
        "source": key.source(),
        "kernel": kernel.digest,
        "arity": list(arity),
    }
    record = json.dumps({"payload": payload, "sha256": _record_digest(payload)}, indent=1)
    index = layout.parent / INDEX
    handle, staging = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=index)
    try:
        with os.fdopen(handle, "w") as file:
            file.write(record)
        os.replace(staging, index / f"{key.digest}.json")  # atomic; equal records race harmlessly
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)


def _verify(entry: Path, meta: Any) -> str:
    """Return "" when the entry is whole and of this version, else why not."""
    if not isinstance(meta, dict) or meta.get("layout") != LAYOUT:
        return "foreign entry (unknown layout)"
    if (
        meta.get("material") is None
        or hashlib.sha256(str(meta["material"]).encode()).hexdigest() != entry.name
    ):
        return "foreign entry (its key material does not match its name)"
    try:
        if _sha256(entry / _SOURCE) != meta.get("source_sha256"):
            return "corrupt entry (source checksum mismatch)"
        if _sha256(entry / _LIBRARY) != meta.get("library_sha256"):
            return "corrupt or truncated entry (library checksum mismatch)"
    except OSError as err:
        return f"incomplete entry ({err})"
    return ""


def store(key: EntryKey, module: Any) -> None:
    """Export ``module`` as ``key``'s entry; atomic, and a no-op when the entry exists."""
    layout = _checked_root()
    if layout is None:
        return
    final = layout / key.digest
    if final.exists():
        return
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=layout))
    try:
        module.export_library(str(staging / _LIBRARY))
        (staging / _SOURCE).write_text(key.source)
        _write_meta(staging, key)
        try:
            staging.rename(final)  # atomic; fails when another process renamed its copy first
        except OSError:
            return
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _evict(layout, _size_limit())


def store_shared(keys: list[EntryKey], library: Path) -> None:
    """Store one exported library built for several keys (``jit_many``), linked into each."""
    layout = _checked_root()
    if layout is None or not keys:
        return
    for key in keys:
        if (layout / key.digest).exists():
            continue
        entry = Path(tempfile.mkdtemp(prefix=".tmp-", dir=layout))
        try:
            _link_or_copy(library, entry / _LIBRARY)
            (entry / _SOURCE).write_text(key.source)
            _write_meta(entry, key)
            with contextlib.suppress(OSError):
                entry.rename(layout / key.digest)
        finally:
            if entry.exists():
                shutil.rmtree(entry, ignore_errors=True)
    _evict(layout, _size_limit())


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _write_meta(entry: Path, key: EntryKey) -> None:
    meta = {
        "layout": LAYOUT,
        "material": key.material,
        "symbol": key.symbol,
        "library_sha256": _sha256(entry / _LIBRARY),
        "source_sha256": _sha256(entry / _SOURCE),
    }
    (entry / _META).write_text(json.dumps(meta, indent=1))


def _discard(entry: Path, why: str) -> None:
    warnings.warn(
        f"compile cache: discarding {entry}: {why}; the kernel is compiled again",
        CompileCacheWarning,
        stacklevel=2,
    )
    _remove(entry)


def _remove(entry: Path) -> None:
    # Rename first: other processes then see the entry gone at once, never half-deleted.
    trash = entry.with_name(f".del-{entry.name}-{uuid.uuid4().hex[:8]}")
    try:
        entry.rename(trash)
    except OSError:
        return
    if trash.is_dir():
        shutil.rmtree(trash, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            trash.unlink()


def _size_limit() -> int:
    value = os.environ.get(CACHE_SIZE_ENV, "")
    try:
        megabytes = float(value) if value else DEFAULT_SIZE_MB
    except ValueError:
        megabytes = DEFAULT_SIZE_MB
    return int(megabytes * 1024 * 1024)


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
            size = 0
            for file in entry.iterdir():
                status = file.stat()
                if (status.st_dev, status.st_ino) not in seen:
                    seen.add((status.st_dev, status.st_ino))
                    size += status.st_size
        except OSError:
            continue
        yield entry, used, size


def _evict(layout: Path, limit: int) -> None:
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
    """Describe the cache: directory, entry count, total bytes, size limit.

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
            "indexed_functions": 0,
            "bytes": 0,
            "limit_bytes": _size_limit(),
        }
    entries = list(_entries(layout))
    return {
        "directory": str(layout.parent),
        "entries": len(entries),
        "indexed_functions": len(_index_records(layout.parent / INDEX)),
        "bytes": sum(size for _, _, size in entries),
        "limit_bytes": _size_limit(),
    }


def _index_records(index: Path) -> list[Path]:
    return [p for p in index.glob("*.json") if not p.name.startswith(".")]


def clear() -> int:
    """Remove every entry (and leftover temporary directories); return how many entries went."""
    layout = _checked_root()
    if layout is None:
        return 0
    count = 0
    for entry in list(layout.iterdir()):
        if entry.name.startswith("."):
            shutil.rmtree(entry, ignore_errors=True)  # leftover staging or trash
        else:
            count += 1
            _remove(entry)
    for record in list((layout.parent / INDEX).iterdir()):
        with contextlib.suppress(OSError):
            record.unlink()
    return count


# -- kernels through the cache ------------------------------------------------------------------


def _key_of(cached: CachedFunc) -> EntryKey:
    name = cached.prim_fn_var.name_hint
    return entry_key(cached.funcs, name, cached.target, (len(cached.inputs), len(cached.outputs)))


def _kernel(cached: CachedFunc, module: Any = None, symbol: str | None = None) -> Kernel:
    return build_kernel(
        cached.funcs,
        symbol or cached.prim_fn_var.name_hint,
        cached.target,
        len(cached.inputs),
        len(cached.outputs),
        [value for _, value in cached.constants],
        module=module,
        plain=(lambda: cached.prim_func) if cached._plain_fallback else None,
    )


def _store_quietly(write: Callable[[], None]) -> None:
    try:
        write()
    except CacheDirectoryError:
        raise
    except Exception as err:  # a full disk or a failed link must not fail the jit itself
        warnings.warn(
            f"compile cache: could not store a kernel ({type(err).__name__}: {err})",
            CompileCacheWarning,
            stacklevel=3,
        )


def _arity(cached: CachedFunc) -> tuple[int, int]:
    return len(cached.inputs), len(cached.outputs)


def _index(source: SourceKey | None, cached: CachedFunc, key: EntryKey) -> None:
    # A kernel with bound tensor constants cannot be rebuilt from the index: it holds no values.
    if source is not None and not cached.constants:
        store_index(source, key, _arity(cached))


def kernel_for(cached: CachedFunc, source: SourceKey | None = None) -> Kernel:
    """Return ``cached``'s kernel: loaded from the persistent cache, else compiled and stored.

    Without ``COMPILE_ENGINE_COMPAT_CACHE_DIR`` this is a plain compile.

    Parameters
    ----------
    cached : CachedFunc
    source : SourceKey, optional
        The source function's index key: the stored kernel is indexed under it too.

    Raises
    ------
    CacheDirectoryError
        When the cache directory is unsafe.
    """
    if _checked_root() is None:
        return _kernel(cached)
    key = _key_of(cached)
    hit = load(key)
    if hit is not None:
        _store_quietly(lambda: _index(source, cached, key))
        return _kernel(cached, *hit)
    kernel = _kernel(cached)

    def write() -> None:
        store(key, kernel.module)
        _index(source, cached, key)

    _store_quietly(write)
    return kernel


def _export_and_store(keys: list[EntryKey], module: Any) -> None:
    with tempfile.TemporaryDirectory(prefix="compile-engine-compat-") as tmp:
        library = Path(tmp) / _LIBRARY
        module.export_library(str(library))
        store_shared(keys, library)


def kernels_for(
    cacheds: Sequence[CachedFunc], sources: Sequence[SourceKey | None] | None = None
) -> list[Kernel]:
    """Return the kernels of ``cacheds`` (one target): cache hits loaded, the rest built at once.

    The misses go into one IRModule and one ``tvm.compile`` (``jit_many`` calls this once per
    chunk); the library is stored once and linked into each miss's entry.

    Parameters
    ----------
    cacheds : sequence of CachedFunc
    sources : sequence of SourceKey or None, optional
        Index keys, one per ``cacheds`` item (None: not indexed).
    """
    use_cache = _checked_root() is not None
    sources = list(sources) if sources is not None else [None] * len(cacheds)
    kernels: list[Kernel | None] = [None] * len(cacheds)
    keys: list[EntryKey | None] = [None] * len(cacheds)
    for index, cached in enumerate(cacheds):
        if use_cache:
            keys[index] = key = _key_of(cached)
            hit = load(key)
            if hit is not None:
                kernels[index] = _kernel(cached, *hit)
    misses = [i for i, k in enumerate(kernels) if k is None]
    if misses:
        funcs = {
            cacheds[i].prim_fn_var.name_hint: cacheds[i].funcs[cacheds[i].prim_fn_var]
            for i in misses
        }
        target = cacheds[misses[0]].target
        try:
            module = tvm.compile(tvm.IRModule(funcs), target=target)
        except Exception:
            # One function TVM cannot build fails the whole module: build each alone, so that
            # the others still get their kernels and a failing one gets build_kernel's fallback.
            return [kernel_for(cached, source) for cached, source in zip(cacheds, sources)]
        stored = [k for i in misses if (k := keys[i]) is not None]
        # Measured: exporting the batch and loading it back (to skip the LLVM JIT's ~25 ms per
        # function looked up) costs more than the JIT here, so the compiled module is used as is.
        if stored:
            _store_quietly(lambda: _export_and_store(stored, module))
        for i in misses:
            kernels[i] = _kernel(cacheds[i], module)
    if use_cache:

        def index_all() -> None:
            for cached, entry, source in zip(cacheds, keys, sources):
                if entry is not None:
                    _index(source, cached, entry)

        _store_quietly(index_all)
    return [k for k in kernels if k is not None]
