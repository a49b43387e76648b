"""Op implementations: the registry that stands in for Relay's ``OpStrategy``.

Every Relax op has one default implementation: its own legalization, traced to TE (plevel 10).
Users may register more per op (as ``TempOpAttr(op, "FTVMStrategy", ...)`` allowed), or replace
the op's whole strategy for a while with :func:`temp_strategy`. Selection picks the highest
``plevel`` among the implementations whose condition holds for the input shapes, and logs the
choice to the ``compile_engine`` and ``te_compiler`` loggers, as the legacy code did.

The engine's tracer asks :func:`engine_op_lowering` for every op call, so registered
implementations, and a user's override of the ``relay.backend.lower_call`` global, take effect
inside ``lower``/``jit``. The legacy functions over this registry (``select_implementation``,
``get_valid_implementations``, ``lower_call``, ...) are the facade's
(:mod:`compile_engine_compat.facade.legacy_strategy`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import relax, te, tirx

from compile_engine_compat.pipeline import op_sources
from compile_engine_compat.pipeline.op_sources import OpSource
from compile_engine_compat.pipeline.trace import Scheduled, TEValue, flatten, trace_op
from compile_engine_compat.runtime import threads

__all__ = [
    "LOWER_CALL_GLOBAL",
    "OpImplementation",
    "StrategyFunction",
    "as_tensors",
    "best_implementation",
    "customized",
    "default_implementation",
    "engine_op_lowering",
    "has_user_implementations",
    "op_name",
    "own_lower_call",
    "register_implementation",
    "registered_implementations",
    "remember_own_lower_call",
    "set_strategy_function",
    "temp_strategy",
    "unregister_implementation",
    "user_lower_call",
    "valid_implementations",
]

logger = logging.getLogger("compile_engine")
te_compiler_logger = logging.getLogger("te_compiler")

Compute = Callable[[Any, list[te.Tensor], Any], Any]
Condition = Callable[[list[te.Tensor]], Any]
Schedule = Callable[[Any, list[str]], None]

DEFAULT_PLEVEL = 10
LOWER_CALL_GLOBAL = "relay.backend.lower_call"


@dataclass(frozen=True)
class OpImplementation:
    """One way to compute an op.

    Attributes
    ----------
    name : str
        Shown in logs ("Using <name> for <op> ...").
    compute : callable
        ``compute(attrs, inputs, out_type) -> te.Tensor or list of te.Tensor``.
    schedule : callable, optional
        ``schedule(sch: tvm.s_tir.Schedule, block_names: list[str]) -> None``; applied to the
        engine's schedule after lowering, with the names of this implementation's output blocks
        that survived injective inlining.
    plevel : int
        Priority; the highest valid one is selected.
    condition : callable, optional
        ``condition(inputs)`` on the input tensors (legacy ``SpecializedCondition``). It returns a
        bool, a ``PrimExpr`` or a list of them; the implementation applies only when every clause
        simplifies to a non-zero constant (a symbolic clause does not hold).
    """

    name: str
    compute: Compute
    schedule: Schedule | None = None
    plevel: int = DEFAULT_PLEVEL
    condition: Condition | None = None


def op_name(op: Any) -> str:
    # A front end's op object (relay.op.get("nn.dense")) names the Relax op it becomes.
    relax_name = getattr(op, "relax_op_name", None)
    if isinstance(relax_name, str):
        return relax_name
    name = op.name if isinstance(op, tvm.ir.Op) else str(op)
    return name if name.startswith("relax.") else f"relax.{name}"


@functools.cache
def default_implementation(op: str) -> OpImplementation:
    """Return the op's own legalization as an implementation (plevel 10); one object per op."""
    name = op_name(op)

    def compute(attrs: Any, inputs: list[te.Tensor], out_type: Any) -> list[te.Tensor]:
        return trace_op(name, attrs, inputs, out_type)

    return OpImplementation(f"{name.removeprefix('relax.')}.legalize", compute)


# -- the registry -------------------------------------------------------------------------------


@dataclass
class _Strategy:
    include_default: bool
    impls: list[OpImplementation]


_registry_lock = threads.fork_safe(threading.Lock())
_registry: dict[str, _Strategy] = {}

#: ``fn(attrs, inputs, out_type, target) -> implementations``: a strategy computed per call, as
#: Relay's ``FTVMStrategy`` functions were. While set for an op it replaces the op's
#: implementations (its legalization included), as ``TempOpAttr(op, "FTVMStrategy", fn)`` did.
StrategyFunction = Callable[[Any, list[Any], Any, Any], Sequence[OpImplementation]]
_strategy_functions: dict[str, StrategyFunction] = {}


