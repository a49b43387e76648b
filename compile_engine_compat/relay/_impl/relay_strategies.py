"""Relay's op strategies (``relay.op.OpStrategy``), mapped onto the engine's strategy registry.

Served as ``relay.op.op`` (with :func:`~compile_engine_compat.relay.op.op.register_strategy`),
and below the op table: an op's ``FTVMStrategy`` attribute (:class:`.registry.RelayOp`) is
adapted here.

A Relay strategy function ``fstrategy(attrs, inputs, out_type, target) -> OpStrategy`` is
installed with ``TempOpAttr(op, "FTVMStrategy", fstrategy)`` or :func:`register_strategy`; the
engine then calls it, with the target entered, wherever it selects an implementation (the legacy
``get_valid_implementations``/``select_implementation``, and every ``lower``/``jit`` of a
function using the op). Each Relay implementation becomes an
:class:`compile_engine_compat.OpImplementation` with the same compute, name and plevel, and the
condition of its ``te.SpecializedCondition``. Relay-era schedules are TE schedules, which modern
TVM no longer has: they are skipped, with one warning naming ``tvm.s_tir.Schedule``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import tvm
import tvm_ffi

from compile_engine_compat.deprecations import warn_legacy
from compile_engine_compat.pipeline import implementations as _implementations
from compile_engine_compat.relay.expr import Attrs


class RowAttrs(Protocol):
    """What a strategy reads of an op's row (a :class:`.registry.OpRow`, built on this module)."""

    @property
    def attrs(self) -> tuple[tuple[str, Any], ...]:
        """Relay's attribute names and their defaults."""
        ...


__all__ = [
    "OpImplementation",
    "OpSpecialization",
    "OpStrategy",
    "RelayAttrsView",
    "SpecializedCondition",
    "strategy_function",
]

RelayCompute = Callable[[Any, list[Any], Any], Any]
RelaySchedule = Callable[[Any, list[Any], Any], Any]


class SpecializedCondition:
    """``tvm.te.SpecializedCondition(conditions)``: implementations added inside apply when true.

    Parameters
    ----------
    conditions : PrimExpr or list of PrimExpr
        Clauses on the input shapes (all must hold).
    """

    _local = threading.local()

    def __init__(self, conditions: Any) -> None:
        self.clauses = list(conditions) if isinstance(conditions, list | tuple) else [conditions]

    def __enter__(self) -> SpecializedCondition:
        stack = self._stack()
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack().pop()

    @classmethod
    def _stack(cls) -> list[SpecializedCondition]:
        if not hasattr(cls._local, "stack"):
            cls._local.stack = []
        return cls._local.stack

    @classmethod
    def current(cls) -> SpecializedCondition | None:
        """The innermost active condition, or None."""
        stack = cls._stack()
        return stack[-1] if stack else None


class OpImplementation:
    """One Relay implementation: ``compute(attrs, inputs, out_type)`` and a TE schedule."""

    def __init__(
        self, compute: RelayCompute, schedule: RelaySchedule | None, name: str, plevel: int
    ) -> None:
        self.fcompute = compute
        self.fschedule = schedule
        self.name = name
        self.plevel = plevel

    def compute(self, attrs: Any, inputs: list[Any], out_type: Any) -> Any:
        """Call the compute function."""
        return self.fcompute(attrs, inputs, out_type)

    def __repr__(self) -> str:
        return f"OpImplementation({self.name}, plevel={self.plevel})"


class OpSpecialization:
    """The implementations added under one :class:`SpecializedCondition` (or none)."""

    def __init__(self, condition: SpecializedCondition | None) -> None:
        self.condition = condition
        self.implementations: list[OpImplementation] = []


class OpStrategy:
    """``relay.op.OpStrategy()``: implementations grouped by specialization."""

    def __init__(self) -> None:
        self.specializations: list[OpSpecialization] = []

    def add_implementation(
        self,
        compute: RelayCompute,
        schedule: RelaySchedule | None,
        name: str = "default",
        plevel: int = 10,
    ) -> None:
        """Add an implementation, under the current ``te.SpecializedCondition`` if any.

        Parameters
        ----------
        compute : callable
            ``compute(attrs, inputs, out_type) -> list of te.Tensor``.
        schedule : callable
            Relay's ``schedule(attrs, outs, target)``; skipped (TE schedules are gone).
        name : str
            Shown in logs and as ``impl.name``.
        plevel : int
            Priority.
        """
        condition = SpecializedCondition.current()
        for spec in self.specializations:
            if spec.condition is condition:
                break
        else:
            spec = OpSpecialization(condition)
            self.specializations.append(spec)
        spec.implementations.append(OpImplementation(compute, schedule, name, plevel))


