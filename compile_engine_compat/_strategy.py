"""Op implementations: the modern stand-in for Relay's ``OpStrategy``.

Every Relax op has one default implementation: its own legalization, traced to TE. Users may
register more per op (as ``TempOpAttr(op, "FTVMStrategy", ...)`` allowed); selection picks the
highest ``plevel`` among those whose condition holds for the input shapes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import te

from ._deprecation import warn_legacy
from ._trace import trace_op

__all__ = [
    "LoweredOutput",
    "OpImplementation",
    "get_shape",
    "get_valid_implementations",
    "lower_call",
    "select_implementation",
]

logger = logging.getLogger("compile_engine")
te_compiler_logger = logging.getLogger("te_compiler")

Compute = Callable[[Any, list[te.Tensor], Any], list[te.Tensor]]
Condition = Callable[[list[te.Tensor]], bool]

DEFAULT_PLEVEL = 10


@dataclass(frozen=True)
class OpImplementation:
    """One way to compute an op.

    Attributes
    ----------
    name : str
        Shown in logs ("Using <name> for <op> ...").
    compute : callable
        ``compute(attrs, inputs, out_type) -> list of te.Tensor``.
    schedule : callable, optional
        ``schedule(sch: tvm.s_tir.Schedule, block_names: list[str]) -> None``; applied after lowering.
    plevel : int
        Priority; the highest valid one is selected.
    condition : callable, optional
        ``condition(inputs) -> bool`` on the input tensors' shapes; the implementation applies
        only when it returns True (legacy ``SpecializedCondition``).
    """

    name: str
    compute: Compute
    schedule: Callable[..., None] | None = None
    plevel: int = DEFAULT_PLEVEL
    condition: Condition | None = None


def _op_name(op: Any) -> str:
    name = op.name if isinstance(op, tvm.ir.Op) else str(op)
    return name if name.startswith("relax.") else f"relax.{name}"


def default_implementation(op: Any) -> OpImplementation:
    """Return the op's own legalization as an implementation (plevel 10)."""
    name = _op_name(op)

    def compute(attrs: Any, inputs: list[te.Tensor], out_type: Any) -> list[te.Tensor]:
        return trace_op(name, attrs, inputs, out_type)

    return OpImplementation(f"{name.removeprefix('relax.')}.legalize", compute)


_registry: dict[str, list[OpImplementation]] = {}


def register_implementation(op: Any, impl: OpImplementation) -> None:
    """Add an implementation for ``op`` (a Relax op or its name)."""
    _registry.setdefault(_op_name(op), []).append(impl)


def unregister_implementation(op: Any, impl: OpImplementation) -> None:
    """Remove an implementation added with :func:`register_implementation`."""
    impls = _registry.get(_op_name(op), [])
    if impl in impls:
        impls.remove(impl)


def registered_implementations(op: Any) -> list[OpImplementation]:
    """Return the default implementation followed by the user-registered ones."""
    return [default_implementation(op), *_registry.get(_op_name(op), [])]


def has_user_implementations(op_name: str) -> bool:
    """Return True when ``op_name`` has implementations beyond its legalization."""
    return bool(_registry.get(_op_name(op_name)))


def valid_implementations(op: Any, inputs: Sequence[te.Tensor]) -> list[OpImplementation]:
    """Implementations of ``op`` whose condition holds for ``inputs`` (no warning)."""
    tensors = list(inputs)
    return [i for i in registered_implementations(op) if i.condition is None or i.condition(tensors)]


def best_implementation(op: Any, inputs: Sequence[te.Tensor]) -> OpImplementation:
    """The valid implementation with the highest plevel; the first one wins a tie (legacy ``max``)."""
    impls = valid_implementations(op, inputs)
    if not impls:
        raise RuntimeError(f"No valid {_op_name(op)} implementations")
    best = max(impls, key=lambda impl: impl.plevel)
    for log in (logger, te_compiler_logger):
        log.info(
            "Using %s for %s based on highest priority (%d)", best.name, _op_name(op), best.plevel
        )
    return best


class LoweredOutput:
    """Lowered output: the TE outputs of an op call and the implementation that made them."""

    __slots__ = ("implementation", "outputs")

    def __init__(self, outputs: Sequence[te.Tensor], implement: OpImplementation) -> None:
        warn_legacy("compile_engine.LoweredOutput")
        self.outputs = list(outputs)
        self.implementation = implement

    def same_as(self, other: object) -> bool:
        """Legacy ``Object.same_as``: identity."""
        return self is other


def get_shape(shape: Sequence[Any]) -> list[Any]:
    """Convert the shape to correct dtype and vars.

    Modern TVM indexes with int64 throughout (legacy ``INDEX_DEFAULT_I64=ON``), so integer dims
    are kept as they are; plain Python ints become int64 ``IntImm``; symbolic dims are kept.
    """
    warn_legacy("compile_engine.get_shape")
    return [tvm.tirx.IntImm("int64", d) if isinstance(d, int) else d for d in shape]


def get_valid_implementations(
    op: Any, attrs: Any, inputs: Sequence[te.Tensor], out_type: Any, target: Any
) -> list[OpImplementation]:
    """Get all valid implementations of ``op`` for these inputs.

    Parameters
    ----------
    op : tvm.ir.Op or str
    attrs : tvm.ir.Attrs or None
    inputs : list of te.Tensor
    out_type : relax type or None
    target : tvm.target.Target or str

    Returns
    -------
    list of OpImplementation
    """
    warn_legacy("compile_engine.get_valid_implementations")
    return valid_implementations(op, inputs)


def select_implementation(
    op: Any,
    attrs: Any,
    inputs: Sequence[te.Tensor],
    out_type: Any,
    target: Any,
    use_autotvm: bool = True,
) -> tuple[OpImplementation, list[te.Tensor]]:
    """Select the implementation with the highest plevel and compute its outputs.

    ``use_autotvm`` has no effect: modern TVM has no AutoTVM records to consult.

    Returns
    -------
    (OpImplementation, list of te.Tensor)
    """
    warn_legacy("compile_engine.select_implementation")
    best = best_implementation(op, inputs)
    return best, list(best.compute(attrs, list(inputs), out_type))


def lower_call(
    call: Any, inputs: Sequence[te.Tensor], target: Any, otype: Any = None
) -> LoweredOutput:
    """Lower the call expression to op implementation and tensor outputs."""
    warn_legacy("compile_engine.lower_call")
    if not isinstance(call.op, tvm.ir.Op):
        raise TypeError(f"lower_call needs a call to a tvm.ir.Op, got {type(call.op).__name__}")
    best = best_implementation(call.op, inputs)
    outputs = best.compute(call.attrs, list(inputs), otype if otype is not None else call.ty)
    result = LoweredOutput.__new__(LoweredOutput)
    result.outputs = list(outputs)
    result.implementation = best
    return result
