"""``relay.qnn``: only the QNN passes, which have nothing to do here.

The front end builds no QNN ops, so ``qnn.transform.CanonicalizeOps``/``Legalize`` (which lower
QNN ops to plain ones) leave every module unchanged. The QNN ops themselves
(``relay.qnn.op.*``) are refused: quantize in the source framework, or use
``relax.op.quantize``/``dequantize``.
"""

from __future__ import annotations

from typing import Any as _AnyT

from . import transform

__all__ = ["transform"]


def __getattr__(name: str) -> _AnyT:
    if name.startswith("_"):
        raise AttributeError(name)
    from compile_engine_compat.surfaces.import_alias import (
        REFUSED_MODULES,
        RelayRemovedError,
        refused_name,
        removed_message,
    )

    if name == "op":  # known: importing it works, using it is refused
        return refused_name("tvm.relay.qnn.op")
    raise RelayRemovedError(
        removed_message(f"tvm.relay.qnn.{name}", REFUSED_MODULES["tvm.relay.qnn.op"])
    )