def set_strategy_function(op: Any, fn: StrategyFunction | None) -> StrategyFunction | None:
    """Set (or with None, remove) ``op``'s per-call strategy function; return the previous one.

    Parameters
    ----------
    op : tvm.ir.Op or str
        The Relax op (or its name).
    fn : callable or None
        ``fn(attrs, inputs, out_type, target)`` returning the op's implementations.

    Returns
    -------
    callable or None
        The function it replaces.
    """
    name = op_name(op)
    with _registry_lock:
        previous = _strategy_functions.pop(name, None)
        if fn is not None:
            _strategy_functions[name] = fn
    return previous


def register_implementation(op: Any, impl: OpImplementation) -> OpImplementation:
    """Add an implementation for ``op`` (a Relax op or its name), next to its legalization.

    Parameters
    ----------
    op : tvm.ir.Op or str
        ``"relax.nn.conv2d"`` or ``"nn.conv2d"``.
    impl : OpImplementation

    Returns
    -------
    OpImplementation
        ``impl``, so the call can be used as an expression.
    """
    if not isinstance(impl, OpImplementation):
        raise TypeError(f"impl must be an OpImplementation, got {type(impl).__qualname__}")
    with _registry_lock:
        _registry.setdefault(op_name(op), _Strategy(True, [])).impls.append(impl)
    return impl


def unregister_implementation(op: Any, impl: OpImplementation) -> None:
    """Remove an implementation added with :func:`register_implementation`."""
    with _registry_lock:
        strategy = _registry.get(op_name(op))
        if strategy is not None and impl in strategy.impls:
            strategy.impls.remove(impl)


@contextlib.contextmanager
def temp_strategy(op: Any, impls: Sequence[OpImplementation]) -> Iterator[None]:
    """Replace ``op``'s implementations, its legalization included, inside the block.

    The modern form of ``with TempOpAttr("nn.conv2d", "FTVMStrategy", my_strategy):``.

    Parameters
    ----------
    op : tvm.ir.Op or str
    impls : sequence of OpImplementation
        The op's only implementations while the block runs.
    """
    name = op_name(op)
    for impl in impls:
        if not isinstance(impl, OpImplementation):
            raise TypeError(f"impls must hold OpImplementation, got {type(impl).__qualname__}")
    with _registry_lock:
        previous = _registry.get(name)
        _registry[name] = _Strategy(False, list(impls))
    try:
        yield
    finally:
        with _registry_lock:
            if previous is None:
                _registry.pop(name, None)
            else:
                _registry[name] = previous


def registered_implementations(op: Any) -> list[OpImplementation]:
    """Return the op's implementations: its legalization (unless replaced), then the user's."""
    name = op_name(op)
    with _registry_lock:
        strategy = _registry.get(name)
        if strategy is None:
            return [default_implementation(name)]
        defaults = [default_implementation(name)] if strategy.include_default else []
        return [*defaults, *strategy.impls]


def has_user_implementations(op: str) -> bool:
    """Return True when ``op`` has implementations beyond its legalization."""
    if op_name(op) in _strategy_functions:
        return True
    strategy = _registry.get(op_name(op))
    return strategy is not None and (bool(strategy.impls) or not strategy.include_default)


def customized() -> bool:
    """Return True when a user implementation or ``lower_call`` override may change a lowering.

    The persistent cache's source index maps a function to the kernel the default lowering
    made; the engine only uses it while this is False.
    """
    if user_lower_call() is not None:
        return True
    with _registry_lock:
        names = [*_registry, *_strategy_functions]
    return any(has_user_implementations(name) for name in names)


def _holds(condition: Condition, inputs: list[Any]) -> bool:
    result = condition(inputs)
    clauses = list(result) if isinstance(result, list | tuple | tvm.ir.Array) else [result]
    analyzer = tvm.sym.Analyzer()
    for clause in clauses:
        if tvm.ir.is_prim_expr(clause):
            clause = analyzer.canonical_simplify(clause)
            if not isinstance(clause, tirx.IntImm) or clause.value == 0:
                return False
        elif not clause:
            return False
    return True


