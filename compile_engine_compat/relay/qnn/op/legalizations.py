"""``relay.qnn.op.legalizations``: the float function of ``qnn.hardswish`` TVM 0.19's tests read
(``hardswish_func``); the legalizations themselves are :mod:`..transform`'s ``Legalize``."""

from __future__ import annotations

from compile_engine_compat.relay.qnn.lowering.unary import UNARY_FUNCTIONS

__all__ = ["hardswish_func"]

#: ``x * clip(x + 3, 0, 6) / 6``, as TVM 0.19 defined it.
hardswish_func = UNARY_FUNCTIONS["hardswish"]
