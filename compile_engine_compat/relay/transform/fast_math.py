"""``relay.transform.FastMath``: TVM 0.19's rewrite to the fast approximations, on the Relay
graph: ``exp``, ``erf``, ``tanh`` and ``nn.softmax`` become ``fast_exp``, ``fast_erf``,
``fast_tanh`` and ``nn.fast_softmax`` (same arguments and attributes)."""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import get
from .graph_rewrites import graph_pass

__all__ = ["FAST_OPS", "FastMath", "fast_math"]

#: Relay op -> its fast approximation (TVM 0.19's ``FastMathMutator``).
FAST_OPS = {
    "exp": "fast_exp",
    "erf": "fast_erf",
    "tanh": "fast_tanh",
    "nn.softmax": "nn.fast_softmax",
}


class _FastMath(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if isinstance(new, Call) and isinstance(new.op, RelayOp) and new.op.name in FAST_OPS:
            fast = get(FAST_OPS[str(new.op.name)])
            return Call(fast, new.args, new.attrs, new.type_args, new.span)
        return new


def fast_math(func: Function) -> Function:
    """``func`` with each op of :data:`FAST_OPS` replaced by its fast approximation."""
    out: Function = _FastMath().visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def FastMath() -> Any:
    """``relay.transform.FastMath()`` (opt level 4): ``exp``, ``erf``, ``tanh`` and
    ``nn.softmax`` become ``fast_exp``, ``fast_erf``, ``fast_tanh`` and ``nn.fast_softmax`` on
    the Relay graph, as TVM 0.19 did."""
    return graph_pass("FastMath", 4, fast_math)
