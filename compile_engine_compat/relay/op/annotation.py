"""``relay.annotation`` (also ``relay.op.annotation``): Relay's annotations, as table rows.

``compiler_begin``/``compiler_end`` mark the regions of external compilers (BYOC).
``checkpoint`` marked a value for recomputation in Relay's gradient pass; at inference it is the
value itself, which is what it becomes here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from compile_engine_compat.relay._impl import convert
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op

#: ``compiler_begin``/``compiler_end`` mark a region for an external compiler
#: (``relay.transform.AnnotateTarget``); ``PartitionGraph`` removes them. Left in a graph that is
#: built, they are the value itself.
_REGION = (("compiler", REQUIRED),)

ROWS: tuple[OpRow, ...] = (
    OpRow("annotation.checkpoint", ("data",), (), "identity", convert.identity),
    # stop_fusion kept Relay's FuseOps from fusing across it (relay.transform.SplitArgs puts
    # it before each concatenate it splits off); relay.build's fusion runs on Relax: the value.
    OpRow("annotation.stop_fusion", ("data",), (), "identity", convert.identity),
    OpRow(
        "annotation.compiler_begin",
        ("data",),
        _REGION,
        "identity",
        convert.identity,
        "relay.attrs.CompilerAttrs",
    ),
    OpRow(
        "annotation.compiler_end",
        ("data",),
        _REGION,
        "identity",
        convert.identity,
        "relay.attrs.CompilerAttrs",
    ),
)

#: None: the other annotations (on_device, compiler_begin) are refused by name.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)

if TYPE_CHECKING:

    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("annotation", __name__)
