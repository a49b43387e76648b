"""``relay.transform``: Relay's passes as ``tvm.transform.Pass`` objects over Relax modules.

The passes are in ``relay/_impl/passes.py`` and, named by how they are served,
:mod:`.graph_rewrites` (rewrites of the Relay graph),
:mod:`.identities` (documented identities) and :mod:`.refused` (refused at the call, naming the
replacement); the user-pass decorators, ``Sequential`` and ``build_config`` in
``relay/_impl/pass_infra.py``, ``FunctionPass`` and ``LayoutConfig`` in :mod:`.infra_classes`;
the partitioning passes of external compilers (BYOC) in :mod:`.merge_composite`,
:mod:`.annotate_target`, :mod:`.merge_compiler_regions` and :mod:`.partition_graph`;
:mod:`.transform` is Relay's module path to all of them.

Any other Relay pass is refused on access, naming its Relax counterpart where Relax has one.
"""

from __future__ import annotations

from typing import Any

from tvm import te  # re-exported, as TVM 0.19's relay.transform did

from compile_engine_compat.relay._impl.gradient import gradient  # relax.transform.Gradient

from . import (
    fake_quantization_to_integer,
    graph_rewrites,
    identities,
    infra_classes,
    mixed_precision,
    refused,
    transform,
)
from . import ffi_hooks as _ffi_api  # noqa: F401 (TVM 0.19's hook, by its old name)
from .recast import recast
from .transform import *  # noqa: F403 (Relay's names: transform.__all__)

__all__ = [
    *transform.__all__,
    "fake_quantization_to_integer",
    "gradient",
    "recast",
    "graph_rewrites",
    "identities",
    "infra_classes",
    "mixed_precision",
    "refused",
    "te",
    "transform",
]


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
