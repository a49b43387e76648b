"""``relay.transform.SimplifyExpr``: TVM 0.19's expression simplifier, on the Relay graph.

Relay's pass applied its rules (:mod:`.simplify_rules`) in a fixed order, each one sweeping the
whole graph after typing it, and repeated the round until the graph stopped changing (at most
100 sweeps). This module does the same; the rules build TVM 0.19's exact replacement forms, so
``tvm.ir.assert_structural_equal`` against the graphs Relay produced holds.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call
from ..expr_functor import ExprMutator
from ..function import Function
from .graph_rewrites import graph_pass
from .simplify_rules import RULES, Rule

__all__ = ["SimplifyExpr", "simplify_expr"]

#: Relay's limit on the sweeps of one rewrite.
_MAX_SWEEPS = 100


class _Sweep(ExprMutator):
    """One sweep of one rule: every op call, after its arguments, is offered to the rule."""

    def __init__(self, rule: Rule) -> None:
        super().__init__(**INTERNAL)
        self.rule = rule

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if isinstance(new, Call) and isinstance(new.op, RelayOp):
            out = self.rule(call, new)
            if out is not None:
                return out
        return new


def simplify_expr(func: Function) -> Function:
    """``func`` with TVM 0.19's ``SimplifyExpr`` rules applied until none applies.

    Parameters
    ----------
    func : relay.Function

    Returns
    -------
    relay.Function
        ``func`` itself when no rule applied.
    """
    sweeps, typed = 0, False
    while sweeps < _MAX_SWEEPS:
        changed = False
        for rule in RULES:
            if not typed:
                infer(func)
                typed = True
            new: Function = _Sweep(rule).visit(func)
            sweeps += 1
            if new is not func:
                func, changed, typed = new, True, False
        if not changed:
            break
    return func


@legacy_api("relay.transform.more_passes")
def SimplifyExpr(allow_rewrite_to_dynamic: bool = True) -> Any:
    """``relay.transform.SimplifyExpr()`` (opt level 0): TVM 0.19's rules on the Relay graph:
    ``*_like`` ops made concrete, identities (``x + 0``, ``x * ones``) dropped, ``x + x`` as
    ``x * 2``, ``a / sqrt(x)`` as ``a * rsqrt(x)``, reshape, transpose and layout-transform
    chains merged, redundant casts and clips dropped, constant add/multiply chains folded,
    ``argmax``/``argmin``/``argsort`` of a dequantize taken on the integers."""
    return graph_pass("SimplifyExpr", 0, simplify_expr)