def valid_implementations(
    op: Any,
    inputs: Sequence[Any],
    attrs: Any = None,
    out_type: Any = None,
    target: Any = None,
) -> list[OpImplementation]:
    """Implementations of ``op`` whose condition holds for ``inputs`` (no warning).

    ``attrs``, ``out_type`` and ``target`` reach the op's strategy function, if it has one.
    """
    tensors = list(inputs)
    fn = _strategy_functions.get(op_name(op))
    if fn is not None:
        impls = list(fn(attrs, tensors, out_type, target))
    else:
        impls = registered_implementations(op)
    return [i for i in impls if i.condition is None or _holds(i.condition, tensors)]


def best_implementation(
    op: Any,
    inputs: Sequence[Any],
    target: Any = None,
    attrs: Any = None,
    out_type: Any = None,
) -> OpImplementation:
    """The valid implementation with the highest plevel; the first one wins a tie (legacy ``max``).

    Logs "Using <impl> for <op> based on highest priority (<plevel>)" at INFO.
    """
    impls = valid_implementations(op, inputs, attrs, out_type, target)
    if not impls:
        where = target.kind.name if isinstance(target, tvm.target.Target) else target
        raise RuntimeError(f"No valid {op_name(op)} implementations for {where}")
    best = max(impls, key=lambda impl: impl.plevel)
    for log in (logger, te_compiler_logger):
        log.info(
            "Using %s for %s based on highest priority (%d)", best.name, op_name(op), best.plevel
        )
    return best


def as_tensors(outputs: Any, source: str) -> list[te.Tensor]:
    if hasattr(outputs, "outputs") and not isinstance(outputs, te.Tensor):
        outputs = outputs.outputs
    items = [outputs] if isinstance(outputs, te.Tensor) else list(outputs)
    for item in items:
        if not isinstance(item, te.Tensor):
            raise TypeError(
                f"{source} must return te.Tensor outputs, got {type(item).__qualname__}"
            )
    return items


def _user_source(name: str, default: OpSource) -> OpSource | None:
    """This registry's part of :func:`.op_sources.te_source`: an override, else user impls."""
    override = user_lower_call()
    if override is not None:
        return OpSource(name, "lower_call override", f"{LOWER_CALL_GLOBAL} = {override}", default)
    if has_user_implementations(name):
        names = ", ".join(impl.name for impl in registered_implementations(name))
        return OpSource(name, "user strategy", names, default)
    return None


op_sources.connect_user_source(_user_source)


# -- the tracer hook ----------------------------------------------------------------------------

# The ``relay.backend.lower_call`` function the shim registered (remember_own_lower_call). Any
# other function registered under that name is a user override and is called for every op.
_own_lower_call: list[Any] = []


def remember_own_lower_call(func: Any) -> None:
    """Record the ``relay.backend.lower_call`` the shim registered: it is no user override."""
    _own_lower_call[:] = [func]


def own_lower_call() -> Any:
    """The ``relay.backend.lower_call`` function the shim registered, or None before that."""
    return _own_lower_call[0] if _own_lower_call else None


def user_lower_call() -> Any:
    """Return the user's ``relay.backend.lower_call`` override, or None when it is the shim's."""
    current = tvm.get_global_func(LOWER_CALL_GLOBAL, allow_missing=True)
    own = own_lower_call()
    if current is None or (own is not None and current.same_as(own)):
        return None
    return current


def _traced_value(outputs: list[te.Tensor], call: Any) -> TEValue:
    if isinstance(call.ty, relax.TupleType) or len(outputs) != 1:
        return outputs
    return outputs[0]


def engine_op_lowering(
    call: Any, te_args: list[TEValue], default: Callable[[], TEValue]
) -> TEValue:
    """The engine's per-op lowering: a user ``lower_call`` override, else strategy selection.

    Parameters
    ----------
    call : tvm.ir.Call
        The op call being traced.
    te_args : list
        Its arguments as TE values.
    default : callable
        Lowers the call through its legalization (the default implementation).

    Returns
    -------
    TE value, or Scheduled
        :class:`~.trace.Scheduled` when the implementation brings a schedule.
    """
    inputs = flatten(te_args)
    target = tvm.target.Target.current(allow_none=True)
    override = user_lower_call()
    if override is not None:
        result = override(call, inputs, target)
        return _traced_value(as_tensors(result, LOWER_CALL_GLOBAL), call)
    best = best_implementation(call.op, inputs, target, call.attrs, call.ty)
    if best is default_implementation(op_name(call.op)):
        return default()
    outputs = as_tensors(best.compute(call.attrs, inputs, call.ty), f"implementation {best.name}")
    if best.schedule is not None:  # travels with the traced function to the schedule stage
        return Scheduled(_traced_value(outputs, call), best.schedule)
    return _traced_value(outputs, call)
