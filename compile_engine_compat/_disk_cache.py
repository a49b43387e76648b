"""The persistent compile cache: ``jit`` kernels exported as shared libraries, loaded back later.

Opt-in: set ``COMPILE_ENGINE_COMPAT_CACHE_DIR``. Loading a cached kernel takes ~0.5 ms where
compiling it takes 40-200 ms, so a CI run that compiles the same functions in every process pays
the compile once.

Layout: ``<dir>/v1/<digest>/`` holds ``kernel.so``, ``source.tvmscript`` (the scheduled PrimFunc,
its name stripped) and ``meta.json`` (the key material, the kernel's symbol and the SHA-256 of the
other two files). ``digest`` is the SHA-256 of the key material: the PrimFunc's structural hash,
the target, the TVM version, the shim version and the schedule rules version.

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

from ._cache import CachedFunc, target_text
from ._lowering import Kernel, build_kernel
from ._schedule import RULES_VERSION
from ._version import __version__

__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SIZE_ENV",
    "CacheDirectoryError",
    "CompileCacheWarning",
    "EntryKey",
    "cache_dir",
    "clear",
    "entry_key",
    "info",
    "kernel_for",
    "kernels_for",
    "load",
    "store",
]

CACHE_DIR_ENV = "COMPILE_ENGINE_COMPAT_CACHE_DIR"
CACHE_SIZE_ENV = "COMPILE_ENGINE_COMPAT_CACHE_SIZE_MB"
DEFAULT_SIZE_MB = 1024
LAYOUT = "v1"
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
        The key text: structural hash, target, versions, arity.
    source : str
        TVMScript of the scheduled PrimFunc without its name: the collision check.
    symbol : str
        The kernel's function name in the library.
    """

    digest: str
    material: str
    source: str
    symbol: str


def cache_dir() -> Path | None:
    """Return the configured cache root, or None when the cache is off."""
    value = os.environ.get(CACHE_DIR_ENV, "")
    return Path(value).expanduser() if value else None


def _checked_root() -> Path | None:
    root = cache_dir()
    if root is None:
        return None
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        layout = root / LAYOUT
        layout.mkdir(mode=0o700, exist_ok=True)
    except OSError as err:
        raise CacheDirectoryError(f"{CACHE_DIR_ENV}={root}: cannot create it ({err})") from err
    for path in (root, layout):
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
            f"arity={arity[0]},{arity[1]}",
        ]
    )
    digest = hashlib.sha256(material.encode()).hexdigest()
    return EntryKey(digest, material, str(prim_func.script()), symbol)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(key: EntryKey) -> tuple[Any, str] | None:
    """Return ``(module, symbol)`` from the cache, or None on a miss (or a discarded entry)."""
    layout = _checked_root()
    if layout is None:
        return None
    entry = layout / key.digest
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
    if (entry / _SOURCE).read_text() != key.source:
        # Same key material (a structural hash collision), another function: never load it.
        # The entry stays: it is a valid kernel for that other function.
        warnings.warn(
            f"compile cache: {entry} holds another function with the same structural hash; "
            "compiling instead of loading it",
            CompileCacheWarning,
            stacklevel=2,
        )
        return None
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
    shutil.rmtree(trash, ignore_errors=True)


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
    for entry, _, size in entries:
        if total <= limit:
            break
        _remove(entry)
        total -= size


def info() -> dict[str, Any]:
    """Describe the cache: directory, entry count, total bytes, size limit.

    Raises
    ------
    CacheDirectoryError
        When the directory is unsafe.
    """
    layout = _checked_root()
    if layout is None:
        return {"directory": None, "entries": 0, "bytes": 0, "limit_bytes": _size_limit()}
    entries = list(_entries(layout))
    return {
        "directory": str(layout.parent),
        "entries": len(entries),
        "bytes": sum(size for _, _, size in entries),
        "limit_bytes": _size_limit(),
    }


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


def kernel_for(cached: CachedFunc) -> Kernel:
    """Return ``cached``'s kernel: loaded from the persistent cache, else compiled and stored.

    Without ``COMPILE_ENGINE_COMPAT_CACHE_DIR`` this is a plain compile.

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
        return _kernel(cached, *hit)
    kernel = _kernel(cached)
    _store_quietly(lambda: store(key, kernel.module))
    return kernel


def _exported(module: Any, also: Callable[[Path], None]) -> Any:
    """Export ``module`` to a temporary library, hand its path to ``also``, load it back."""
    with tempfile.TemporaryDirectory(prefix="compile-engine-compat-") as tmp:
        library = Path(tmp) / _LIBRARY
        module.export_library(str(library))
        also(library)
        return tvm.runtime.load_module(str(library))  # dlopen keeps it mapped once deleted


def _export_and_store(keys: list[EntryKey], module: Any) -> None:
    _exported(module, lambda library: store_shared(keys, library))


def kernels_for(cacheds: Sequence[CachedFunc]) -> list[Kernel]:
    """Return the kernels of ``cacheds`` (one target): cache hits loaded, the rest built at once.

    The misses go into ONE IRModule and ONE ``tvm.compile``; the library is stored once and
    linked into each miss's entry.
    """
    use_cache = _checked_root() is not None
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
        module = tvm.compile(tvm.IRModule(funcs), target=target)
        stored = [k for i in misses if (k := keys[i]) is not None]
        # Measured: exporting the batch and loading it back (to skip the LLVM JIT's ~25 ms per
        # function looked up) costs more than the JIT here, so the compiled module is used as is.
        if stored:
            _store_quietly(lambda: _export_and_store(stored, module))
        for i in misses:
            kernels[i] = _kernel(cacheds[i], module)
    return [k for k in kernels if k is not None]
