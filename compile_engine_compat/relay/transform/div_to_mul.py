"""``relay.transform.DivToMul``: a division by a float constant becomes a multiplication by its
reciprocal, on the Relay graph, as TVM 0.19 did."""

from __future__ import annotations

from typing import Any

import numpy as np

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Constant, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from .graph_rewrites import graph_pass

__all__ = ["DivToMul", "div_to_mul"]


class _DivToMul(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if not (isinstance(new, Call) and isinstance(new.op, RelayOp)) or new.op.name != "divide":
            return new
        divisor = new.args[1]
        value = divisor.data.numpy() if isinstance(divisor, Constant) else None
        if value is None or value.dtype.kind != "f" or not np.all(value != 0):
            return new
        return builder("multiply")(new.args[0], const(np.reciprocal(value), str(value.dtype)))


def div_to_mul(func: Function) -> Function:
    """``func`` with each division by a nonzero float constant a multiplication."""
    out: Function = _DivToMul().visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def DivToMul() -> Any:
    """``relay.transform.DivToMul()``: division by a float constant -> multiplication (opt
    level 0), on the Relay graph."""
    return graph_pass("DivToMul", 0, div_to_mul)
