"""The legacy strategy functions over the implementation registry.

``select_implementation``, ``get_valid_implementations``, ``get_shape``, ``lower_call`` and
``LoweredOutput``: the un-warned cores that the API table turns into ``compile_engine``'s and
``te_compiler``'s functions and the ``relay.backend.*`` globals (``legacy_surface``). The registry
they read is :mod:`compile_engine_compat.pipeline.implementations`.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm import te, tirx

from compile_engine_compat.deprecations import INTERNAL, LegacyObject, legacy_api
from compile_engine_compat.pipeline.implementations import (
    OpImplementation,
    as_tensors,
    best_implementation,
    valid_implementations,
)
from compile_engine_compat.surfaces import passconfig

__all__ = [
    "LoweredOutput",
    "add_autotvm_check",
    "get_shape",
    "get_valid_implementations",
    "lower_call",
    "make_lowered_output",
    "select_implementation",
]

autotvm_logger = logging.getLogger("autotvm")

# -- AutoTVM ----------------------------------------------------------------------------------

_autotvm_warned = False
_AUTOTVM_MESSAGE = (
    "select_implementation(use_autotvm=True): modern TVM has no AutoTVM tuning records to "
    "consult; the implementation with the highest plevel is used. Pass use_autotvm=False to "
    "silence this warning."
)


def _warn_autotvm_once() -> None:
    global _autotvm_warned
    if _autotvm_warned:
        return
    _autotvm_warned = True
    # Legacy warned once per process that ops were untuned; say why nothing can be tuned.
    warnings.warn(_AUTOTVM_MESSAGE, UserWarning, stacklevel=4)
    autotvm_logger.debug(_AUTOTVM_MESSAGE)


# Called by ``select_implementation`` when ``use_autotvm=True``, before selecting; a check raises
# when tuning records are in force that selection by plevel would silently ignore (the served
# ``tvm.autotvm.apply_history_best`` adds one).
_autotvm_checks: list[Callable[[], None]] = []


def add_autotvm_check(check: Callable[[], None]) -> None:
    """Run ``check()`` before every ``select_implementation(use_autotvm=True)``; it may raise."""
    if check not in _autotvm_checks:
        _autotvm_checks.append(check)


def _auto_scheduler_enabled() -> bool:
    return bool(passconfig.current_config().get(passconfig.USE_AUTO_SCHEDULER, False))


# -- the legacy module functions' cores --------------------------------------------------------
# Un-warned: compile_engine's and te_compiler's functions of these names, and the
# relay.backend.lower_call global, are made from them by the API table (legacy_surface).


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
    selects by plevel (silently so under ``relay.backend.use_auto_scheduler``, as legacy did).

    Parameters
    ----------
    op : tvm.ir.Op or str
    attrs : tvm.ir.Attrs or None
    inputs : list of te.Tensor
    out_type : relax type or None
    target : tvm.target.Target or str
    use_autotvm : bool

    Returns
    -------
    (OpImplementation, list of te.Tensor)
    """
    if use_autotvm and not _auto_scheduler_enabled():
        for check in _autotvm_checks:
            check()
        _warn_autotvm_once()
    attrs = _tvm_attrs(op, attrs, inputs)
    best = best_implementation(op, inputs, target, attrs, out_type)
    outputs = as_tensors(best.compute(attrs, list(inputs), out_type), f"implementation {best.name}")
    return best, outputs


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
        The legalization first (unless replaced with :func:`temp_strategy`), then registered ones.
    """
    # Conditions see the input shapes only; a strategy function sees everything.
    return valid_implementations(op, inputs, _tvm_attrs(op, attrs, inputs), out_type, target)


def _tvm_attrs(op: Any, attrs: Any, inputs: Sequence[te.Tensor]) -> Any:
    """TVM's attributes for ``attrs``: a front-end call's (``relay.op.get("nn.conv2d")`` with
    ``typed_call.attrs``) become its Relax call's, through the op's ``relax_attrs``."""
    convert = getattr(op, "relax_attrs", None)
    if attrs is None or isinstance(attrs, tvm.ir.Attrs) or not callable(convert):
        return attrs
    return convert(attrs, list(inputs))


def get_shape(shape: Sequence[Any]) -> list[Any]:
    """Convert the shape to correct dtype and vars.

    Modern TVM indexes with int64 throughout (legacy ``INDEX_DEFAULT_I64=ON``), so integer dims
    are kept as they are; plain Python ints become int64 ``IntImm``; symbolic dims are kept.

    Parameters
    ----------
    shape : sequence of int or PrimExpr

    Returns
    -------
    list of PrimExpr
    """
    return [tirx.IntImm("int64", d) if isinstance(d, int) else d for d in shape]


def make_lowered_output(outputs: Sequence[te.Tensor], implement: Any) -> LoweredOutput:
    """Build a :class:`LoweredOutput` as the engine does: uncounted, without a warning."""
    return LoweredOutput(list(outputs), implement, **INTERNAL)


def lower_call(
    call: Any, inputs: Sequence[te.Tensor], target: Any, otype: Any = None
) -> LoweredOutput:
    """Lower the call expression to op implementation and tensor outputs.

    Parameters
    ----------
    call : tvm.ir.Call
        A call to a Relax op.
    inputs : list of te.Tensor
        Its arguments as TE tensors.
    target : tvm.target.Target
    otype : relax type, optional
        Overrides ``call.ty`` as the output type handed to the compute.

    Returns
    -------
    LoweredOutput
    """
    if not isinstance(call, tvm.ir.Call) or not isinstance(call.op, tvm.ir.Op):
        raise TypeError(
            "lower_call needs a call to a tvm.ir.Op, got "
            f"{type(getattr(call, 'op', call)).__qualname__}"
        )
    out_type = otype if otype is not None else call.ty
    best, outputs = select_implementation(
        call.op, call.attrs, list(inputs), out_type, target, use_autotvm=False
    )
    return make_lowered_output(outputs, best)


@legacy_api("compile_engine.LoweredOutput")
class LoweredOutput(LegacyObject):
    """Lowered output: the TE outputs of an op call and the implementation that made them."""

    __slots__ = ("implementation", "outputs")

    outputs: list[te.Tensor]
    implementation: Any

    def __init__(self, outputs: Sequence[te.Tensor], implement: Any) -> None:
        self.outputs = list(outputs)
        self.implementation = implement

    def __repr__(self) -> str:
        name = getattr(self.implementation, "name", self.implementation)
        return f"LoweredOutput({name}, outputs={len(self.outputs)})"
