"""``relay.transform``: the passes Relay-era code runs before lowering (:mod:`.transform`).

Any other Relay pass is refused on access, naming its Relax counterpart where Relax has one.
"""

from __future__ import annotations

from typing import Any

from ..gradient import gradient  # relax.transform.Gradient (relay/gradient.py)
from . import transform
from .transform import InferType, SimplifyInference

__all__ = ["InferType", "SimplifyInference", "gradient", "transform"]


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(name)
    from tvm import relax

    from compile_engine_compat.surfaces.import_alias import RelayRemovedError, removed_message

    if hasattr(relax.transform, name):
        why = (
            f"the module from tvm.IRModule.from_expr(relay_func) is a Relax module: apply "
            f"tvm.relax.transform.{name}() to it (its arguments may differ from Relay's)"
        )
    else:
        why = "Relax builds its functions normalized and typed; drop the pass, or find its "
        why += "Relax counterpart in tvm.relax.transform"
    raise RelayRemovedError(removed_message(f"tvm.relay.transform.{name}", why))
