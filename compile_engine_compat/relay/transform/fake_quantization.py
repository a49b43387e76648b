"""``relay.transform.FakeQuantizationToInteger``'s machinery, on the Relay graph: the affine
types, the rule registry (the ``FTVMFakeQuantizationToInteger`` op attribute) and the pass.

For each ``qnn.quantize`` the pass walks back to the ``qnn.dequantize`` calls feeding it. When
every op on the way has a rule (constants, tuples and tuple items pass), the region is rebuilt
bottom-up: each rule gets the call (its arguments already integer) and the map of affine types,
and returns ``[integer expression, affine type]``, as TVM 0.19's rules did. A region with an op
that has no rule, a variable, or a rule that raises is left in float (``hard_fail=True``
raises instead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import get as get_op
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = [
    "FQ2I_ATTR",
    "OPTIONAL_FQ2I_ATTR",
    "TensorAffineType",
    "TupleAffineType",
    "fake_quantization_pass",
    "region_calls",
    "register_fake_quantization_to_integer",
    "register_optional_fake_quantization_to_integer",
]

#: The op attribute holding an op's rule, as in TVM 0.19.
FQ2I_ATTR = "FTVMFakeQuantizationToInteger"
#: The op attribute of the rules applied only when named in ``optional_qnn_ops``.
OPTIONAL_FQ2I_ATTR = "FTVMOptionalFakeQuantizationToInteger"

Rule = Callable[[Call, dict[Any, Any]], Sequence[Any]]


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, Constant) and isinstance(b, Constant):
        x, y = a.data.numpy(), b.data.numpy()
        try:  # a per-channel vector of one value equals that scalar, as in TVM 0.19
            return bool(np.allclose(x, y))
        except ValueError:
            return False
    return a is b


class TensorAffineType:
    """``tvm.ir.TensorAffineType``: ``real = scale * (q - zero_point)`` of a ``dtype`` tensor,
    per channel on ``axis`` when the scale is a vector (TVM 0.27 has no such node).

    ``direct`` is False on the region's output type given to a call that does not feed the
    quantize directly (TVM 0.19's ``avg_pool2d`` rule searched the graph for this).
    """

    direct = True

    def __init__(self, scale: Expr, zero_point: Expr, dtype: str, axis: int = -1) -> None:
        self.scale = scale
        self.zero_point = zero_point
        self.dtype = str(dtype)
        self.axis = int(axis)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorAffineType)
            and _same_value(self.scale, other.scale)
            and _same_value(self.zero_point, other.zero_point)
            and self.dtype == other.dtype
            and self.axis == other.axis
        )

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"TensorAffineType({self.scale}, {self.zero_point}, {self.dtype}, {self.axis})"


class TupleAffineType:
    """``tvm.ir.TupleAffineType``: the affine types of a tuple's fields."""

    def __init__(self, types: Sequence[TensorAffineType]) -> None:
        self.types = list(types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleAffineType) and self.types == other.types

    __hash__ = object.__hash__


def _register(attr: str, op_name: str, func: Rule | None, level: int) -> Any:
    if not isinstance(op_name, str):
        raise TypeError(f"the op name must be a str, got {op_name!r}")
    op = get_op(op_name)

    def register(rule: Rule) -> Rule:
        if not callable(rule):
            raise TypeError(f"a fake-quantization rule must be callable, got {rule!r}")
        op.set_attr(attr, rule, level)
        return rule

    return register(func) if func is not None else register


def register_fake_quantization_to_integer(
    op_name: str, func: Rule | None = None, level: int = 10
) -> Any:
    """Register ``func(expr, type_map) -> [expr, affine type]`` as ``op_name``'s rule
    (TVM 0.19's ``relay.op.register_fake_quantization_to_integer``; a decorator without
    ``func``)."""
    return _register(FQ2I_ATTR, op_name, func, level)


def register_optional_fake_quantization_to_integer(
    op_name: str, func: Rule | None = None, level: int = 10
) -> Any:
    """Register a rule applied only when ``op_name`` is in ``optional_qnn_ops``."""
    return _register(OPTIONAL_FQ2I_ATTR, op_name, func, level)


def _rule_of(node: Any, optional: frozenset[str]) -> Rule | None:
    if not (isinstance(node, Call) and isinstance(node.op, RelayOp)):
        return None
    rule = node.op.get_attr(FQ2I_ATTR)
    if rule is None and node.op.name in optional:
        rule = node.op.get_attr(OPTIONAL_FQ2I_ATTR)
    return rule


def _is_op(node: Any, name: str) -> bool:
    return isinstance(node, Call) and isinstance(node.op, RelayOp) and node.op.name == name


def region_calls(root: Expr, optional: frozenset[str] = frozenset()) -> list[Call] | None:
    """The calls from ``root`` back to the dequantize calls (these excluded), or None when one
    of them has no rule or the region reaches a variable."""
    stack, seen, calls = [root], set(), []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Constant) or _is_op(node, "qnn.dequantize"):
            continue
        if isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
        elif _rule_of(node, optional) is not None:
            calls.append(node)
            stack.extend(node.args)
        else:
            return None
    return calls


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
        return out  # type: ignore[no-any-return]

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
        elif _is_op(node, "qnn.dequantize"):
            call: Any = node
            self.types[node] = TensorAffineType(
                call.args[1], call.args[2], _dtype_of(call.args[0]), call.attrs.axis
            )
            out = self.apply(_rule_of(node, self.optional), call)  # type: ignore[arg-type]
        elif isinstance(node, Call):
            new = Call(node.op, [self.convert(a) for a in node.args], node.attrs)
            self.types[new] = self.out_type if node is self.root else self.interior
            out = self.apply(_rule_of(node, self.optional), new)  # type: ignore[arg-type]
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
        new = super().visit_call(call)
        if not _is_op(new, "qnn.quantize"):
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
