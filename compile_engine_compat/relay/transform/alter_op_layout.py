"""``relay.transform.AlterOpLayout``: each call of an op with an ``FTVMAlterOpLayout`` function
replaced by what that function returns, on the Relay graph (TVM 0.19's pass, in part).

TVM 0.19 called ``fn(attrs, inputs, tinfos, out_type)`` (registered with
``relay.op.register_alter_op_layout`` or ``TempOpAttr``) on every call of the op, after its
inputs were rewritten: ``tinfos`` are ``te.placeholder`` tensors of the inputs' types,
``out_type`` the call's type; ``None`` keeps the call. That is what this pass does. TVM 0.19
then inserted ``layout_transform`` ops where a replacement produced another layout (a blocked
``NCHW16c`` convolution) and carried the new layout through the ops after it; that layout
propagation is not served here, so a replacement whose type differs from the call's is refused
with a ``ValueError`` naming the op. The ops' own target-specific layouts are never applied
(``relay.build`` picks its own tiling and packing), so without user functions the pass changes
nothing.
"""

from __future__ import annotations

from typing import Any

from tvm import te

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay._impl.type_equal import types_equal

from ..expr import Call, Expr
from ..ty import TensorType
from .graph_rewrites import graph_pass, rewrite_calls

__all__ = ["ALTER_ATTR", "AlterOpLayout"]

#: The op attribute holding a user's alter function.
ALTER_ATTR = "FTVMAlterOpLayout"


def _type_of(expr: Expr) -> Any:
    ty = getattr(expr, "_checked_type", None)
    return ty if ty is not None else infer(expr).checked_type


def _placeholder(expr: Expr) -> Any:
    """The ``te.placeholder`` of a tensor-typed input (None for any other)."""
    ty = _type_of(expr)
    if not isinstance(ty, TensorType):
        return None
    return te.placeholder([d for d in ty.shape], ty.dtype, name="tinfo")


def _alter(call: Call) -> Expr:
    alter = call.op.get_attr(ALTER_ATTR) if isinstance(call.op, RelayOp) else None
    if alter is None:
        return call
    out_type = _type_of(call)
    new = alter(call.attrs, list(call.args), [_placeholder(a) for a in call.args], out_type)
    if new is None:
        return call
    if not isinstance(new, Expr):
        raise TypeError(
            f"AlterOpLayout: the {ALTER_ATTR} function of {call.op.name} returned {new!r}; it "
            "returns a relay expression, or None to keep the call"
        )
    new_type = _type_of(new)
    if not types_equal(new_type, out_type):
        raise ValueError(
            f"AlterOpLayout: the {ALTER_ATTR} function of {call.op.name} returned a value of "
            f"type {new_type} where the call had {out_type}. TVM 0.19 inserted layout_transform "
            "ops and carried the new layout through the ops after it; that layout propagation "
            "is not served: return an expression of the call's type (end it with "
            "relay.layout_transform back to the call's layout)"
        )
    return new


@legacy_api("relay.transform.more_passes")
def AlterOpLayout() -> Any:
    """``relay.transform.AlterOpLayout()`` (opt level 3), on the Relay graph.

    Each call of an op with an ``FTVMAlterOpLayout`` function becomes what the function returns
    (``None`` keeps it); a replacement must have the call's type (see the module docstring).
    """
    return graph_pass("AlterOpLayout", 3, rewrite_calls(_alter))
