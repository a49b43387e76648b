"""Lower: turn a TE graph into one schedulable PrimFunc, its injective stages inlined."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import tvm
from tvm import s_tir, te, tirx

from compile_engine_compat.boundary import schedule_ffi

logger = logging.getLogger("compile_engine")
# s_tir's FFI functions without the Python wrapper's checks (see boundary.PRIVATE_NAMES).
_schedule_api = schedule_ffi()

__all__ = ["distinct_outputs", "expanding_calls", "inline_injective", "to_prim_func"]


def distinct_outputs(
    arguments: Sequence[te.Tensor], outputs: Sequence[te.Tensor]
) -> list[te.Tensor]:
    """Give every output its own buffer.

    ``te.create_prim_func`` rejects a tensor that appears twice in its argument list, which happens
    for an identity output (an input returned as is) and for a repeated output. Those get a copy
    stage, as the legacy engine's placeholder bypass did.
    """
    taken: list[te.Tensor] = list(arguments)
    result: list[te.Tensor] = []
    for out in outputs:
        if any(out.same_as(t) for t in taken):
            out = _copy(out)
        taken.append(out)
        result.append(out)
    return result


def _copy(tensor: te.Tensor) -> te.Tensor:
    return te.compute(tensor.shape, lambda *i: tensor(*i), name=f"{tensor.op.name}_copy")


def to_prim_func(
    inputs: Sequence[te.Tensor], outputs: Sequence[te.Tensor], name: str
) -> tirx.PrimFunc:
    """Build ONE PrimFunc whose parameters are ``inputs + outputs`` (destination-passing).

    Parameters
    ----------
    inputs : sequence of te.Tensor
        Placeholders, in calling order.
    outputs : sequence of te.Tensor
        Distinct output tensors (see :func:`distinct_outputs`).
    name : str
        The ``global_symbol`` of the PrimFunc.
    """
    prim_func = te.create_prim_func(list(inputs) + list(outputs), index_dtype_override="int64")
    return prim_func.with_attr("global_symbol", name)


def _is_spatial(block: Any) -> bool:
    return bool(block.iter_vars) and all(
        iv.iter_type == tirx.IterVar.DataPar for iv in block.iter_vars
    )


def _is_identity_copy(block: Any) -> bool:
    """Whether ``block`` is ``out[v0, ..., vn] = in[v0, ..., vn]``: its own iteration variables, in
    order, index both sides (TOPI's pad with zero padding is one)."""
    body = block.body
    value = getattr(body, "value", None)
    if not isinstance(body, tirx.BufferStore) or not isinstance(value, tvm.ir.TensorLoad):
        return False
    own = [iv.var for iv in block.iter_vars]
    return (
        len(body.indices) == len(own) == len(value.indices)
        and all(i.same_as(v) for i, v in zip(body.indices, own))
        and all(i.same_as(v) for i, v in zip(value.indices, own))
    )


# Intrinsics that code generation emits as one instruction or one libm call, each using its
# argument once. Every other call (tanh, erf, sinh, atanh, isnan, ...) may be expanded by TVM's
# intrinsic lowering into a formula that uses its argument several times: nesting k of them in one
# expression makes the generated code grow like c**k (8 nested tanh: 150 s of LLVM time).
_SINGLE_USE_CALLS = frozenset(
    f"tirx.{name}"
    for name in (
        "exp", "exp2", "exp10", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "fabs",
        "floor", "ceil", "round", "nearbyint", "trunc", "pow", "fma", "sigmoid", "if_then_else",
        "likely", "popcount", "clz", "copysign",
    )
)  # fmt: skip
_CHILDREN = ("a", "b", "value", "condition", "true_value", "false_value")


def expanding_calls(expr: Any, recurse: Callable[[Any], int] | None = None) -> int:
    """Count the calls in ``expr`` that intrinsic lowering may expand (see _SINGLE_USE_CALLS).

    ``recurse`` counts the sub-expressions (default: this function).
    """
    recurse = recurse or expanding_calls
    if isinstance(expr, tvm.ir.Call):
        own = 0 if getattr(expr.op, "name", "") in _SINGLE_USE_CALLS else 1
        return own + sum(recurse(arg) for arg in expr.args)
    return sum(recurse(getattr(expr, f)) for f in _CHILDREN if hasattr(expr, f))


def _stage_expanding_calls(block: Any) -> int:
    body = block.body
    return expanding_calls(body.value) if isinstance(body, tirx.BufferStore) else 0


def inline_injective(prim_func: tirx.PrimFunc, name: str) -> s_tir.Schedule:
    """Return a schedule of ``prim_func`` with injective stages inlined into their consumers.

    This is what the legacy injective schedule did. It keeps compile time linear in the number of
    ops. A stage is inlined only when every consumer is itself spatial: inlining into a reduction
    would recompute the whole producer chain once per reduction step. And at most one
    possibly-expanding intrinsic call (tanh, erf, ...) ends up in any stage: nesting them makes
    code generation time exponential.

    Parameters
    ----------
    prim_func : tirx.PrimFunc
        A function made by :func:`to_prim_func`.
    name : str
        Its name in the schedule's module.

    Returns
    -------
    tvm.s_tir.Schedule
        Working on ``name``; ``schedule.mod`` holds the inlined function.
    """
    sch = s_tir.Schedule(tvm.IRModule({name: prim_func}))
    sch.work_on(name)
    try:
        root = sch.get_sblock("root")
    except s_tir.ScheduleError:
        return sch  # a single (extern) stage has no root block and nothing to inline
    # Expanding calls per stage, kept up to date as stages are inlined into their consumers. Each
    # stage's own expression is walked once, before anything is inlined into it: linear time.
    expanding: dict[str, int] = {}

    def calls_in(block: Any) -> int:
        if block.name_hint not in expanding:
            expanding[block.name_hint] = _stage_expanding_calls(block)
        return expanding[block.name_hint]

    # The FFI entry points directly: the Python methods' argument type checks cost more than the
    # schedule primitives themselves on long chains.
    for block_rv in _schedule_api.ScheduleGetChildBlocks(sch, root):
        block = _schedule_api.ScheduleGet(sch, block_rv)
        if not _is_spatial(block):
            continue
        consumers = [
            _schedule_api.ScheduleGet(sch, c)
            for c in _schedule_api.ScheduleGetConsumers(sch, block_rv)
        ]
        if not consumers:
            continue
        # A plain copy inlined into a reduction recomputes nothing: its consumers read the source
        # in its place (a 1x1 conv's zero pad: a copy of the whole input per call, a third of
        # MobileNetV2's 32->16 projection at 112x112).
        if not all(_is_spatial(c) for c in consumers) and not _is_identity_copy(block):
            continue
        calls = calls_in(block)
        consumer_calls = [calls_in(c) for c in consumers]
        if calls and any(consumer_calls):
            continue
        try:
            _schedule_api.ScheduleComputeInline(sch, block_rv)
            for consumer in consumers:
                expanding[consumer.name_hint] += calls
        except (s_tir.ScheduleError, TypeError):
            # Not inlinable (e.g. a non-affine read), or TVM's inliner trips on mixed int32/int64
            # indices (an int32 `take` index into a concat); keeping the stage is always correct.
            continue
    return sch
