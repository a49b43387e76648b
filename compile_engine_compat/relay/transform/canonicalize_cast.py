"""``relay.transform.CanonicalizeCast``: TVM 0.19's ``CastCanonicalizer`` on the Relay graph.

An up-cast (to more bits) used by several elementwise or broadcast ops gets a copy of its own
for each use after the first, so that operator fusion can put the cast inside each consumer
(the fused functions then read the narrower input).
"""

from __future__ import annotations

import re
from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..dataflow_pattern.op_kinds import BROADCAST, op_pattern
from ..expr import Call, Expr
from ..expr_functor import ExprMutator
from ..function import Function
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = ["CanonicalizeCast", "canonicalize_cast"]


def _bits(dtype: str) -> int:
    if dtype == "bool":
        return 1
    match = re.search(r"(\d+)$", dtype)
    return int(match.group(1)) if match else 0


def _is_upcast(node: Any) -> bool:
    if not (isinstance(node, Call) and isinstance(node.op, RelayOp) and node.op.name == "cast"):
        return False
    source = getattr(node.args[0], "_checked_type", None)
    return isinstance(source, TensorType) and _bits(str(source.dtype)) < _bits(
        str(node.attrs.dtype)  # type: ignore[union-attr]
    )


class _CastCanonicalizer(ExprMutator):
    def __init__(self) -> None:
        super().__init__(**INTERNAL)
        self.uses: dict[int, int] = {}

    def visit_call(self, call: Call) -> Any:
        if not (isinstance(call.op, RelayOp) and op_pattern(call.op) <= BROADCAST):
            return super().visit_call(call)
        args = [self._new_arg(arg) for arg in call.args]
        if all(new is old for new, old in zip(args, call.args, strict=True)):
            return call
        return Call(call.op, args, call.attrs, call.type_args)

    def _new_arg(self, arg: Expr) -> Expr:
        new = self.visit(arg)
        if _is_upcast(arg):
            self.uses[id(arg)] = self.uses.get(id(arg), 0) + 1
            if self.uses[id(arg)] > 1:
                return Call(new.op, new.args, new.attrs, new.type_args)
        return new


def canonicalize_cast(func: Function) -> Function:
    """``func`` with each shared up-cast copied for each elementwise consumer after the first."""
    infer(func)
    out: Function = _CastCanonicalizer().visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def CanonicalizeCast() -> Any:
    """``relay.transform.CanonicalizeCast()`` (opt level 3): an up-cast shared by several
    elementwise or broadcast ops is copied for each, on the Relay graph, as TVM 0.19 did."""
    return graph_pass("CanonicalizeCast", 3, canonicalize_cast)
