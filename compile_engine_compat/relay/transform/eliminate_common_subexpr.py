"""``relay.transform.EliminateCommonSubexpr``: Relay's common-subexpression elimination, on the
Relay graph."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.structural import attr_value

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..expr_functor import ExprMutator
from ..function import Function
from .graph_rewrites import graph_pass

__all__ = ["EliminateCommonSubexpr"]


def _attrs_key(attrs: Any) -> str:
    """A call's attributes as a comparable string (plain values; TVM objects by their print)."""
    if attrs is None or not hasattr(attrs, "keys"):
        return ""
    return repr([(str(k), attr_value(attrs[k])) for k in sorted(str(k) for k in attrs.keys())])


def _arg_key(arg: Expr) -> Any:
    """What makes two arguments the same for Relay's CSE: the same node, a scalar constant of
    the same dtype and value, or a tuple of such fields."""
    if isinstance(arg, Constant) and arg.data.numpy().ndim == 0:
        value = arg.data.numpy()
        return ("scalar", str(value.dtype), value.item())
    if isinstance(arg, Tuple):
        return ("tuple", tuple(map(_arg_key, arg.fields)))
    return id(arg)


class _CommonSubexpr(ExprMutator):
    """Relay's EliminateCommonSubexpr: after its arguments are rewritten, a call equal to an
    earlier one (op, attributes, the same argument nodes) is replaced by the earlier one."""

    def __init__(self, fskip: Callable[[Expr], bool] | None) -> None:
        super().__init__(**INTERNAL)
        self.fskip = fskip
        self.seen: dict[Any, Expr] = {}

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if not isinstance(new, Call) or not isinstance(new.op, RelayOp):
            return new
        if self.fskip is not None and self.fskip(new):
            return new
        key = ("call", str(new.op.name), tuple(map(_arg_key, new.args)), _attrs_key(new.attrs))
        return self.seen.setdefault(key, new)

    def visit_tuple_getitem(self, op: TupleGetItem) -> Any:
        new = super().visit_tuple_getitem(op)
        if not isinstance(new, TupleGetItem):
            return new
        return self.seen.setdefault(("item", id(new.tuple_value), int(new.index)), new)


def _eliminate_common_subexpr(fskip: Callable[[Expr], bool] | None) -> Callable[..., Function]:
    def rewrite(func: Function) -> Function:
        out: Function = _CommonSubexpr(fskip).visit(func)
        return out

    return rewrite


@legacy_api("relay.transform")
def EliminateCommonSubexpr(fskip: Callable[[Expr], bool] | None = None) -> Any:
    """``relay.transform.EliminateCommonSubexpr(fskip=None)`` (opt level 3), on the Relay graph.

    A call of the same op, attributes and argument nodes as an earlier call becomes that call;
    so does a repeated ``TupleGetItem`` of one tuple and index. ``fskip(call)`` returning True
    keeps that call apart. Functions with no Relay graph (made by a Relax pass) are left as
    they are; run ``relax.transform.EliminateCommonSubexpr`` on those.
    """
    if fskip is not None and not callable(fskip):
        raise TypeError(f"EliminateCommonSubexpr(fskip) takes a callable or None, got {fskip!r}")
    return graph_pass("EliminateCommonSubexpr", 3, _eliminate_common_subexpr(fskip))
