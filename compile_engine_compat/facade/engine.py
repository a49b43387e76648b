"""The CompileEngine facade: legacy semantics over the tracer, the lowering and the cache.

Data flow of ``lower``: source function -> :class:`CCacheKey` -> cache lookup -> (miss) the
pipeline's first four stages (:func:`compile_engine_compat.pipeline.lower_function`: trace,
fuse, lower, schedule) -> :class:`CachedFunc`.
``jit`` adds ``tvm.compile`` of that PrimFunc, memoized on the cache value. With the persistent
cache on, ``jit`` first asks its index for the source function: a hit loads the kernel and
leaves the CachedFunc to be lowered on first access.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import traceback
import warnings
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat import pipeline
from compile_engine_compat.boundary import at_fork_in_child
from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.deprecations import LegacyObject, legacy_api
from compile_engine_compat.facade import kernels as _kernels
from compile_engine_compat.facade.objects import CachedFunc, CCacheKey, CCacheValue
from compile_engine_compat.pipeline import implementations as _implementations
from compile_engine_compat.pipeline import opt_level as _opt_level
from compile_engine_compat.pipeline import shape_func as _shape_func
from compile_engine_compat.pipeline import trace as _trace
from compile_engine_compat.pipeline.build_pool import ChunkedBuilder
from compile_engine_compat.runtime import threads
from compile_engine_compat.runtime.kernel import Kernel
from compile_engine_compat.surfaces import passconfig as _passconfig
from compile_engine_compat.targets import (
    LegacyTargetError,
    as_target,
    pass_context_text,
    target_text,
)

__all__ = ["CompileEngine", "LoweringError", "global_engine"]

_RULE = "-" * 26 + "\n"
_MAX_NAME = 80
# ASCII letters, digits and "_" only (it becomes part of C symbol names), matched against the
# whole name: "$" alone would accept a trailing newline.
_VALID_MOD_NAME = re.compile(r"[A-Za-z0-9_]*")


class LoweringError(RuntimeError):
    """``CompileEngine.lower`` failed; the message holds "Error during compile func" and the source.

    The original exception is chained as ``__cause__``.
    """


#: mod_name -> its symbol prefix: every ``lower`` call names one, almost always the same few.
_prefixes: dict[str, str] = {}


def mangle_module_name(mod_name: str) -> str:
    """Return the legacy symbol prefix for ``mod_name``: ``tvmgen_<mod_name>``, or ``tvmgen``."""
    prefix = _prefixes.get(mod_name) if type(mod_name) is str else None
    if prefix is not None:
        return prefix
    if not isinstance(mod_name, str):
        raise TypeError(f"mod_name must be a str, got {type(mod_name).__qualname__}")
    if not _VALID_MOD_NAME.fullmatch(mod_name):
        raise ValueError(f"{mod_name!r} contains invalid characters")
    prefix = f"tvmgen_{mod_name}" if mod_name else "tvmgen"
    if len(_prefixes) < 256 and type(mod_name) is str:  # bounded: names are few
        _prefixes[mod_name] = prefix
    return prefix


def legacy_func_name(source_func: relax.Function, stem: str) -> str:
    name = "_".join([stem, *_trace.op_names(source_func)])
    if len(name) > _MAX_NAME:
        digest = int(hashlib.sha1(name.encode()).hexdigest()[:15], 16)
        name = f"{name[:_MAX_NAME]}_{digest}_"
    return name


def _source_text(source_func: Any) -> str:
    func = source_func.source_func if isinstance(source_func, CCacheKey) else source_func
    try:
        text = str(func.script(show_meta=False)) if hasattr(func, "script") else repr(func)
    except Exception:  # the text is best effort; the original error is what matters
        text = repr(func)
    return text if text.endswith("\n") else text + "\n"


def _get_cache_key(source_func: Any, target: Any) -> CCacheKey:
    """Legacy ``_get_cache_key``: a Function makes a new key; a CCacheKey is returned as is."""
    if type(source_func) is relax.Function:  # the common case, in one type check (a cache hit)
        resolved = as_target(target)
        if resolved is None:
            raise ValueError("Need target when source_func is a Function")
        return CCacheKey._make(source_func, resolved)
    if isinstance(source_func, relax.Function | tvm.IRModule) or hasattr(
        type(source_func), "__relax_function__"
    ):
        func = _trace.source_function(source_func)
        resolved = as_target(target)
        if resolved is None:
            raise ValueError("Need target when source_func is a Function")
        return CCacheKey._make(func, resolved)
    if not isinstance(source_func, CCacheKey):
        raise TypeError(
            "Expect source_func to be CCacheKey (or a tvm.relax.Function / tvm.IRModule), got "
            f"{type(source_func).__module__}.{type(source_func).__qualname__}"
        )
    return source_func


#: Turns shadow mode on for the whole process (:mod:`compile_engine_compat.testing.shadow`).
SHADOW_ENV = "COMPILE_ENGINE_COMPAT_SHADOW"
#: Entry-point group of kernel-hook plugins: ``name = "module:function"``; the engine calls the
#: function of each one the environment turns on, once, when it is first created. Shadow mode is
#: one (``shadow``, on with :data:`SHADOW_ENV`): the engine never imports testing tooling.
KERNEL_HOOK_PLUGINS = "compile_engine_compat.kernel_hooks"
_PLUGIN_SWITCHES = {"shadow": SHADOW_ENV}

#: Wraps each kernel ``jit`` returns: ``hook(kernel, source_func, target)``. Set by shadow mode
#: (:mod:`compile_engine_compat.testing.shadow`), which registers itself: the engine never
#: imports testing tooling.
KernelHook = Callable[[Any, Any, Any], Any]
_kernel_hook: KernelHook | None = None


def _load_kernel_hook_plugins() -> None:
    wanted = {name for name, env in _PLUGIN_SWITCHES.items() if os.environ.get(env, "").strip()}
    if not wanted:
        return
    found = {ep.name: ep for ep in metadata.entry_points(group=KERNEL_HOOK_PLUGINS)}
    for name in sorted(wanted):
        if name not in found:
            warnings.warn(
                f"{_PLUGIN_SWITCHES[name]} is set, but no {name!r} plugin is registered in the "
                f"{KERNEL_HOOK_PLUGINS!r} entry-point group (is compile-engine-compat installed "
                "with pip, not only on PYTHONPATH?): it stays off",
                RuntimeWarning,
                stacklevel=4,
            )
            continue
        found[name].load()()


def set_kernel_hook(hook: KernelHook | None) -> None:
    """Install ``hook`` around every kernel ``jit`` returns (None removes it)."""
    global _kernel_hook
    _kernel_hook = hook


@legacy_api("compile_engine.CompileEngine")
class CompileEngine(LegacyObject):
    """CompileEngine to get lowered code.

    There is one per process: use :func:`get`. Direct construction raises ``RuntimeError``.
    """

    _instance: CompileEngine | None = None
    _lock: threading.Lock
    _cache: dict[Any, tuple[CCacheKey, CCacheValue]]
    _shape_cache: dict[Any, tuple[CCacheKey, CCacheValue]]
    _name_map: dict[str, int]
    _current_key: CCacheKey | None
    op_lowering: _trace.OpLowering
    caching_enabled: Callable[[], bool]
    lowering_customized: Callable[[], bool]

    def __init__(self) -> None:
        raise RuntimeError("Cannot construct a CompileEngine")

    @classmethod
    def _create(cls) -> CompileEngine:
        self = cls.__new__(cls)
        self._lock = threading.Lock()
        self._cache = {}
        self._shape_cache = {}
        self._name_map = {}
        self._current_key = None
        # The strategy registry picks each op's TE (a user strategy, a lower_call override, or
        # the op's legalization). Replaceable per engine: the property tests plant bugs here.
        self.op_lowering = _implementations.engine_op_lowering
        # False inside a PassContext with relay.backend.disable_compile_engine_cache.
        self.caching_enabled = _passconfig.caching_enabled
        # True while user strategies may change a lowering (the persistent index is skipped).
        self.lowering_customized = _implementations.customized
        # First use: the legacy PassContext keys are accepted from here on (unless switched off),
        # and the kernel-hook plugins the environment asks for are loaded.
        _passconfig.install_from_env()
        _load_kernel_hook_plugins()
        return self

    # -- public legacy API -----------------------------------------------------------------------

    @legacy_api("compile_engine.CompileEngine.lower")
    def lower(self, source_func: Any, target: Any = None, mod_name: str = "default") -> CachedFunc:
        """Lower a source_func to a CachedFunc.

        Parameters
        ----------
        source_func : tvm.relax.Function, tvm.IRModule or CCacheKey
            The function to lower. A CCacheKey carries its own target and ``target`` is ignored.
        target : tvm.target.Target, str or dict
            The target; a str or dict is converted to ``Target``.
        mod_name : str
            Module name used in the kernel symbol: ``tvmgen_<mod_name>_fused_<ops>``.

        Returns
        -------
        CachedFunc
            The identical object on a cache hit.

        Raises
        ------
        LoweringError
            A ``RuntimeError`` with "Error during compile func" for any failure.
        """
        return self._lower_wrapped(source_func, target, mod_name).cached_func

    @legacy_api("compile_engine.CompileEngine.lower_shape_func")
    def lower_shape_func(self, source_func: Any, target: Any = None) -> CachedFunc:
        """Lower the shape function of ``source_func``: int64 shape tensors in, shapes out.

        Parameters
        ----------
        source_func : tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict

        Returns
        -------
        CachedFunc
            ``inputs`` are 1-D int64 shape tensors (one per tensor parameter), ``outputs`` the
            output shapes, ``shape_func_param_states`` 2 for a parameter whose shape is needed.
        """
        return self._shape_func_value(_get_cache_key(source_func, target)).cached_func

    @legacy_api("compile_engine.CompileEngine.jit")
    def jit(self, source_func: Any, target: Any = None) -> Kernel:
        """JIT a source_func to a callable kernel.

        Parameters
        ----------
        source_func : tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict

        Returns
        -------
        Kernel
            Call as ``kernel(*inputs, *outputs)``: writes into the outputs, returns None.
            Memoized: the same kernel object on every call for the same key.
        """
        key = _get_cache_key(source_func, target)
        kernel = self.kernel_for(key)
        hook = _kernel_hook  # shadow mode's, when on: the kernel also runs the modern path
        if hook is not None:
            return hook(kernel, key.source_func, key.target)
        return kernel

    def kernel_for(self, source_func: Any, target: Any = None) -> Kernel:
        """The un-warned core of :meth:`jit`: the same memoized kernel, never wrapped.

        Not a legacy API: it issues no warning, records nothing in the ledger and never runs
        shadow mode. The oracle, shadow mode and the package's own callers use it.

        Parameters
        ----------
        source_func : tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict

        Returns
        -------
        Kernel
            The kernel ``jit`` returns for the same key (before any shadow-mode wrapping).
        """
        key = _get_cache_key(source_func, target)
        return self._kernel(self._lower_wrapped(key, None, "", for_jit=True))

    @legacy_api("compile_engine.CompileEngine.lower_many")
    def lower_many(
        self, funcs: Sequence[Any], target: Any = None, mod_name: str = "default"
    ) -> list[CachedFunc]:
        """Lower several functions; each fills the cache entry ``lower`` would.

        Parameters
        ----------
        funcs : sequence of tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict
        mod_name : str

        Returns
        -------
        list of CachedFunc
            In the order of ``funcs``; put their ``funcs`` modules together to build them at once.
        """
        return [self._lower_wrapped(f, target, mod_name).cached_func for f in funcs]

    @legacy_api("compile_engine.CompileEngine.jit_many")
    def jit_many(self, funcs: Sequence[Any], target: Any = None) -> list[Kernel]:
        """JIT several functions, building them as IRModules of several functions at once.

        Each function fills the cache entry ``jit`` would: a later ``jit`` of one of them returns
        the same kernel. Already built kernels and persistent-cache hits are not rebuilt. The
        others go into IRModules of up to
        :data:`compile_engine_compat.pipeline.build_pool.MAX_CHUNK` functions, each built with
        one ``tvm.compile`` on a pool of threads while the next functions are lowered.

        Parameters
        ----------
        funcs : sequence of tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict

        Returns
        -------
        list of Kernel
            In the order of ``funcs``.
        """
        builder: ChunkedBuilder[CCacheValue, Kernel] = ChunkedBuilder(len(funcs), _build_chunk)
        values: list[CCacheValue] = []
        # Kernels this call builds. Another thread's jit or jit_many of the same functions
        # waits for them (and this one for its claims): each kernel is built once.
        claimed: list[CCacheValue] = []
        try:
            try:
                for func in funcs:
                    value = self._lower_wrapped(
                        _get_cache_key(func, target), None, "", for_jit=True
                    )
                    values.append(value)
                    if self._record(value).claim():
                        claimed.append(value)
                        builder.add(target_text(value.cached_func.target), value)
            except BaseException:
                builder.cancel()
                raise
            builder.finish(_set_kernel)
        finally:
            for value in claimed:
                self._record(value).release()
        return [self._kernel(v) for v in values]

    @legacy_api("compile_engine.CompileEngine.clear")
    def clear(self) -> None:
        """clear the existing cached functions"""
        with self._lock:
            self._cache.clear()

    @legacy_api("compile_engine.CompileEngine.items")
    def items(self) -> list[tuple[CCacheKey, CCacheValue]]:
        """List items in the cache.

        Returns
        -------
        list of (CCacheKey, CCacheValue)
        """
        return self._entries(self._cache)

    @legacy_api("compile_engine.CompileEngine.shape_func_items")
    def shape_func_items(self) -> list[tuple[CCacheKey, CCacheValue]]:
        """List items in the shape-function cache.

        Returns
        -------
        list of (CCacheKey, CCacheValue)
        """
        return self._entries(self._shape_cache)

    @legacy_api("compile_engine.CompileEngine.get_current_ccache_key")
    def get_current_ccache_key(self) -> CCacheKey | None:
        """Return the key of the latest ``lower``/``jit`` call, or None before the first."""
        return self._current_key

    @legacy_api("compile_engine.CompileEngine.dump")
    def dump(self) -> str:
        """Return a string representation of the engine (the legacy text layout)."""
        items = self._entries(self._cache)
        shape_items = self._entries(self._shape_cache)
        res = "====================================\n"
        res += f"CompilerEngine dump, {len(items)} items cached\n"
        res += "".join(_dump_item(k, v) for k, v in items)
        res += "===================================\n"
        res += f"{len(shape_items)} shape_func_items cached\n"
        res += "".join(_dump_item(k, v) for k, v in shape_items)
        res += "===================================\n"
        return res

    # -- internals -------------------------------------------------------------------------------

    def _entries(
        self, cache: dict[Any, tuple[CCacheKey, CCacheValue]]
    ) -> list[tuple[CCacheKey, CCacheValue]]:
        with self._lock:
            return list(cache.values())

    def _shape_func_value(self, key: CCacheKey) -> CCacheValue:
        # Shape functions are lowered, never built: the PassContext cannot change them.
        return self._lookup_or_build(
            self._shape_cache,
            key,
            key.lookup(),
            "shape_func",
            "",
            _shape_func_entry,
            # The disable-cache pass config never applied to shape functions.
            caching_enabled=_always,
        )

    def _lower_wrapped(
        self, source_func: Any, target: Any, mod_name: str, for_jit: bool = False
    ) -> CCacheValue:
        try:
            key = _get_cache_key(source_func, target)
            # mod_name is checked on a hit too (memoized per name); the maker matters to a miss
            # only, so a hit is looked up here, with no layer between.
            prefix = mangle_module_name(mod_name) if mod_name else ""
            hit = self._hit(self._cache, (*key.lookup(), pass_context_text()))
            if hit is not None:
                self._current_key = key
                return hit
            return self._lower_value(key, prefix, self._jit_entry if for_jit else None)
        except (_disk_cache.CacheDirectoryError, LegacyTargetError):
            # An unsafe cache directory or a bad target flag is the user's to fix: say so plainly.
            raise
        except Exception as err:
            raise _lowering_error(source_func) from err

    def _lower_value(
        self,
        key: CCacheKey,
        prefix: str,
        make: Callable[[CCacheKey, str], CCacheValue] | None = None,
    ) -> CCacheValue:
        self._current_key = key  # one attribute store: atomic, no lock needed
        # The PassContext is in the dict key, not in CCacheKey (legacy keys compare without it):
        # a kernel built under ``tirx.disable_assert`` must never be handed out elsewhere.
        return self._lookup_or_build(
            self._cache,
            key,
            (*key.lookup(), pass_context_text()),
            "fused",
            prefix,
            make or (lambda k, name: CCacheValue(self._build_cached_func(k, name))),
            self.caching_enabled,
        )

    def _lookup_or_build(
        self,
        cache: dict[Any, tuple[CCacheKey, CCacheValue]],
        key: CCacheKey,
        lookup: Any,
        stem: str,
        prefix: str,
        make: Callable[[CCacheKey, str], CCacheValue],
        caching_enabled: Callable[[], bool],
    ) -> CCacheValue:
        """Return the value stored under ``lookup`` (counting a hit), or make, store and return
        ``key``'s.

        A key is made once: makers run under the trace lock, and a thread that waited for
        another's build finds it on the second look. ``caching_enabled`` is asked on a miss
        only: a hit returns before (the legacy engine looked up under the disable-cache config
        too, and only skipped storing).
        """
        hit = self._hit(cache, lookup)
        if hit is not None:
            return hit
        caching = caching_enabled()
        with _trace.TRACE_LOCK:
            if caching:
                hit = self._hit(cache, lookup)
                if hit is not None:
                    return hit
            base = legacy_func_name(key.source_func, stem)
            with self._lock:
                name = self._unique_name(f"{prefix}_{base}" if prefix else base)
            value = make(key, name)
            if caching:
                with self._lock:
                    cache[lookup] = (key, value)
        return value

    def _jit_entry(self, key: CCacheKey, name: str) -> CCacheValue:
        """Make a ``jit`` cache value: from the persistent cache's index when it has the function
        (no tracing: the CachedFunc is lowered on first access), else lowered now."""
        source = self._index_key(key)
        if source is not None:
            kernel = _kernels.indexed_kernel(source, key.target)
            if kernel is not None:
                return CCacheValue(
                    None,
                    lower=lambda: self._deferred_lowering(key, name),
                    kernel_record=_kernels.KernelRecord(kernel=kernel),
                )
        return CCacheValue(
            self._build_cached_func(key, name),
            kernel_record=_kernels.KernelRecord(source_key=source),
        )

    def _index_key(self, key: CCacheKey) -> _disk_cache.SourceKey | None:
        if not _disk_cache.enabled() or self.lowering_customized():
            return None
        structural_key = key.lookup()[0]  # the function without its global_symbol
        return _kernels.source_key(structural_key.key, structural_key.hash_i64, key.target)

    def _deferred_lowering(self, key: CCacheKey, name: str) -> CachedFunc:
        try:
            with _trace.TRACE_LOCK:
                return self._build_cached_func(key, name)
        except Exception as err:
            raise _lowering_error(key) from err

    def _hit(self, cache: dict[Any, tuple[CCacheKey, CCacheValue]], lookup: Any) -> Any:
        with self._lock:
            entry = cache.get(lookup)
            if entry is None:
                return None
            entry[1].use_count += 1
            return entry[1]

    def _unique_name(self, name: str) -> str:
        # Legacy GetUniqueName: '.' -> '_', then '_1', '_2', ... on collision; survives clear().
        name = name.replace(".", "_")
        while name in self._name_map:
            suffix = self._name_map[name]
            self._name_map[name] += 1
            name = f"{name}_{suffix}"
        self._name_map[name] = 1
        return name

    def _build_cached_func(self, key: CCacheKey, name: str) -> CachedFunc:
        lowered = pipeline.lower_function(key.source_func, key.target, name, self.op_lowering)
        funcs = lowered.schedule.mod
        return CachedFunc(
            # The build target: the key's, with the opt-level chosen for this kernel if any.
            target=_opt_level.with_opt_level(key.target, lowered.opt_level),
            prim_fn_var=funcs.get_global_var(name),
            inputs=lowered.traced.inputs,
            outputs=lowered.outputs,
            schedule=lowered.schedule,
            prim_func=lowered.prim_func,
            funcs=funcs,
            constants=lowered.traced.constants,
            plain_fallback=lowered.plain_fallback,
            llvm_opt_level=lowered.opt_level,
        )

    def _record(self, value: CCacheValue) -> _kernels.KernelRecord:
        """The build record of a ``jit`` entry (one made by ``lower`` gets one when jitted)."""
        record = value.kernel_record
        if record is None:
            with self._lock:
                if value.kernel_record is None:
                    value.kernel_record = _kernels.KernelRecord()
                record = value.kernel_record
        return record

    def _kernel(self, value: CCacheValue) -> Kernel:
        record = self._record(value)

        def build() -> Kernel:
            cached = value.cached_func
            try:
                # COMPILE_ENGINE_COMPAT_CACHE_DIR set: load from / store to the disk cache.
                return _kernels.kernel_for(cached, record.source_key)
            except _disk_cache.CacheDirectoryError:
                raise  # an unsafe cache directory is the user's to fix: say so plainly
            except Exception as err:
                raise _build_failure(cached.funcs) from err

        return record.get(build)


def _lowering_error(source_func: Any) -> LoweringError:
    """The legacy "Error during compile func" error for ``source_func`` (call inside ``except``)."""
    message = (
        f"{traceback.format_exc()}Error during compile func\n{_RULE}"
        f"{_source_text(source_func)}{_RULE}"
    )
    return LoweringError(message)


def _build_chunk(values: list[CCacheValue]) -> list[Kernel]:
    """Build the kernels of ``values`` (one target) together; runs on a build-pool thread."""
    cacheds = [v.cached_func for v in values]
    try:
        return _kernels.kernels_for(cacheds, [v.kernel_record.source_key for v in values])
    except _disk_cache.CacheDirectoryError:
        raise
    except Exception as err:
        raise _build_failure(*[c.funcs for c in cacheds]) from err


def _always() -> bool:
    return True


def _shape_func_entry(key: CCacheKey, name: str) -> CCacheValue:
    shape_func = _shape_func.lower_shape_func(key.source_func, name)
    return CCacheValue(
        CachedFunc(
            target=key.target,
            prim_fn_var=shape_func.funcs.get_global_var(name),
            inputs=shape_func.inputs,
            outputs=shape_func.outputs,
            schedule=shape_func.schedule,
            prim_func=shape_func.prim_func,
            funcs=shape_func.funcs,
            shape_func_param_states=shape_func.param_states,
        )
    )


def _set_kernel(value: CCacheValue, kernel: Kernel) -> None:
    value.kernel_record.offer(kernel)  # unless a concurrent jit built it meanwhile


def _build_failure(*modules: tvm.IRModule) -> LoweringError:
    """The legacy "Error during compile func" error for a failed build (call inside ``except``)."""
    scripts = "".join(f"{funcs.script()}\n" for funcs in modules)
    return LoweringError(
        f"{traceback.format_exc()}Error during compile func\n{_RULE}{scripts}{_RULE}"
    )


def _dump_item(key: CCacheKey, value: CCacheValue) -> str:
    cached = value.cached_func
    return (
        "------------------------------------\n"
        f"target={key.target}\n"
        f"use_count={value.use_count}\n"
        f"func_name={cached.prim_fn_var.name_hint}\n"
        "----relay function----\n"
        f"{key.source_func.script()}\n"
        "----tir function----- \n"
        f"inputs={cached.inputs}\n"
        f"outputs={cached.outputs}\n"
        "function: \n"
        f"{cached.funcs.script()}\n"
    )


_engine_lock = threading.Lock()


def global_engine() -> CompileEngine:
    """Get the global compile engine (the core of ``compile_engine.get``).

    Returns
    -------
    engine : CompileEngine
        The process-wide singleton.
    """
    engine = CompileEngine._instance
    if engine is None:
        with _engine_lock:
            if CompileEngine._instance is None:
                CompileEngine._instance = CompileEngine._create()
            engine = CompileEngine._instance
    return engine


def _reset_locks_in_child() -> None:
    """After ``os.fork()``: free every lock of the engine (see :func:`.threads.reset_lock`).

    A fork while another thread is inside ``jit`` would otherwise leave the child waiting forever
    for the trace lock, the engine's lock or the entry's build lock. The cache itself is always
    whole: entries are inserted under the GIL only once made.
    """
    threads.reset_lock(_engine_lock)
    threads.reset_lock(_trace.TRACE_LOCK)
    engine = CompileEngine._instance
    if engine is None:
        return
    threads.reset_lock(engine._lock)
    for cache in (engine._cache, engine._shape_cache):
        for _, value in cache.values():
            if value.kernel_record is not None:
                value.kernel_record.reset_in_child()


at_fork_in_child(_reset_locks_in_child)