def _clauses_holder(clauses: list[Any]) -> Callable[[list[Any]], list[Any]]:
    # The strategy ran on these very inputs, so the clauses are already about their shapes.
    return lambda inputs: clauses


class RelayAttrsView:
    """A Relax call's attributes read under Relay's names, for Relay-era computes.

    Inside ``lower``/``jit`` the engine hands a strategy the Relax call's attributes. Their names
    agree with Relay's for the ops a strategy may be set on (see ``RelayOp.set_attr``); Relay-only
    attributes (``channels``, ``kernel_size``) read as their Relay defaults, and Relax's unset
    ``out_dtype``/``out_layout`` (None) as Relay's ``""``.
    """

    def __init__(self, attrs: Any, row: RowAttrs) -> None:
        self._attrs = attrs
        self._defaults = dict(row.attrs)

    def __getattr__(self, name: str) -> Any:
        attrs = self.__dict__["_attrs"]
        if attrs is not None and name in _attr_names(attrs):
            value = getattr(attrs, name)
            if value is None and name in ("out_dtype", "out_layout"):
                return ""
            if isinstance(value, tvm_ffi.Array):
                # As the Relay-side attributes: Python tuples (today's TOPI rejects FFI arrays).
                return tuple(int(v) if isinstance(v, tvm.tirx.IntImm) else v for v in value)
            return value
        if name in self.__dict__["_defaults"]:
            return self.__dict__["_defaults"][name]
        raise AttributeError(f"the call's attributes have no {name!r}")

    def get_int(self, key: str) -> int:
        """The attribute as an int."""
        return int(getattr(self, key))

    def get_str(self, key: str) -> str:
        """The attribute as a str."""
        return str(getattr(self, key))

    def get_int_tuple(self, key: str) -> tuple[int, ...]:
        """The attribute as a tuple of ints."""
        return tuple(int(v) for v in getattr(self, key))


def _attr_names(attrs: Any) -> set[str]:
    if isinstance(attrs, Attrs):
        return set(attrs.keys())
    return {n for n in dir(attrs) if not n.startswith("_")}


def _relay_compute(fcompute: RelayCompute, row: RowAttrs) -> RelayCompute:
    def compute(attrs: Any, inputs: list[Any], out_type: Any) -> Any:
        if not isinstance(attrs, Attrs):
            attrs = RelayAttrsView(attrs, row)
        return fcompute(attrs, inputs, out_type)

    return compute


def _convert(strategy: OpStrategy, row: RowAttrs) -> list[_implementations.OpImplementation]:
    impls = []
    for spec in strategy.specializations:
        condition = None if spec.condition is None else _clauses_holder(spec.condition.clauses)
        for impl in spec.implementations:
            if impl.fschedule is not None:
                # One warning per call site (the default filter): TE schedules are gone.
                warn_legacy("relay.op.strategy.wrap_topi_schedule")
            impls.append(
                _implementations.OpImplementation(
                    impl.name,
                    _relay_compute(impl.fcompute, row),
                    None,
                    impl.plevel,
                    condition=condition,
                )
            )
    return impls


def strategy_function(
    fstrategy: Callable[..., OpStrategy], row: RowAttrs
) -> _implementations.StrategyFunction:
    """Adapt a Relay strategy function to the engine's registry.

    Parameters
    ----------
    fstrategy : callable
        ``fstrategy(attrs, inputs, out_type, target) -> OpStrategy``.
    row : OpRow
        The op's row of the Relay op table.

    Returns
    -------
    callable
        ``fn(attrs, inputs, out_type, target) -> list of compile_engine_compat.OpImplementation``.
    """

    def fn(attrs: Any, inputs: list[Any], out_type: Any, target: Any) -> list[Any]:
        if isinstance(target, str):
            target = tvm.target.Target(target)
        if target is None:
            target = tvm.target.Target.current(allow_none=True) or tvm.target.Target("llvm")
        if attrs is not None and not isinstance(attrs, Attrs):
            attrs = RelayAttrsView(attrs, row)
        with target:
            strategy = fstrategy(attrs, inputs, out_type, target)
        if not isinstance(strategy, OpStrategy):
            raise TypeError(
                f"the FTVMStrategy function returned {type(strategy).__qualname__}, not a "
                "relay.op.OpStrategy"
            )
        return _convert(strategy, row)

    fn.__wrapped__ = fstrategy  # type: ignore[attr-defined]
    return fn
