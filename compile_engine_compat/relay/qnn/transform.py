"""``relay.qnn.transform``: ``Legalize`` and ``CanonicalizeOps``, real passes on the Relay graph.

As in TVM 0.19, ``Legalize`` turns the unary element-wise QNN ops into their table lookups and
``CanonicalizeOps`` lowers every QNN op (:mod:`.lowering`) to plain Relay ops; the module then
holds no ``qnn.*`` call. A build does the same lowering on its own (each QNN row's emit
function), so running these passes first changes nothing in the result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.registry import RelayOp, dialect_row
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay.expr import Call, Expr
from compile_engine_compat.relay.expr_functor import ExprMutator
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.qnn.lowering.emit import lowering_of, relay_type
from compile_engine_compat.relay.qnn.lowering.unary import UNARY_FUNCTIONS
from compile_engine_compat.relay.transform.graph_rewrites import graph_pass

__all__ = ["CanonicalizeOps", "Legalize"]

#: The QNN ops ``Legalize`` lowers (TVM 0.19 legalized them to table lookups).
LEGALIZED = frozenset(f"qnn.{name}" for name in UNARY_FUNCTIONS)


class _Lower(ExprMutator):
    """Replaces each QNN call whose name ``chosen`` accepts by its lowering."""

    def __init__(self, chosen: Callable[[str], bool]) -> None:
        super().__init__(**INTERNAL)
        self.chosen = chosen

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if not (isinstance(call.op, RelayOp) and self.chosen(call.op.name)):
            return new
        row = dialect_row(call.op.name)
        lower = lowering_of(row) if row is not None else None
        if lower is None or not isinstance(new, Call):
            return new
        types = [relay_type(arg.checked_type) for arg in call.args]
        attrs = new.attrs if new.attrs is not None else row.default_attrs()  # type: ignore[union-attr]
        return lower(list(new.args), attrs, types)


def _rewrite(chosen: Callable[[str], bool]) -> Callable[[Function], Function]:
    def rewrite(func: Function) -> Function:
        if not _has_qnn(func, chosen):
            return func
        infer(func)  # the lowerings read their arguments' types
        out: Function = _Lower(chosen).visit(func)
        return out

    return rewrite


def _has_qnn(func: Function, chosen: Callable[[str], bool]) -> bool:
    from compile_engine_compat.relay.analysis import post_order_visit

    found: list[bool] = []

    def look(node: Expr) -> None:
        if isinstance(node, Call) and isinstance(node.op, RelayOp) and chosen(node.op.name):
            found.append(True)

    post_order_visit(func, look)
    return bool(found)


def Legalize() -> Any:
    """``relay.qnn.transform.Legalize()``: the unary QNN ops become table lookups."""
    return graph_pass("Legalize", 0, _rewrite(lambda name: name in LEGALIZED))


def CanonicalizeOps() -> Any:
    """``relay.qnn.transform.CanonicalizeOps()``: every QNN op becomes plain Relay ops."""
    return graph_pass("CanonicalizeOps", 0, _rewrite(lambda name: name.startswith("qnn.")))
