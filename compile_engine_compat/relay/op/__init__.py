"""``relay.op``: ``get(name)``, the strategy API and every builder of the op table.

Laid out as Relay's ``relay.op``: one module of table rows per op family (:mod:`.tensor`,
:mod:`.transform`, :mod:`.reduce`, :mod:`.algorithm`, :mod:`.nn`, :mod:`.image`), the whole table
and ``get`` in :mod:`.op`, strategies in :mod:`.strategy` (on :mod:`.._impl.relay_strategies`).
How a row becomes a builder is :mod:`.._impl.registry`'s job; how it converts to Relax,
:mod:`.._impl.convert`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tvm import target  # re-exported, as TVM 0.19's relay.op did

from compile_engine_compat.relay._impl.registry import RelayOp, UnsupportedRelayError, missing_op

from ..expr import Call, Constant, Expr, Tuple, TupleWrapper, const
from . import (
    algorithm,
    annotation,
    contrib,
    image,
    nn,
    op,
    random,
    reduce,
    strategy,
    tensor,
    transform,
    vision,
)
from .op import (
    REFUSED_OPS,
    OpImplementation,
    OpPattern,
    OpSpecialization,
    OpStrategy,
    get,
    namespace,
    register_compute,
    register_legalize,
    register_mixed_precision_conversion,
    register_pattern,
    register_strategy,
)

globals().update(namespace(""))
Op = RelayOp
reg = op  # TVM 0.19's alias of relay.op.op

__all__ = [
    "REFUSED_OPS",
    "Call",
    "Constant",
    "Expr",
    "Op",
    "OpImplementation",
    "OpPattern",
    "OpSpecialization",
    "OpStrategy",
    "Tuple",
    "TupleWrapper",
    "UnsupportedRelayError",
    "algorithm",
    "annotation",
    "const",
    "contrib",
    "get",
    "image",
    "nn",
    "op",
    "random",
    "reduce",
    "reg",
    "register_compute",
    "register_legalize",
    "register_mixed_precision_conversion",
    "register_pattern",
    "register_strategy",
    "strategy",
    "target",
    "tensor",
    "transform",
    "vision",
]
__all__ += sorted(namespace(""))

if TYPE_CHECKING:
    # The builders are made from the op table, so a type checker cannot see them: to it,
    # every other name here is a builder. Only for checkers; at runtime an unknown name
    # raises the refusal naming it (an AttributeError).
    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("", __name__)  # an op the table lacks is refused, naming it
