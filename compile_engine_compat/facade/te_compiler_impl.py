"""The te_compiler surface's implementation (public names in :mod:`.te_compiler`).

Kept apart from the public module so that the generated ``te_compiler.pyi`` (which carries the
PEP 702 ``@deprecated`` marks for type checkers) does not hide this code from the project's own
mypy run: a stub shadows the ``.py`` beside it.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL, LegacyObject, legacy_api
from compile_engine_compat.facade import legacy_strategy as _legacy_strategy
from compile_engine_compat.facade import objects, shared
from compile_engine_compat.facade.engine import CompileEngine, global_engine, legacy_func_name
from compile_engine_compat.pipeline import lower as _lowering
from compile_engine_compat.pipeline import trace as _trace
from compile_engine_compat.runtime import threads
from compile_engine_compat.targets import as_target

# The public names are listed once, in te_compiler.py (the surface this module implements).

logger = logging.getLogger("te_compiler")
#: TVM 0.19's te_compiler logged AutoTVM's fallbacks here (the "autotvm" logger).
autotvm_logger = logging.getLogger("autotvm")

#: te_compiler's cache value: a view of the shared entry whose ``use_count`` is 1-based.
CCacheValue = shared.TECCacheValue


class _SameClassMeta(type):
    """``isinstance`` against the te_compiler spelling accepts the shared class's objects too."""

    _shared: type

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, cls._shared)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._shared)


@legacy_api("te_compiler.CCacheKey")
class CCacheKey(objects.CCacheKey, metaclass=_SameClassMeta):
    """Key in the TECompiler: ``CCacheKey(source_func, target)``, compile_engine's key type.

    Both modules share one cache, so either spelling's keys find the same entries.
    """

    __slots__ = ()
    _shared = objects.CCacheKey


@legacy_api("te_compiler.LoweredOutput")
class LoweredOutput(_legacy_strategy.LoweredOutput, metaclass=_SameClassMeta):
    """Lowered output: the TE outputs of an op call and the implementation that made them."""

    __slots__ = ()
    _shared = _legacy_strategy.LoweredOutput


def _on_engine(name: str, api: str) -> Any:
    """The TECompiler method ``api``: the engine's method ``name`` on the shared engine.

    Signature and docstring are the engine method's; the call runs its un-warned core.
    """
    core = getattr(CompileEngine, name).__wrapped__

    @functools.wraps(core)
    def method(self: TECompiler, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._engine, name)(*args, **INTERNAL, **kwargs)

    return legacy_api(api)(method)


@legacy_api("te_compiler.TECompiler")
class TECompiler(LegacyObject):
    """TECompiler to get lowered code.

    There is one per process: use :func:`get`. Direct construction raises ``RuntimeError``.
    It is a view of the engine behind ``compile_engine.get()``: each method runs that engine's
    un-warned core (``**INTERNAL``) and warns as itself.
    """

    _instance: TECompiler | None = None
    _engine: CompileEngine

    def __init__(self) -> None:
        raise RuntimeError("Cannot construct a TECompiler")

    # The engine's own methods, run un-warned on the shared engine; each warns as itself.
    lower = _on_engine("lower", "te_compiler.TECompiler.lower")
    jit = _on_engine("jit", "te_compiler.TECompiler.jit")
    clear = _on_engine("clear", "te_compiler.TECompiler.clear")

    @legacy_api("te_compiler.TECompiler.items")
    def items(self) -> list[tuple[objects.CCacheKey, Any]]:
        """List items in the cache.

        Returns
        -------
        list of (CCacheKey, CCacheValue)
            Values count from 1: ``use_count`` is the number of lowerings of that entry.
        """
        return [(key, shared.te_value(value)) for key, value in self._engine.items(**INTERNAL)]


_compiler_lock = threads.fork_safe(threading.Lock())


def global_compiler() -> TECompiler:
    """Get the global TE Compiler (the core of ``te_compiler.get``).

    Returns
    -------
    compiler : TECompiler
        The process-wide singleton; it shares its cache with ``compile_engine.get()``.
    """
    compiler = TECompiler._instance
    if compiler is None:
        with _compiler_lock:
            if TECompiler._instance is None:
                instance = TECompiler.__new__(TECompiler)
                instance._engine = global_engine()
                TECompiler._instance = instance
            compiler = TECompiler._instance
    return compiler


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
    source = _trace.source_function(func)
    resolved = as_target(target)
    if resolved is None:
        raise ValueError("Need target when source_func is a Function")
    with resolved:
        traced = _trace.trace(source, global_engine().op_lowering)
    arguments = traced.inputs + [placeholder for placeholder, _ in traced.constants]
    outputs = _lowering.distinct_outputs(arguments, traced.outputs)
    name = legacy_func_name(source, "fused").replace(".", "_")  # as legacy GetUniqueName did
    return _lowering.to_prim_func(arguments, outputs, name)
