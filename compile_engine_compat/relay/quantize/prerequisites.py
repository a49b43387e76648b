"""``relay.quantize.prerequisite_optimize``: what runs before annotation, on the Relay graph.

``params`` are bound to ``main``'s inputs by name; ``nn.batch_norm`` (its first output) becomes
a multiplication and an addition by per-channel constants and ``nn.dropout`` its input, as
Relay's ``SimplifyInference`` did; then constant subexpressions are folded (``FoldConstant``),
so the weights and the folded batch-norm factors are constants the quantizer can read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.graph_walk import bind
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Expr, TupleGetItem, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from ..transform.helpers import FoldConstantExpr

__all__ = ["bind_params", "simplify_inference"]


def bind_params(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with ``params`` (name -> array) bound to its inputs of those names.

    Raises
    ------
    ValueError
        When a bound name belongs to more than one input (TVM 0.19's ``bind_params_by_name``).
    """
    by_name: dict[str, Any] = {}
    repeated = set()
    for param in func.params:
        if param.name_hint in by_name:
            repeated.add(param.name_hint)
        by_name[param.name_hint] = param
    binds = {}
    for name, value in params.items():
        if name in repeated:
            raise ValueError(f"relay.quantize: more than one input is named {name!r}")
        if name in by_name:
            array = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
            binds[by_name[name]] = const(array, str(array.dtype))
    return bind(func, binds) if binds else func


def _op_name(node: Any) -> str | None:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return None


class _SimplifyInference(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)

    def visit_tuple_getitem(self, op: TupleGetItem) -> Any:
        inner = op.tuple_value
        if op.index == 0 and _op_name(inner) == "nn.batch_norm":
            return self._batch_norm(inner)  # type: ignore[arg-type]
        if op.index == 0 and _op_name(inner) == "nn.dropout":
            return self.visit(inner.args[0])  # type: ignore[attr-defined]
        return super().visit_tuple_getitem(op)

    def visit_call(self, call: Call) -> Any:
        if _op_name(call) == "nn.dropout":  # a bare dropout (Relay's dropout() wrapper)
            return self.visit(call.args[0])
        return super().visit_call(call)

    def _batch_norm(self, call: Call) -> Expr:
        data, gamma, beta, mean, var = (self.visit(a) for a in call.args)
        attrs: Any = call.attrs
        ndim = len(call.args[0].checked_type.shape)  # type: ignore[attr-defined]
        axis = int(attrs.axis) % ndim
        factor = builder("rsqrt")(builder("add")(var, const(float(attrs.epsilon), "float32")))
        if attrs.scale:
            factor = builder("multiply")(factor, gamma)
        shift = builder("negative")(builder("multiply")(mean, factor))
        if attrs.center:
            shift = builder("add")(shift, beta)
        trailing = ndim - axis - 1
        if trailing:
            factor = builder("expand_dims")(factor, 1, trailing)
            shift = builder("expand_dims")(shift, 1, trailing)
        return builder("add")(builder("multiply")(data, factor), shift)


def simplify_inference(func: Function) -> Function:
    """``func`` with batch norms as multiply-add and dropouts removed, constants folded."""
    from compile_engine_compat.relay._impl.to_relax import infer

    infer(func)
    out: Function = _SimplifyInference().visit(func)
    folded: Function = FoldConstantExpr(out, **INTERNAL)
    return folded
