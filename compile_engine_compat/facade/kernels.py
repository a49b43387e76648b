"""``jit``'s kernels: the persistent cache first, then the pipeline's build stage, then a store.

``jit``'s whole composition is here: the kernel the persistent index holds for a source function
(:func:`indexed_kernel`), the kernel of a lowered function (:func:`kernel_for`, many at once:
:func:`kernels_for`) and the engine's build bookkeeping for each entry (:class:`KernelRecord`).
The engine (:mod:`.engine`) only keys, lowers and keeps entries.

The facade composes the two below it: :mod:`compile_engine_compat.cache.disk` stores and loads
libraries and records, and :func:`compile_engine_compat.pipeline.build.build_kernel` (the fifth
stage) compiles. Neither knows the other. Without ``COMPILE_ENGINE_COMPAT_CACHE_DIR`` every
kernel is a plain compile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm

from compile_engine_compat.cache import disk
from compile_engine_compat.facade.objects import CachedFunc
from compile_engine_compat.pipeline.build import build_kernel, compile_kernels, device_for
from compile_engine_compat.pipeline.opt_level import without_opt_level
from compile_engine_compat.pipeline.schedule import RULES_VERSION
from compile_engine_compat.runtime import threads
from compile_engine_compat.runtime.kernel import Kernel

__all__ = ["KernelRecord", "indexed_kernel", "kernel_for", "kernels_for", "source_key"]


@dataclass(eq=False)
class KernelRecord:
    """The engine's build bookkeeping for one ``jit`` cache entry (held by its ``CCacheValue``).

    Attributes
    ----------
    source_key : disk.SourceKey or None
        The persistent cache's index key of the source function (None: not indexed).
    kernel : Kernel or None
        The built or loaded kernel, once there is one.
    pending : threading.Event or None
        Set while a ``jit_many`` build pool builds the kernel: other callers wait for it instead
        of building it again (:meth:`claim`).
    lock : threading.RLock
        One build per entry; also guards the entry's deferred lowering. Re-entrant: a build
        under it reads ``cached_func``, which may take it.
    """

    source_key: disk.SourceKey | None = None
    kernel: Kernel | None = None
    pending: threading.Event | None = None
    lock: Any = field(default_factory=threading.RLock)

    def claim(self) -> bool:
        """Take the build for a ``jit_many``: False when it is built or claimed already.

        The claimer must call :meth:`release` once its build ended, built or failed.
        """
        with self.lock:
            if self.kernel is not None or self.pending is not None:
                return False
            self.pending = threading.Event()
            return True

    def release(self) -> None:
        """End a claim: callers waiting for the build look at :attr:`kernel` again."""
        with self.lock:
            pending, self.pending = self.pending, None
        if pending is not None:
            pending.set()

    def offer(self, kernel: Kernel) -> None:
        """Keep ``kernel`` unless a concurrent ``jit`` built one meanwhile."""
        with self.lock:
            if self.kernel is None:
                self.kernel = kernel

    def get(self, build: Callable[[], Kernel]) -> Kernel:
        """The kernel: kept, built by a ``jit_many`` pool (waited for), or ``build()`` now."""
        kernel = self.kernel
        if kernel is not None:
            return kernel
        while True:
            with self.lock:  # one build per entry, other threads wait for it
                if self.kernel is not None:
                    return self.kernel
                pending = self.pending
                if pending is None:
                    self.kernel = build()
                    return self.kernel
            # A jit_many build pool is building it: wait, then look again (if its chunk failed,
            # this thread builds the kernel itself and reports its own error).
            pending.wait()

    def reset_in_child(self) -> None:
        """After ``os.fork()``: a free lock, and no pool build to wait for (its thread is gone)."""
        threads.reset_lock(self.lock)
        self.pending = None


def source_key(function: Any, structural_hash: int, target: Any) -> disk.SourceKey:
    """The persistent index's key of a Relax source function (see :func:`.disk.source_key`)."""
    return disk.source_key(function, structural_hash, target, RULES_VERSION)


def indexed_kernel(source: disk.SourceKey, target: tvm.target.Target) -> Kernel | None:
    """The kernel the persistent cache's index holds for a source function, or None (no tracing,
    no lowering: the caller lowers the function only if someone asks for its CachedFunc)."""
    hit = disk.load_by_source(source)
    if hit is None:
        return None
    return Kernel(hit.module, hit.symbol, hit.num_inputs, hit.num_outputs, (), device_for(target))


