"""``tvm.target.VirtualDevice`` of TVM <=0.19 (served by ``install()``).

Relay annotated where each value lives with a ``VirtualDevice`` (a device, a target and a memory
scope). TVM 0.27's nearest counterpart is Relax's ``tvm.relax.VDevice(target, vdevice_id,
memory_scope)``: :meth:`VirtualDevice.as_vdevice` gives it. The front end plans no devices (one
target per build), so a ``VirtualDevice`` is a record programs build and compare, not a
placement the build follows.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.surfaces.import_alias import refused_name

__all__ = ["VirtualDevice", "make_compilation_config"]


class VirtualDevice:
    """Where data lives at run time and how to compile for it (TVM 0.19's fields).

    Parameters
    ----------
    device : tvm.runtime.Device, optional
        The device; unconstrained (type and id -1) when None.
    target : tvm.target.Target or str, optional
        The target.
    memory_scope : str
        The memory scope (``"global"``, ``"global.texture"``).
    """

    def __init__(self, device: Any = None, target: Any = None, memory_scope: str = "") -> None:
        if device is None:
            self.device_type_int, self.virtual_device_id = -1, -1
        else:
            self.device_type_int = int(device.dlpack_device_type())
            self.virtual_device_id = int(device.index)
        self.target = tvm.target.Target(target) if isinstance(target, str | dict) else target
        self.memory_scope = str(memory_scope)

    @property
    def device_type(self) -> int:
        """The DLPack device type (-1 when unconstrained)."""
        return self.device_type_int

    def is_fully_unconstrained(self) -> bool:
        """No device, no target, no memory scope."""
        return self.device_type_int == -1 and self.target is None and not self.memory_scope

    def as_vdevice(self) -> Any:
        """The Relax ``VDevice`` of this target and memory scope (TVM 0.27's counterpart)."""
        if self.target is None:
            raise ValueError("a VirtualDevice without a target has no Relax VDevice")
        scope = self.memory_scope or "global"
        return tvm.relax.VDevice(self.target, max(self.virtual_device_id, 0), scope)

    def _key(self) -> tuple[Any, ...]:
        return (self.device_type_int, self.virtual_device_id, str(self.target), self.memory_scope)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VirtualDevice) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        parts = []
        if self.device_type_int != -1:
            parts.append(f"device_type={self.device_type_int}")
            parts.append(f"virtual_device_id={self.virtual_device_id}")
        if self.target is not None:
            parts.append(f"target={self.target}")
        if self.memory_scope:
            parts.append(f"memory_scope='{self.memory_scope}'")
        return f"VirtualDevice({', '.join(parts)})"


#: Why Relay's device planning is refused, and what replaces it.
PLANNING_WHY = (
    "Relay's device planning across several targets (CompilationConfig, PlanDevices) is not "
    "served: place Relax tensors with R.to_vdevice and relax.transform.RealizeVDevice; "
    "relay.build compiles for one target"
)

#: ``tvm.target.make_compilation_config(ctxt, targets)``: TVM 0.19's ``CompilationConfig`` fed
#: Relay's device planning (``PlanDevices``) over several targets; refused when called.
make_compilation_config = refused_name("tvm.target.make_compilation_config", PLANNING_WHY)
