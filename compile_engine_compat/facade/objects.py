"""The legacy engine's objects: the lowering cache's key and value, and the CachedFunc record.

These are plain Python objects. They cross the TVM FFI unchanged (a Python object handed to a
registered global function comes back as the same object), so C++ callers of the registered
``relay.backend._CompileEngine*`` globals see exactly what Python callers see.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import relax

from compile_engine_compat.deprecations import LegacyObject, legacy_api
from compile_engine_compat.pipeline import trace as _trace
from compile_engine_compat.targets import as_target, target_text

__all__ = ["CCacheKey", "CCacheValue", "CachedFunc"]


@legacy_api("compile_engine.CCacheKey")
class CCacheKey(LegacyObject):
    """Key in the CompileEngine.

    Parameters
    ----------
    source_func : tvm.relax.Function
        The source function.
    target : tvm.target.Target
        The target we want to run the function on.

    Notes
    -----
    Two keys look up the same cache entry when their functions are structurally equal (their
    ``global_symbol`` is ignored, as a Relay function had none), their targets are equal and they
    are looked up under PassContexts that build the same code (:func:`pass_context_text`). The
    legacy key ignored the PassContext; the engine adds it at each lookup, so one key looked up
    inside and outside ``PassContext(config=...)`` finds two entries (two kernels).
    Like the legacy object, ``==`` and ``hash()`` are identity-based; the engine hands back the
    stored key objects from ``items()`` and ``get_current_ccache_key()``.
    """

    __slots__ = ("_lookup", "source_func", "target")

    def __init__(self, source_func: Any, target: Any) -> None:
        self._init(source_func, target)

    @classmethod
    def _make(cls, source_func: Any, target: tvm.target.Target | None) -> CCacheKey:
        """Build a key without counting a legacy call (the engine's internal path): ``target``
        comes from :func:`as_target` already."""
        key = cls.__new__(cls)
        if type(source_func) is relax.Function:  # the engine's case (a cache hit): no checks
            key.source_func, key.target, key._lookup = source_func, target, None
        else:
            key._init(source_func, target, resolved=True)
        return key

    def _init(self, source_func: Any, target: Any, resolved: bool = False) -> None:
        if not isinstance(source_func, relax.Function):
            source_func = _trace.as_relax_source(source_func)
        if not isinstance(source_func, relax.Function):
            raise TypeError(
                "CCacheKey needs a tvm.relax.Function, got "
                f"{type(source_func).__module__}.{type(source_func).__qualname__}"
            )
        self.source_func = source_func
        # The legacy FFI constructor converted a str to a Target; a dict is the modern spelling;
        # a plain llvm Target is the host CPU's, as in the engine's own keys.
        known = not resolved and isinstance(target, str | dict | tvm.target.Target)
        self.target: Any = as_target(target) if known else target
        self._lookup: tuple[Any, Any] | None = None

    def lookup(self) -> tuple[Any, Any]:
        """Return the structural dict key ``(function, target)``, computed once."""
        if self._lookup is None:
            if self.target is None:
                raise ValueError("Need target when source_func is a Function")
            # Unconditionally: ``"global_symbol" in func.attrs`` costs 1.5 us through the FFI,
            # three times the copy it would save (and equal either way without the attribute).
            func = self.source_func.without_attr("global_symbol")
            self._lookup = (
                tvm_ffi.StructuralKey(func),  # type: ignore[call-arg]
                target_text(self.target),
            )
        return self._lookup

    def __repr__(self) -> str:
        return f"CCacheKey(source_func={_first_line(self.source_func)}, target={self.target})"


class CachedFunc(LegacyObject):
    """A lowered function: its TE tensors, its schedule and its PrimFunc.

    Attributes
    ----------
    target : tvm.target.Target
        The target it was lowered and is built for: the key's target, plus ``"opt-level": 1``
        when the shim builds it at LLVM ``-O1`` (see ``llvm_opt_level``).
    llvm_opt_level : int or None
        1 when every block of the kernel is elementwise and the default rules vectorized it, so
        ``jit`` builds it at LLVM ``-O1`` (it runs as fast and builds faster;
        :mod:`compile_engine_compat.pipeline.opt_level`); None when the target's own level
        applies (LLVM's default 3, or an ``opt-level`` the target sets, which is always kept).
    prim_fn_var : tvm.ir.GlobalVar
        Names the PrimFunc in ``funcs``; ``prim_fn_var.name_hint`` is the unique kernel name.
    inputs : list of te.Tensor
        One placeholder per flattened tensor parameter.
    outputs : list of te.Tensor
        The composed TE outputs (printable before any scheduling).
    schedule : tvm.s_tir.Schedule
        A schedule over ``funcs`` (``te.Schedule`` no longer exists): reschedule with it and read
        ``schedule.mod``.
    prim_func : tvm.tirx.PrimFunc
        The PrimFunc as ``te.create_prim_func`` makes it from ``inputs`` and ``outputs``, before
        any inlining or scheduling (made on first access).
    funcs : tvm.IRModule
        Holds the scheduled PrimFunc under ``prim_fn_var``.
    shape_func_param_states : list of int
        Filled by ``lower_shape_func`` only: per parameter 0 (no need) or 2 (needs its shape).
    constants : list of (te.Tensor, tvm.runtime.Tensor)
        Placeholders standing for the function's non-scalar constants and their values. They
        follow ``inputs`` in the PrimFunc's parameters; the ``jit`` kernel binds them itself.
    plain_fallback : bool
        Not legacy. True when only the shim's own inlining and default rules lie between
        ``prim_func`` and ``funcs`` (no user schedule): ``jit`` may then build ``prim_func``
        when TVM fails to build ``funcs``.
    """

    __slots__ = (
        "_prim_func",
        "constants",
        "funcs",
        "inputs",
        "llvm_opt_level",
        "outputs",
        "plain_fallback",
        "prim_fn_var",
        "schedule",
        "shape_func_param_states",
        "target",
    )

    def __init__(
        self,
        target: tvm.target.Target,
        prim_fn_var: tvm.ir.GlobalVar,
        inputs: list[Any],
        outputs: list[Any],
        schedule: Any,
        prim_func: Any,  # a PrimFunc, or a function that makes it when first asked for
        funcs: tvm.IRModule,
        shape_func_param_states: list[int] | None = None,
        constants: list[tuple[Any, Any]] | None = None,
        plain_fallback: bool = False,
        llvm_opt_level: int | None = None,
    ) -> None:
        self.target = target
        self.llvm_opt_level = llvm_opt_level
        self.prim_fn_var = prim_fn_var
        self.inputs = inputs
        self.outputs = outputs
        self.schedule = schedule
        self._prim_func = prim_func
        self.funcs = funcs
        self.shape_func_param_states = shape_func_param_states or []
        self.constants = constants or []
        # Only the shim's own inlining and default rules lie between prim_func and funcs (no
        # user schedule): jit may build prim_func when TVM fails to build funcs.
        self.plain_fallback = plain_fallback

    @property
    def prim_func(self) -> Any:
        if not isinstance(self._prim_func, tvm.tirx.PrimFunc):  # a PrimFunc is callable too
            self._prim_func = self._prim_func()
        return self._prim_func

    def __repr__(self) -> str:
        return (
            f"CachedFunc({self.prim_fn_var.name_hint}, target={self.target.kind.name}, "
            f"inputs={len(self.inputs)}, outputs={len(self.outputs)})"
        )


class CCacheValue(LegacyObject):
    """Value in the CompileEngine, including usage statistics.

    Attributes
    ----------
    cached_func : CachedFunc
        The lowered function. A ``jit`` kernel loaded from the persistent cache's index comes
        without one: it is lowered on first access, so a warm ``jit`` skips tracing.
    use_count : int
        Cache hits since it was lowered (``compile_engine``: starts at 0).
    """

    __slots__ = ("_cached_func", "_lower", "kernel_record", "use_count")

    def __init__(
        self,
        cached_func: CachedFunc | None,
        use_count: int = 0,
        *,
        lower: Callable[[], CachedFunc] | None = None,
        kernel_record: Any = None,
    ) -> None:
        if cached_func is None and (lower is None or kernel_record is None):
            raise TypeError("CCacheValue needs a CachedFunc (or, for jit, lower= and a record)")
        self._cached_func = cached_func
        self._lower = lower
        self.use_count = use_count
        #: The engine's build bookkeeping for a ``jit`` entry (its kernel, the persistent
        #: cache's index key, the build lock): a :class:`.kernels.KernelRecord`, else None.
        #: Not an attribute of TVM 0.19's object.
        self.kernel_record = kernel_record

    @property
    def cached_func(self) -> CachedFunc:
        cached = self._cached_func
        if cached is None:  # a jit kernel loaded by source: lowered on first access
            with self.kernel_record.lock:
                if self._cached_func is None:
                    assert self._lower is not None
                    self._cached_func = self._lower()
                    self._lower = None
                cached = self._cached_func
        return cached

    def __repr__(self) -> str:
        lowered = repr(self._cached_func) if self._cached_func is not None else "<not lowered yet>"
        return f"CCacheValue({lowered}, use_count={self.use_count})"


def _first_line(func: Any) -> str:
    gsym = func.attrs.get("global_symbol") if func.attrs is not None else None
    return f"<relax.Function {gsym or 'anonymous'}>"
