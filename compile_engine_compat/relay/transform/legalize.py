"""``relay.transform.Legalize``: the legalization functions users register, on the Relay graph.

As in TVM 0.19, every call of an op that has a legalization function (the op attribute
``FTVMLegalize``, set with ``relay.op.register_legalize`` or ``TempOpAttr``) is replaced, after
its arguments, by what ``fn(attrs, inputs, types)`` returns: ``inputs`` are the rewritten
arguments, ``types`` the original arguments' types and then the call's own. ``None`` keeps the
call. The rewritten call is not legalized again. The functions TVM 0.19 registered itself (the
target legalizations of ``nn.conv2d``, ``nn.dense``, ``nn.batch_matmul`` and QNN's ``clip``
rule, :mod:`.topi_legalize`) apply where no user function is set.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Expr
from ..expr_functor import ExprMutator
from ..function import Function
from .graph_rewrites import graph_pass
from .topi_legalize import DEFAULT_LEGALIZE

__all__ = ["Legalize"]


class _Legalizer(ExprMutator):
    """Relay's Legalizer: each call of an op with a legalization function becomes its result."""

    def __init__(self, attr_name: str) -> None:
        super().__init__(**INTERNAL)
        self.attr_name = attr_name

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        legalize = None
        if isinstance(call.op, RelayOp):
            legalize = call.op.get_attr(self.attr_name)
            if legalize is None and self.attr_name == "FTVMLegalize":
                legalize = DEFAULT_LEGALIZE.get(call.op.name)
        if legalize is None or not isinstance(new, Call):
            return new
        types = [arg.checked_type for arg in call.args] + [call.checked_type]
        attrs = new.attrs if new.attrs is not None else call.op.default_attrs()
        result = legalize(attrs, list(new.args), types)
        if result is None:
            return new
        if hasattr(result, "astuple") and not isinstance(result, Expr):
            result = result.astuple()
        if not isinstance(result, Expr):
            raise TypeError(
                f"relay.transform.Legalize: the {self.attr_name} function of {call.op.name} "
                f"returned {type(result).__name__}, not a relay.Expr or None"
            )
        return result


def _legalize(attr_name: str) -> Any:
    def rewrite(func: Function) -> Function:
        infer(func)  # the functions read their arguments' types
        out: Function = _Legalizer(attr_name).visit(func)
        return out

    return rewrite


@legacy_api("relay.transform.more_passes")
def Legalize(legalize_map_attr_name: str = "FTVMLegalize") -> Any:
    """``relay.transform.Legalize(legalize_map_attr_name="FTVMLegalize")`` (opt level 1), on the
    Relay graph: each call of an op with a registered legalization function becomes what the
    function returns (``None`` keeps it). ``relay.build`` legalizes every op for TVM itself
    (``relax.transform.LegalizeOps``), so ops with no function registered are left as they are.
    """
    if not isinstance(legalize_map_attr_name, str):
        raise TypeError(
            f"Legalize(legalize_map_attr_name) takes an op attribute name, got "
            f"{legalize_map_attr_name!r}"
        )
    return graph_pass("Legalize", 1, _legalize(legalize_map_attr_name))
