"""``relay.transform.SimplifyInference``: TVM 0.19's inference-time rewrite, on the Relay graph.

``nn.batch_norm(x, gamma, beta, mean, var)[0]`` becomes ``x * scale + shift`` in Relay's exact
form (``scale = 1 / sqrt(var + eps) * gamma``, ``shift = -mean * scale + beta``, both expanded
to the data's rank after the channel axis) and ``nn.dropout(x)[0]`` becomes ``x``. Relay also
spelled out ``layer_norm``, ``group_norm``, ``instance_norm`` and ``l2_normalize``; those stay
ops here (``relay.build`` computes the same values from them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Expr, TupleGetItem, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = ["SimplifyInference", "simplify_inference"]


def _op_name(node: Any) -> str:
    return str(node.op.name) if isinstance(node, Call) and isinstance(node.op, RelayOp) else ""


def _scalar(value: float, dtype: str) -> Expr:
    return const(np.array(value, dtype=dtype), dtype)


def _batch_norm(call: Call, args: list[Expr]) -> Expr | None:
    """Relay's ``BatchNormToInferUnpack``."""
    ty = getattr(call.args[0], "_checked_type", None)
    if not isinstance(ty, TensorType):
        return None
    data, gamma, beta, mean, var = args
    attrs: Any = call.attrs
    dtype, ndim = str(ty.dtype), len(ty.shape)
    add, multiply = builder("add"), builder("multiply")
    sqrt_var = builder("sqrt")(add(var, _scalar(float(np.float32(attrs.epsilon)), dtype)))
    scale = builder("divide")(_scalar(1.0, dtype), sqrt_var)
    if attrs.scale:
        scale = multiply(scale, gamma)
    shift = multiply(builder("negative")(mean), scale)
    if attrs.center:
        shift = add(shift, beta)
    axis = int(attrs.axis) + ndim if int(attrs.axis) < 0 else int(attrs.axis)
    trailing = ndim - axis - 1
    if trailing > 0:
        scale = builder("expand_dims")(scale, 1, trailing)
        shift = builder("expand_dims")(shift, 1, trailing)
    return add(multiply(data, scale), shift)


class _SimplifyInference(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)

    def visit_tuple_getitem(self, op: TupleGetItem) -> Any:
        new = super().visit_tuple_getitem(op)
        inner = op.tuple_value
        if not isinstance(new, TupleGetItem) or new.index != 0:
            return new
        if _op_name(inner) == "nn.batch_norm":
            out = _batch_norm(inner, list(new.tuple_value.args))  # type: ignore[arg-type, attr-defined]
            return new if out is None else out
        if _op_name(inner) == "nn.dropout":
            return new.tuple_value.args[0]  # type: ignore[attr-defined]
        return new

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if _op_name(new) == "nn.dropout" and _op_name(call) == "nn.dropout":
            ty = getattr(call, "_checked_type", None)
            if isinstance(ty, TensorType):  # the front end's single-output dropout
                return new.args[0]
        return new


def simplify_inference(func: Function) -> Function:
    """``func`` with batch norms spelled out as Relay did and dropouts removed."""
    infer(func)
    out: Function = _SimplifyInference().visit(func)
    return out


@legacy_api("relay.transform")
def SimplifyInference() -> Any:
    """``relay.transform.SimplifyInference()`` (opt level 0): batch norms become TVM 0.19's
    multiply-add and dropouts their input, on the Relay graph (see the module docstring)."""
    return graph_pass(
        "SimplifyInference", 0, simplify_inference, relax.transform.DecomposeOpsForInference()
    )
