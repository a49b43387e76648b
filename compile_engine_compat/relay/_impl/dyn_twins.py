"""How the ``dyn.`` twin of an op emits (Relay's ``dyn.*`` ops: a shape-like attribute given as
a tensor, read when the function runs); ``relay.op`` connects :func:`twin_emit` to the
registry (:func:`.registry.connect_dynamic`)."""

from __future__ import annotations

from typing import Any

from tvm import relax

from compile_engine_compat.relay._impl.dyn_shapes import RUN_TIME_SHAPED
from compile_engine_compat.relay._impl.dynamic import one_hot, shape_values, tensor_attribute, tile
from compile_engine_compat.relay._impl.host_ops import reshape_shape
from compile_engine_compat.relay._impl.registry import Emit
from compile_engine_compat.relay.expr import Attrs

__all__ = ["twin_emit"]


def _reshape(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.reshape``: the codes resolved on the host (:func:`.host_ops.reshape_shape`),
    then a reshape to those shape variables."""
    data, newshape = args
    resolved = reshape_shape(bb, data, newshape, bool(attrs.allowzero))
    return relax.op.reshape(data, relax.ShapeExpr(shape_values(bb, resolved, "newshape")))


def twin_emit(name: str, emit: Emit, attrs: tuple[str, ...]) -> Emit:
    """The emitter of the ``dyn.`` twin of op ``name`` (whose ``emit`` takes ``attrs`` as
    values): ``reshape`` resolves Relay's codes first, the ops whose result shape the values
    decide have emitters of their own (:data:`.dyn_shapes.RUN_TIME_SHAPED`), ``one_hot``
    (its values and depth as tensors) and ``tile`` have computes of their own (Relax's take
    ints only), the others read the tensor as shape variables."""
    if name == "reshape":
        return _reshape
    if name == "one_hot":
        return one_hot
    if name in RUN_TIME_SHAPED:
        return RUN_TIME_SHAPED[name]
    (attr,) = attrs
    return tensor_attribute(tile if name == "tile" else emit, attr)  # Relax's tile: ints
