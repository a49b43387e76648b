"""``relay.transform.transform``: the passes Relay-era code runs before lowering.

Relax functions are typed when built, so ``InferType`` has nothing left to compute: it returns
the module it was given (a ``tvm.IRModule`` made by ``tvm.IRModule.from_expr(relay_func)`` holds
the Relax function, already typed).
"""

from __future__ import annotations

from typing import Any

from ..expr import Expr
from ..to_relax import infer

__all__ = ["InferType", "SimplifyInference"]


class InferType:
    """``relay.transform.InferType()``: a pass over a module (or a Relay expression)."""

    def __call__(self, mod: Any) -> Any:
        """Type ``mod``.

        Parameters
        ----------
        mod : tvm.IRModule or relay Expr
            The module (or expression) to type.

        Returns
        -------
        tvm.IRModule or relay Expr
            ``mod`` itself, typed.
        """
        if isinstance(mod, Expr):
            return infer(mod)
        return mod

    def __repr__(self) -> str:
        return "InferType"


class SimplifyInference:
    """``relay.transform.SimplifyInference()``: already done, the module is returned as is.

    The front end emits ``nn.batch_norm`` in inference mode and ``nn.dropout`` as the identity,
    which is what this pass produced.
    """

    def __call__(self, mod: Any) -> Any:
        """Return ``mod`` unchanged."""
        return mod
