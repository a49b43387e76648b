"""``relay.annotation`` (also ``relay.op.annotation``): Relay's annotations, as table rows.

``compiler_begin``/``compiler_end`` mark the regions of external compilers (BYOC); ``on_device``
records a device (Relay's device planning), the value itself in a build.
``checkpoint`` marked a value for recomputation in Relay's gradient pass; at inference it is the
value itself, which is what it becomes here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from compile_engine_compat.relay._impl import convert
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op
from compile_engine_compat.virtual_devices import VirtualDevice, make_virtual_device

#: ``compiler_begin``/``compiler_end`` mark a region for an external compiler
#: (``relay.transform.AnnotateTarget``); ``PartitionGraph`` removes them. Left in a graph that is
#: built, they are the value itself.
_REGION = (("compiler", REQUIRED),)

ROWS: tuple[OpRow, ...] = (
    # on_device placed a value on a device for Relay's device planning; a build of the shim is
    # for one device, so the call is the value itself (its attributes are kept, as TVM 0.19's).
    OpRow(
        "on_device",
        ("body",),
        (("virtual_device", REQUIRED), ("constrain_result", False), ("constrain_body", True)),
        "identity",
        convert.identity,
        "relay.attrs.OnDeviceAttrs",
    ),
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

#: None refused.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)
_on_device_row = BUILDERS["on_device"]


def on_device(
    body: Any, device: Any, constrain_result: bool = False, constrain_body: bool = True
) -> Any:
    """Relay's ``on_device(body, device, constrain_result=False, constrain_body=True)``.

    ``call.attrs.virtual_device`` is the ``VirtualDevice`` of ``device`` (a ``Device``, a name
    such as ``"cuda"``, or a ``VirtualDevice``), or an unconstrained one when neither the result
    nor the body is constrained, as TVM 0.19 made it. A build runs the value itself.

    Raises
    ------
    ValueError
        For an unknown device name.
    """
    virtual_device = make_virtual_device(device)
    if not (constrain_result or constrain_body):
        virtual_device = VirtualDevice()
    return _on_device_row(body, virtual_device, bool(constrain_result), bool(constrain_body))


BUILDERS["on_device"] = on_device
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)

if TYPE_CHECKING:

    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("annotation", __name__)
