"""``relay.transform``'s functions that are not passes: ``FoldConstantExpr`` (constant folding
of one expression) and ``mangle_module_name`` (the C name of a generated module, as the
compile engine mangles it)."""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.facade.engine import mangle_module_name
from compile_engine_compat.relay._impl.frontend_helpers import fold_constant
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, children

from ..analysis import free_vars
from ..expr import Call, Tuple, TupleGetItem
from ..function import Function

__all__ = ["FoldConstantExpr", "mangle_module_name"]


class _FoldConstants(GraphMutator):
    """Folds each largest subexpression that uses no variable (computed once, on the VM)."""

    def stops_at(self, node: Any) -> bool:
        return not children(node) or self._constant(node)

    @staticmethod
    def _constant(node: Any) -> bool:
        return isinstance(node, Call | Tuple | TupleGetItem) and not free_vars(node)

    def _visit_children(self, expr: Any) -> Any:
        if self._constant(expr):
            return fold_constant(expr)
        return super()._visit_children(expr)

    visit_call = visit_tuple = visit_tuple_getitem = _visit_children


@legacy_api("relay.transform")
def FoldConstantExpr(expr: Any, mod: Any = None, fold_qnn: bool = False) -> Any:
    """``relay.transform.FoldConstantExpr(expr)``: ``expr`` with every subexpression that uses
    no variable replaced by its value (a ``relay.Constant``), as Relay's ``FoldConstant`` did
    on one expression. ``mod`` and ``fold_qnn`` are accepted (the front end builds no QNN ops).
    """
    if isinstance(expr, Function):
        body = _FoldConstants().visit(expr.body)
        if body is expr.body:
            return expr
        return Function(expr.params, body, expr.ret_type, expr.type_params, expr.attrs)
    return _FoldConstants().visit(expr)
