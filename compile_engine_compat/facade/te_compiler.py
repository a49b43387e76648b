"""The te_compiler surface's implementation (public names in :mod:`.te_compiler`).

Kept apart from the public module so that the generated ``te_compiler.pyi`` (which carries the
PEP 702 ``@deprecated`` marks for type checkers) does not hide this code from the project's own
mypy run: a stub shadows the ``.py`` beside it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

import tvm
from tvm import te

from compile_engine_compat import _threads
from compile_engine_compat.cache import keys as _cache
from compile_engine_compat.cache.keys import CachedFunc, as_target
from compile_engine_compat.facade import shared
from compile_engine_compat.facade.engine import (
    CompileEngine,
    _get_cache_key,
    _legacy_func_name,
    global_engine,
)
from compile_engine_compat.pipeline import build as _build
from compile_engine_compat.pipeline import lower as _lowering
from compile_engine_compat.pipeline import strategy as _strategy
from compile_engine_compat.pipeline import trace as _trace
from compile_engine_compat.pipeline.strategy import OpImplementation
from compile_engine_compat.surfaces.deprecation import warn_legacy

# The public names are listed once, in te_compiler.py (the surface this module implements).

logger = logging.getLogger("te_compiler")

#: te_compiler's cache value: a view of the shared entry whose ``use_count`` is 1-based.
CCacheValue = shared.TECCacheValue


class _SameClassMeta(type):
    """``isinstance`` against the te_compiler spelling accepts the shared class's objects too."""

    _shared: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._shared)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._shared)


class CCacheKey(_cache.CCacheKey, metaclass=_SameClassMeta):
    """Key in the TECompiler (the same key type as compile_engine's; both share one cache).

    Parameters
    ----------
    source_func : tvm.relax.Function
        The source function.
    target : tvm.target.Target
        The target we want to run the function on.
    """

    __slots__ = ()
    _shared = _cache.CCacheKey

    def __init__(self, source_func: Any, target: Any) -> None:
        warn_legacy("te_compiler.CCacheKey")
        self._init(source_func, target)


class LoweredOutput(_strategy.LoweredOutput, metaclass=_SameClassMeta):
    """Lowered output: the TE outputs of an op call and the implementation that made them."""

    __slots__ = ()
    _shared = _strategy.LoweredOutput

    def __init__(self, outputs: Sequence[te.Tensor], implement: Any) -> None:
        warn_legacy("te_compiler.LoweredOutput")
        self.outputs = list(outputs)
        self.implementation = implement


