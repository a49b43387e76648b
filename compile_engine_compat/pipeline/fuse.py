"""Inline injective TE stages into their consumers before ``te.create_prim_func``.

This is the legacy injective schedule's ``compute_inline``, done on the TE graph. The same rules
as :func:`.lower.inline_injective` decide which stages go: a single-output spatial stage that
is not an output and whose every consumer is a spatial stage, with at most one possibly-expanding
intrinsic (tanh, erf, ...) per resulting stage. Done here, it takes time linear in the number of
stages; done with ``s_tir`` primitives, each ``compute_inline`` costs time proportional to the
number of blocks left, so a chain of n ops cost n² (a 200-op chain: 230 ms of inlining against
1-2 ms for 10 ops).

Why it stays linear: an inlined stage's expression is written once, over *canonical* index
variables (one per dimension and dtype). A consumer that reads a producer at exactly those
variables, as every elementwise consumer does, takes the producer's expression as it is; only a
consumer reading at other indices (a broadcast, a transpose, a materialized stage's own loop
variables) substitutes into it.

Graphs holding anything but compute and placeholder ops (extern sort/scan kernels) are left
alone: :func:`.lower.inline_injective` handles those after ``create_prim_func``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tvm
import tvm_ffi
from tvm import te, tirx

from compile_engine_compat.boundary import handle_of, te_ffi
from compile_engine_compat.pipeline.lower import expanding_calls

__all__ = ["fuse_injective"]

_TENSOR_LOAD = tvm.ir.Op.get("te.tensor_load")
# ComputeOp/TensorLoad constructors (see boundary.PRIVATE_NAMES).
_TE_FFI = te_ffi()


def _handle(obj: Any) -> int:
    # TIR objects overload ``==`` to build expressions: key dicts by the node's address instead.
    return handle_of(obj)


def _dtype(expr: Any) -> str:
    return str(expr.ty)


def _is_spatial(op: Any) -> bool:
    return (
        isinstance(op, te.ComputeOp)
        and not op.reduce_axis
        and not any(isinstance(body, tirx.Reduce) for body in op.body)
    )


def _topological_ops(outputs: Sequence[te.Tensor]) -> list[Any] | None:
    """Every op reachable from ``outputs``, producers first; None if one is not compute/input."""
    order: list[Any] = []
    state: dict[int, bool] = {}  # False: being visited, True: done
    stack: list[tuple[Any, bool]] = [(t.op, False) for t in reversed(outputs)]
    while stack:
        op, expanded = stack.pop()
        key = _handle(op)
        if expanded:
            state[key] = True
            order.append(op)
            continue
        if key in state:
            continue
        if not isinstance(op, te.ComputeOp | te.PlaceholderOp):
            return None
        state[key] = False
        stack.append((op, True))
        stack.extend((t.op, False) for t in reversed(op.input_tensors))
    return order


def _te_expanding_calls(expr: Any) -> int:
    """:func:`expanding_calls` on a TE expression: tensor loads count as plain reads."""
    if isinstance(expr, tvm.ir.Call) and expr.op.same_as(_TENSOR_LOAD):
        return sum(_te_expanding_calls(index) for index in expr.args[1:])
    return expanding_calls(expr, _te_expanding_calls)


def _inlined_ops(order: list[Any], outputs: Sequence[te.Tensor]) -> set[int]:
    """Decide which stages to inline, in producer-first order, as ``inline_injective`` does."""
    consumers: dict[int, list[Any]] = {}
    for op in order:
        for tensor in op.input_tensors:
            consumers.setdefault(_handle(tensor.op), []).append(op)
    output_ops = {_handle(t.op) for t in outputs}
    counts = {_handle(op): _te_expanding_calls(op.body[0]) for op in order if _is_spatial(op)}
    inlined: set[int] = set()
    for op in order:
        key = _handle(op)
        users = consumers.get(key, [])
        if key in output_ops or not _is_spatial(op) or op.num_outputs != 1 or not users:
            continue
        if not all(_is_spatial(user) for user in users):
            continue
        calls = counts[key]
        if calls and any(counts[_handle(user)] for user in users):
            continue
        inlined.add(key)
        for user in users:
            counts[_handle(user)] += calls
    return inlined


class _Unsupported(Exception):
    """The graph holds an op this pass does not rebuild."""


class _Fuser:
    """Rebuilds the graph: inlined stages become expressions, the others new compute ops."""

    def __init__(self, inlined: set[int]) -> None:
        self._inlined = inlined
        self._canonical: dict[tuple[int, str], tirx.Var] = {}
        self._expressions: dict[int, Any] = {}  # inlined op -> its body over canonical vars
        self._rebuilt: dict[int, Any] = {}  # materialized op -> its new op

    def canonical(self, dim: int, dtype: str) -> tirx.Var:
        var = self._canonical.get((dim, dtype))
        if var is None:
            var = self._canonical[(dim, dtype)] = tirx.Var(f"i{dim}", dtype)
        return var

    def add(self, op: Any) -> None:
        key = _handle(op)
        if key in self._inlined:
            to_canonical = {
                _handle(iv.var): self.canonical(dim, _dtype(iv.var))
                for dim, iv in enumerate(op.axis)
            }
            self._expressions[key] = self._rewrite(op.body[0], to_canonical)
            return
        if isinstance(op, te.PlaceholderOp):
            return
        bodies = [self._rewrite(body, {}) for body in op.body]
        if all(new.same_as(old) for new, old in zip(bodies, op.body)):
            return  # nothing it reads changed: keep the op itself
        if op.num_outputs != 1:
            # A multi-output reduction (argmax) must share one source between its outputs;
            # rewriting each output apart breaks that. Rare: leave such graphs to s_tir.
            raise _Unsupported(op.name)
        self._rebuilt[key] = _TE_FFI.ComputeOp(op.name, op.tag, op.attrs, op.axis, bodies)

    def tensor(self, tensor: te.Tensor) -> te.Tensor:
        new_op = self._rebuilt.get(_handle(tensor.op))
        return tensor if new_op is None else new_op.output(tensor.value_index)

    def _load(self, tensor: te.Tensor, indices: list[Any]) -> Any:
        expression = self._expressions.get(_handle(tensor.op))
        if expression is None:
            return _TE_FFI.TensorLoad(self.tensor(tensor), indices)
        substitution: dict[int, Any] = {}
        for dim, (iv, index) in enumerate(zip(tensor.op.axis, indices)):
            var = self.canonical(dim, _dtype(iv.var))
            if index.same_as(var):
                continue
            if _dtype(index) != _dtype(var):
                index = tirx.Cast(_dtype(var), index)
            substitution[_handle(var)] = index
        return self._rewrite(expression, substitution) if substitution else expression

    def _rewrite(self, expr: Any, substitution: dict[int, Any]) -> Any:
        def on_var(var: Any, mutator: Any) -> Any:
            return substitution.get(_handle(var), var)

        def on_call(call: Any, mutator: Any) -> Any:
            if not call.op.same_as(_TENSOR_LOAD):
                return mutator.default_mutate(call)
            indices = [mutator.mutate(index) for index in call.args[1:]]
            return self._load(call.args[0], indices)

        def keep(value: Any, mutator: Any) -> Any:  # never descend into a producer's graph
            return value

        return tvm_ffi.structural_mutate(
            expr, [(tirx.Var, on_var), (tvm.ir.Call, on_call), (te.Tensor, keep)]
        )


def fuse_injective(outputs: Sequence[te.Tensor]) -> list[te.Tensor]:
    """Return ``outputs`` recomputed with their injective producer stages inlined.

    Parameters
    ----------
    outputs : sequence of te.Tensor
        Distinct output tensors of a traced function.

    Returns
    -------
    list of te.Tensor
        One per output, same shapes, dtypes and op names; ``outputs`` itself when nothing is
        inlined or the graph holds ops this pass does not rebuild.
    """
    order = _topological_ops(outputs)
    if order is None:
        return list(outputs)
    inlined = _inlined_ops(order, outputs)
    if not inlined:
        return list(outputs)
    fuser = _Fuser(inlined)
    try:
        for op in order:
            fuser.add(op)
    except _Unsupported:
        return list(outputs)
    return [fuser.tensor(t) for t in outputs]
