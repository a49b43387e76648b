"""Which values ``relay.quantize`` quantizes, and the integer graph it makes of them.

:class:`QuantizeRewriter` walks a Relay function in post order, following TVM 0.19's annotate
rules: ``nn.conv2d`` (but the layers of ``skip_conv_layers``), ``nn.dense`` (unless
``skip_dense_layer``) and ``nn.batch_matmul`` take int8 inputs (their weights quantized as
``WEIGHT``) and accumulate in ``dtype_activation``; ``multiply`` and ``add`` with a quantized
operand compute in integers; ``nn.relu``, ``clip``, ``nn.avg_pool2d`` keep their input's kind;
the layout ops (``reshape``, ``nn.batch_flatten``, ``transpose``, ``strided_slice``) and
``nn.max_pool2d`` work on ``INPUT`` (int8) values; ``nn.global_avg_pool2d`` computes in float
and stops quantization after it. Every other consumer gets the value back in float.

Each scale comes from a :class:`ScaleSource`, asked once per simulated-quantization point in
a fixed order: the calibration step walks once to list the points, then again with their
scales to emit the integer graph (:mod:`.realization`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from ..ty import TensorType
from . import realization as realize
from .qconfig import QAnnotateKind, QConfig

__all__ = ["QValue", "QuantizeRewriter", "ScaleSource", "constant_value"]

#: Ops that keep their input's kind (applied to the integer tensor as they are).
KEEP_KIND = frozenset({"nn.relu", "clip", "nn.avg_pool2d", "annotation.stop_fusion"})
#: Ops that move data only: applied to INPUT (int8) values.
LAYOUT = frozenset({"reshape", "nn.batch_flatten", "transpose", "strided_slice", "nn.max_pool2d"})
#: Ops computing in integers, with out_dtype.
ACCUMULATING = frozenset({"nn.conv2d", "nn.dense", "nn.batch_matmul"})


class ScaleSource(Protocol):
    """Gives the scale of each quantization point, in the order they are met."""

    def scale(self, source: Expr, kind: int, value: np.ndarray | None) -> float:
        """The scale of ``source`` (an expression of the float graph) quantized as ``kind``;
        ``value`` is its constant value, if any."""
        ...


@dataclass
class QValue:
    """An integer tensor standing for the float value ``source``: real = ``expr`` * ``scale``."""

    expr: Expr
    scale: float
    kind: int
    source: Expr


def constant_value(node: Expr) -> np.ndarray | None:
    """The value of a constant, or of a cast of one (weights built as ``const.astype``)."""
    if isinstance(node, Constant):
        return np.asarray(node.data.numpy())
    if _name(node) == "cast" and isinstance(node, Call):
        inner = constant_value(node.args[0])
        return None if inner is None else inner.astype(str(getattr(node.attrs, "dtype", "")))
    return None


def _name(node: Any) -> str | None:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return None


def _is_float(node: Expr) -> bool:
    typ = node.checked_type
    return isinstance(typ, TensorType) and str(typ.dtype).startswith("float")


class QuantizeRewriter(ExprMutator):
    """The integer form of a float Relay function (see the module's docstring)."""

    def __init__(self, cfg: QConfig, scales: ScaleSource) -> None:
        super().__init__(**INTERNAL)
        self.cfg = cfg
        self.scales = scales
        self.quantized: dict[int, QValue] = {}
        self.conv_index = 0
        self.stopped = False
        self.helpers: set[int] = set()  # ids of the conversions emitted at the region's edges

    # -- the integer operations ---------------------------------------------------------------
    def _q(self, node: Any) -> QValue | None:
        return self.quantized.get(id(node))

    def _keep(self, value: QValue) -> Expr:
        self.quantized[id(value.expr)] = value
        return value.expr

    def _point(self, source: Expr, kind: int, value: np.ndarray | None = None) -> float:
        return float(self.scales.scale(source, kind, value))

    def _to_kind(self, value: QValue, kind: int) -> QValue:
        scale = self._point(value.source, kind)
        expr = realize.requantize(
            value.expr,
            value.scale,
            scale,
            self.cfg.get_nbit_by_kind(kind),
            self.cfg.dtype_by_kind(kind),
            bool(self.cfg.round_for_shift),
        )
        return QValue(expr, scale, kind, value.source)

    def _from_float(self, new: Expr, source: Expr, kind: int) -> QValue:
        nbit, dtype = self.cfg.get_nbit_by_kind(kind), self.cfg.dtype_by_kind(kind)
        value = constant_value(new)
        if kind == QAnnotateKind.WEIGHT and value is None:
            kind = QAnnotateKind.INPUT  # a weight that is not a constant is calibrated
        scale = self._point(source, kind, value)
        if value is not None:
            return QValue(realize.quantize_constant(value, scale, nbit, dtype), scale, kind, source)
        expr = realize.quantize_float(new, scale, nbit, dtype)
        self.helpers.update(id(node) for node in realize.chain(expr, 4))
        return QValue(expr, scale, kind, source)

    def _as_input(self, new: Expr, source: Expr, weight: bool = False) -> QValue:
        """``new`` (the rewritten ``source``) as an INPUT (or WEIGHT) value."""
        found = self._q(new)
        if found is None:
            kind = QAnnotateKind.WEIGHT if weight else QAnnotateKind.INPUT
            return self._from_float(new, source, kind)
        if found.kind in (QAnnotateKind.INPUT, QAnnotateKind.WEIGHT):
            return found
        return self._to_kind(found, QAnnotateKind.INPUT)

    def _float(self, new: Expr) -> Expr:
        found = self._q(new)
        if found is None:
            return new
        out = realize.dequantize(found.expr, found.scale)
        self.helpers.update(id(node) for node in realize.chain(out, 2))
        return out

    def _activation(self, expr: Expr, scale: float, source: Expr) -> Expr:
        value = self._to_kind(QValue(expr, scale, QAnnotateKind.ACTIVATION, source), 3)
        return self._keep(value)

    # -- the walk -----------------------------------------------------------------------------
    def visit_function(self, fn: Function) -> Function:
        body = self._float(self.visit(fn.body))
        return Function(list(fn.params), body, None, fn.type_params, fn.attrs)

    def visit_tuple(self, tup: Tuple) -> Tuple:
        return Tuple([self._float(self.visit(f)) for f in tup.fields])

    def visit_tuple_getitem(self, op: TupleGetItem) -> TupleGetItem:
        return TupleGetItem(self._float(self.visit(op.tuple_value)), op.index)

    def visit_call(self, call: Call) -> Any:
        args = [self.visit(a) for a in call.args]
        name = _name(call)
        if name is None or not _is_float(call) or self.stopped or not self.cfg.guard(call):
            return self._plain(call, args)
        if name in ACCUMULATING:
            return self._accumulate(call, name, args)
        kinds = [self._q(a) for a in args]
        if name in KEEP_KIND and kinds[0] is not None:
            return self._keep(QValue(self._same(call, args), kinds[0].scale, kinds[0].kind, call))
        if name in LAYOUT and kinds[0] is not None:
            data = self._as_input(args[0], call.args[0])
            return self._keep(QValue(self._same(call, [data.expr]), data.scale, 1, call))
        if name in ("multiply", "add") and len(args) == 2 and any(kinds):
            return self._binary(call, name, args)
        if name == "nn.global_avg_pool2d" and kinds[0] is not None:
            self.stopped = True
        return self._plain(call, args)

    def _same(self, call: Call, args: list[Expr]) -> Call:
        return Call(call.op, args, call.attrs, call.type_args, call.span)

    def _plain(self, call: Call, args: list[Expr]) -> Call:
        return self._same(call, [self._float(a) for a in args])

    def _skipped(self, call: Call, name: str) -> bool:
        if name == "nn.conv2d":
            index = self.conv_index
            self.conv_index += 1
            return index in list(self.cfg.skip_conv_layers or [])
        return name == "nn.dense" and bool(self.cfg.skip_dense_layer)

    def _accumulate(self, call: Call, name: str, args: list[Expr]) -> Expr:
        if self._skipped(call, name):
            return self._plain(call, args)
        data = self._as_input(args[0], call.args[0])
        weight = self._as_input(args[1], call.args[1], weight=name != "nn.batch_matmul")
        attrs = call.attrs.with_fields(out_dtype=self.cfg.dtype_activation)  # type: ignore[union-attr]
        out = Call(call.op, [data.expr, weight.expr], attrs)
        return self._activation(out, data.scale * weight.scale, call)

    def _binary(self, call: Call, name: str, args: list[Expr]) -> Expr:
        if name == "multiply":
            lhs = self._as_input(args[0], call.args[0], constant_value(args[0]) is not None)
            rhs = self._as_input(args[1], call.args[1], constant_value(args[1]) is not None)
            wide = [builder("cast")(v.expr, self.cfg.dtype_activation) for v in (lhs, rhs)]
            return self._activation(builder("multiply")(*wide), lhs.scale * rhs.scale, call)
        values = [self._q(a) or self._as_input(a, s) for a, s in zip(args, call.args)]
        common = min(v.scale for v in values)
        shift = bool(self.cfg.round_for_shift)
        wide = [realize.requantize(v.expr, v.scale, common, None, "int64", shift) for v in values]
        return self._activation(builder("add")(*wide), common, call)
