"""``relay.transform.FakeQuantizationToInteger``'s pass on the Relay graph: each region
(``relay._impl.fake_quantization.region_calls``) rebuilt bottom-up with its rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.fake_quantization import (
    Rule,
    TensorAffineType,
    TupleAffineType,
    is_op,
    region_calls,
    rule_of,
)
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Expr, Tuple, TupleGetItem
from ..expr_functor import ExprMutator
from ..function import Function
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = ["fake_quantization_pass"]


def _dtype_of(expr: Expr) -> str:
    if expr._checked_type is None:
        infer(expr)
    ty = expr.checked_type
    if not isinstance(ty, TensorType):
        raise TypeError(f"qnn.dequantize takes a tensor, got {ty}")
    return str(ty.dtype)


class _Region:
    """One region rebuilt bottom-up with the rules (TVM 0.19's SubgraphMutator)."""

    def __init__(self, out_type: TensorAffineType, optional: frozenset[str]) -> None:
        self.out_type = out_type
        self.optional = optional
        self.types: dict[Any, Any] = {}
        self.memo: dict[int, Expr] = {}
        self.root: Expr | None = None
        self.interior = TensorAffineType(
            out_type.scale, out_type.zero_point, out_type.dtype, out_type.axis
        )
        self.interior.direct = False

    def apply(self, rule: Rule, expr: Call) -> Expr:
        result = rule(expr, self.types)
        if len(result) != 2:
            raise TypeError(f"a fake-quantization rule must return [expr, type], got {result!r}")
        out, ty = result
        self.types[out] = ty
        return out

    def convert(self, node: Expr) -> Expr:
        done = self.memo.get(id(node))
        if done is not None:
            return done
        out: Expr
        if isinstance(node, Tuple):
            out = Tuple([self.convert(f) for f in node.fields])
            if all(f in self.types for f in out.fields):
                self.types[out] = TupleAffineType([self.types[f] for f in out.fields])
        elif isinstance(node, TupleGetItem):
            inner = self.convert(node.tuple_value)
            out = TupleGetItem(inner, node.index)
            if inner in self.types:
                self.types[out] = self.types[inner].types[node.index]
        elif is_op(node, "qnn.dequantize"):
            call: Any = node
            self.types[node] = TensorAffineType(
                call.args[1], call.args[2], _dtype_of(call.args[0]), call.attrs.axis
            )
            out = self.apply(rule_of(node, self.optional), call)  # type: ignore[arg-type]
        elif isinstance(node, Call):
            new = Call(node.op, [self.convert(a) for a in node.args], node.attrs)
            self.types[new] = self.out_type if node is self.root else self.interior
            out = self.apply(rule_of(node, self.optional), new)  # type: ignore[arg-type]
        else:
            out = node
        self.memo[id(node)] = out
        return out


class _Rewriter(ExprMutator):
    def __init__(self, hard_fail: bool, optional: frozenset[str]) -> None:
        super().__init__(**INTERNAL)
        self.hard_fail = hard_fail
        self.optional = optional
        self.changed = False

    def fail(self, why: str) -> None:
        if self.hard_fail:
            raise ValueError(f"FakeQuantizationToInteger(hard_fail=True): {why}")

    def visit_call(self, call: Call) -> Any:
        new: Any = super().visit_call(call)
        if not is_op(new, "qnn.quantize"):
            return new
        if region_calls(new.args[0], self.optional) is None:
            self.fail(f"the region ending in {call} has an op with no rule, or a variable")
            return new
        out_type = TensorAffineType(new.args[1], new.args[2], new.attrs.out_dtype, new.attrs.axis)
        try:
            region = _Region(out_type, self.optional)
            region.root = new.args[0]
            out = region.convert(new)
        except Exception as err:  # a user rule may raise anything: keep the region in float
            if self.hard_fail:
                raise ValueError(
                    f"FakeQuantizationToInteger(hard_fail=True): a rule failed on the region "
                    f"ending in qnn.quantize: {type(err).__name__}: {err}"
                ) from err
            return new
        self.changed = True
        return out


def fake_quantization_pass(hard_fail: bool, optional_qnn_ops: Sequence[str]) -> Any:
    """The pass object (see the module docstring)."""
    optional = frozenset(str(o) for o in optional_qnn_ops)

    def rewrite(func: Function) -> Function:
        mutator = _Rewriter(hard_fail, optional)
        body = mutator.visit(func.body)
        if not mutator.changed:
            return func
        return Function(func.params, body, None, func.type_params, func.attrs)

    return graph_pass("FakeQuantizationToInteger", 0, rewrite)