def _entry_key(cached: CachedFunc) -> disk.EntryKey:
    return disk.entry_key(
        cached.funcs, cached.prim_fn_var.name_hint, cached.target, _arity(cached), RULES_VERSION
    )


def _arity(cached: CachedFunc) -> tuple[int, int]:
    return len(cached.inputs), len(cached.outputs)


def _build(cached: CachedFunc, module: Any = None, symbol: str | None = None) -> Kernel:
    """Compile ``cached`` (the build stage), or wrap ``module`` when it was built already."""
    return build_kernel(
        cached.funcs,
        symbol or cached.prim_fn_var.name_hint,
        cached.target,
        len(cached.inputs),
        len(cached.outputs),
        [value for _, value in cached.constants],
        module=module,
        plain=(lambda: cached.prim_func) if cached.plain_fallback else None,
        # The unscheduled fallback is not vectorized: the target's own level, not the -O1 chosen
        # for the scheduled kernel (an opt-level the user set stays: llvm_opt_level is None).
        plain_target=(
            without_opt_level(cached.target) if cached.llvm_opt_level is not None else None
        ),
    )


def _index(source: disk.SourceKey | None, cached: CachedFunc, key: disk.EntryKey) -> None:
    # A kernel with bound tensor constants cannot be rebuilt from the index: it holds no values.
    if source is not None and not cached.constants:
        disk.store_index(source, key, _arity(cached))


def kernel_for(cached: CachedFunc, source: disk.SourceKey | None = None) -> Kernel:
    """Return ``cached``'s kernel: loaded from the persistent cache, else compiled and stored.

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
    if not disk.active():
        return _build(cached)
    key = _entry_key(cached)
    hit = disk.load(key)
    if hit is not None:
        disk.store_quietly(lambda: _index(source, cached, key), "index record")
        return _build(cached, *hit)
    kernel = _build(cached)
    disk.store_quietly(lambda: disk.store(key, kernel.module))
    # After a failed store this finds no entry and indexes nothing, silently: one warning.
    disk.store_quietly(lambda: _index(source, cached, key), "index record")
    return kernel


def kernels_for(
    cacheds: Sequence[CachedFunc], sources: Sequence[disk.SourceKey | None] | None = None
) -> list[Kernel]:
    """Return the kernels of ``cacheds`` (one target): cache hits loaded, the rest built at once.

    The misses go into one build (:func:`.compile_kernels`, the build stage ``jit``'s kernels go
    through too; ``jit_many`` calls this once per chunk); the library is stored once and linked
    into each miss's entry.

    Parameters
    ----------
    cacheds : sequence of CachedFunc
    sources : sequence of SourceKey or None, optional
        Index keys, one per ``cacheds`` item (None: not indexed).
    """
    use_cache = disk.active()
    sources = list(sources) if sources is not None else [None] * len(cacheds)
    kernels: list[Kernel | None] = [None] * len(cacheds)
    keys: list[disk.EntryKey | None] = [None] * len(cacheds)
    for index, cached in enumerate(cacheds):
        if use_cache:
            keys[index] = key = _entry_key(cached)
            hit = disk.load(key)
            if hit is not None:
                kernels[index] = _build(cached, *hit)
    misses = [i for i, k in enumerate(kernels) if k is None]
    if misses:
        funcs = {
            cacheds[i].prim_fn_var.name_hint: cacheds[i].funcs[cacheds[i].prim_fn_var]
            for i in misses
        }
        target = cacheds[misses[0]].target
        try:
            module = compile_kernels(funcs, target)
        except Exception:
            # One function TVM cannot build fails the whole module: build each alone, so that
            # the others still get their kernels and a failing one gets build_kernel's fallback.
            return [kernel_for(cached, source) for cached, source in zip(cacheds, sources)]
        stored = [k for i in misses if (k := keys[i]) is not None]
        # Measured: exporting the batch and loading it back (to skip the LLVM JIT's ~25 ms per
        # function looked up) costs more than the JIT here, so the compiled module is used as is.
        if stored:
            disk.store_quietly(lambda: disk.store_many(stored, module))
        for i in misses:
            kernels[i] = _build(cacheds[i], module)
    if use_cache:

        def index_all() -> None:
            for cached, entry, source in zip(cacheds, keys, sources):
                if entry is not None:
                    _index(source, cached, entry)

        disk.store_quietly(index_all, "index record")
    return [k for k in kernels if k is not None]
