"""A QNN call becomes Relax through its lowering: the emit function of every QNN row.

The call's Relax arguments stand in as Relay leaves (a ``relay.Constant`` for a Relax constant,
so the lowering reads scales and zero points; a typed ``relay.Var`` otherwise); the lowering
builds the plain Relay graph; each of its calls is emitted with its own row's emit function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.relay._impl.dynamic import BROADCASTING, broadcast_call, shape_known
from compile_engine_compat.relay._impl.registry import Emit, RelayOp
from compile_engine_compat.relay.expr import Attrs, Call, Constant, Expr, Tuple, Var
from compile_engine_compat.relay.qnn.lowering.common import ArgType
from compile_engine_compat.relay.ty import TensorType, TupleType

__all__ = ["Lowering", "arg_type", "lowered_emit", "lowering_of", "relay_type"]

#: ``lower(args, attrs, types) -> relay.Expr`` of plain ops.
Lowering = Callable[[list[Expr], Attrs, list[ArgType]], Expr]


def _static(shape: Any) -> tuple[Any, ...]:
    """The dimensions: ints where known, TVM's symbolic dimensions as they are."""
    return tuple(int(d) if isinstance(d, int | tvm.tirx.IntImm) else d for d in shape)


def arg_type(ty: Any) -> ArgType:
    """The :class:`ArgType` of a Relax value's type (``value.ty``)."""
    if isinstance(ty, tvm.ir.TupleType):
        return ArgType((), "", tuple(arg_type(f) for f in ty.fields))
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise ValueError(f"a QNN argument needs a tensor type of known shape, got {ty}")
    return ArgType(_static(ty.shape.values), str(ty.dtype))


def relay_type(ty: Any) -> ArgType:
    """The :class:`ArgType` of a Relay type (``checked_type``)."""
    if isinstance(ty, TupleType):
        return ArgType((), "", tuple(relay_type(f) for f in ty.fields))
    if isinstance(ty, TensorType):
        return ArgType(_static(ty.shape), str(ty.dtype))
    raise ValueError(f"a QNN argument must be a tensor or a tuple of tensors, got {ty}")


def _leaf(value: Any, ty: ArgType, name: str) -> Expr:
    if isinstance(value, tvm.ir.expr.Constant):
        data = value.data if hasattr(value, "data") else value.value
        return Constant(data)
    if isinstance(value, relax.Tuple):
        return Tuple(
            [_leaf(f, t, f"{name}_{i}") for i, (f, t) in enumerate(zip(value.fields, ty.fields))]
        )
    if ty.fields:
        return Tuple(
            [_leaf(relax.TupleGetItem(value, i), t, f"{name}_{i}") for i, t in enumerate(ty.fields)]
        )
    return Var(name, TensorType(ty.shape, ty.dtype))


def _emit_graph(bb: relax.BlockBuilder, root: Expr, memo: dict[int, Any]) -> Any:
    """The Relax value of the plain Relay graph ``root`` over the leaves in ``memo``."""

    def visit(node: Expr, bind: bool) -> Any:
        if id(node) in memo:
            return memo[id(node)]
        if isinstance(node, Constant):
            value: Any = relax.const(node.data)
        elif isinstance(node, Tuple):
            value = relax.Tuple([visit(f, True) for f in node.fields])
        elif isinstance(node, Call) and isinstance(node.op, RelayOp):
            args = [visit(a, True) for a in node.args]
            attrs = node.attrs if node.attrs is not None else node.op.row.default_attrs()
            value = bb.normalize(node.op.row.emit(bb, args, attrs))
            if (
                isinstance(value, relax.Call)
                and getattr(value.op, "name", None) in BROADCASTING
                and not shape_known(value)
            ):  # a run-time dimension (relay.Any()): broadcast as Relay did
                value = broadcast_call(bb, value, f"relay.{node.op.name}")
            if bind and not isinstance(value, relax.Var | tvm.ir.expr.Constant):
                value = bb.emit(value)
        else:
            raise TypeError(f"a QNN lowering produced {type(node).__name__}, not a plain op call")
        memo[id(node)] = value
        return value

    return visit(root, False)


class _LoweredEmit:
    """The emit function of a QNN row: its lowering, emitted as plain Relax ops."""

    def __init__(self, lower: Lowering) -> None:
        self.lowering = lower

    def __call__(self, bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        values = [bb.normalize(a) for a in args]
        types = [arg_type(v.ty) for v in values]
        leaves = [_leaf(v, t, f"qnn_arg{i}") for i, (v, t) in enumerate(zip(values, types))]
        memo: dict[int, Any] = {}
        for leaf, value in zip(leaves, values):
            _remember(leaf, value, memo)
        return _emit_graph(bb, self.lowering(leaves, attrs, types), memo)


def lowered_emit(lower: Lowering) -> Emit:
    """The emit function of a QNN row whose lowering is ``lower``."""
    return _LoweredEmit(lower)


def lowering_of(row: Any) -> Lowering | None:
    """The lowering behind a QNN row's emit function (None for any other row)."""
    emit = row.emit
    return emit.lowering if isinstance(emit, _LoweredEmit) else None


def _remember(leaf: Expr, value: Any, memo: dict[int, Any]) -> None:
    memo[id(leaf)] = value
    if isinstance(leaf, Tuple):
        for i, field in enumerate(leaf.fields):
            inner = (
                value.fields[i] if isinstance(value, relax.Tuple) else relax.TupleGetItem(value, i)
            )
            _remember(field, inner, memo)