class TECompiler:
    """TECompiler to get lowered code.

    There is one per process: use :func:`get`. Direct construction raises ``RuntimeError``.
    It works on the engine behind ``compile_engine.get()``.
    """

    _instance: TECompiler | None = None
    _engine: CompileEngine

    def __init__(self) -> None:
        raise RuntimeError("Cannot construct a TECompiler")

    def same_as(self, other: object) -> bool:
        """Legacy ``Object.same_as``: identity."""
        return self is other

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
            The identical object on a cache hit (also one made through ``compile_engine``).
        """
        warn_legacy("te_compiler.TECompiler.lower")
        return self._engine._lower_wrapped(source_func, target, mod_name).cached_func

    def jit(self, source_func: Any, target: Any = None) -> _build.Kernel:
        """JIT a source_func to a callable kernel.

        Parameters
        ----------
        source_func : tvm.relax.Function, tvm.IRModule or CCacheKey
        target : tvm.target.Target, str or dict

        Returns
        -------
        Kernel
            Call as ``kernel(*inputs, *outputs)``: writes into the outputs, returns None.
        """
        warn_legacy("te_compiler.TECompiler.jit")
        return shared.jit(self._engine, _get_cache_key(source_func, target))

    def clear(self) -> None:
        """clear the existing cached functions"""
        warn_legacy("te_compiler.TECompiler.clear")
        shared.clear(self._engine)

    def items(self) -> list[tuple[CCacheKey, Any]]:
        """List items in the cache.

        Returns
        -------
        list of (CCacheKey, CCacheValue)
            Values count from 1: ``use_count`` is the number of lowerings of that entry.
        """
        warn_legacy("te_compiler.TECompiler.items")
        flat = shared.te_values(shared.flat_items(self._engine))
        assert len(flat) % 2 == 0
        return [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]


_compiler_lock = _threads.fork_safe(threading.Lock())


def global_compiler() -> TECompiler:
    """Return the TECompiler singleton without counting a legacy call."""
    compiler = TECompiler._instance
    if compiler is None:
        with _compiler_lock:
            if TECompiler._instance is None:
                instance = TECompiler.__new__(TECompiler)
                instance._engine = global_engine()
                TECompiler._instance = instance
            compiler = TECompiler._instance
    return compiler


def get() -> TECompiler:
    """Get the global TE Compiler.

    Returns
    -------
    compiler : TECompiler
        The process-wide singleton; it shares its cache with ``compile_engine.get()``.
    """
    warn_legacy("te_compiler.get")
    return global_compiler()


def get_valid_implementations(
    op: Any, attrs: Any, inputs: Sequence[te.Tensor], out_type: Any, target: Any
) -> list[OpImplementation]:
    """Get all valid implementations of ``op`` for these inputs.

    Parameters
    ----------
    op : tvm.ir.Op or str
    attrs : tvm.ir.Attrs or None
    inputs : list of te.Tensor
        Each implementation's condition is evaluated on them.
    out_type : relax type or None
    target : tvm.target.Target or str

    Returns
    -------
    list of OpImplementation
    """
    warn_legacy("te_compiler.get_valid_implementations")
    return _strategy.valid(op, attrs, inputs, out_type, target)


def select_implementation(
    op: Any,
    attrs: Any,
    inputs: Sequence[te.Tensor],
    out_type: Any,
    target: Any,
    use_autotvm: bool = True,
) -> tuple[OpImplementation, list[te.Tensor]]:
    """Select the implementation with the highest plevel and compute its outputs.

    ``use_autotvm=True`` finds no AutoTVM records on modern TVM: it warns once per process and
    selects by plevel.

    Returns
    -------
    (OpImplementation, list of te.Tensor)
    """
    warn_legacy("te_compiler.select_implementation")
    return _strategy.select(op, attrs, inputs, out_type, target, use_autotvm)


def get_shape(shape: Sequence[Any]) -> list[Any]:
    """Convert the shape to correct dtype and vars (int dims become int64 ``IntImm``)."""
    warn_legacy("te_compiler.get_shape")
    return _strategy.shape_of(shape)


def lower_call(
    call: Any, inputs: Sequence[te.Tensor], target: Any, otype: Any = None
) -> _strategy.LoweredOutput:
    """Lower the call expression to op implementation and tensor outputs.

    Parameters
    ----------
    call : tvm.ir.Call
        A call to a Relax op.
    inputs : list of te.Tensor
    target : tvm.target.Target
    otype : relax type, optional
        Overrides ``call.ty`` as the output type handed to the compute.

    Returns
    -------
    LoweredOutput
    """
    warn_legacy("te_compiler.lower_call")
    return _strategy.lower_one_call(call, inputs, target, otype)


def lower_to_primfunc(func: Any, target: Any) -> tvm.tirx.PrimFunc:
    """Lower a Relax function to one TIR PrimFunc (unscheduled, not cached).

    Parameters
    ----------
    func : tvm.relax.Function or tvm.IRModule
        The source function.
    target : tvm.target.Target or str
        Entered as the current target while lowering.

    Returns
    -------
    tvm.tirx.PrimFunc
        Parameters are the inputs, then the placeholders of non-scalar constants, then the
        outputs; ``global_symbol`` is ``fused_<ops>`` with ``.`` made ``_``.
    """
    warn_legacy("te_compiler.lower_to_primfunc")
    source = _trace.source_function(func)
    resolved = as_target(target)
    if resolved is None:
        raise ValueError("Need target when source_func is a Function")
    with resolved:
        traced = _trace.trace(source, global_engine().op_lowering)
    arguments = traced.inputs + [placeholder for placeholder, _ in traced.constants]
    outputs = _lowering.distinct_outputs(arguments, traced.outputs)
    name = _legacy_func_name(source, "fused").replace(".", "_")  # as legacy GetUniqueName did
    return _lowering.to_prim_func(arguments, outputs, name)
