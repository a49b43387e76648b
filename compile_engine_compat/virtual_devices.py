"""``VirtualDevice``: TVM 0.19's record of where a value lives (a device, a target, a memory
scope), served as ``tvm.target.VirtualDevice`` and held by Relay's ``on_device`` and
``device_copy`` attributes.

TVM 0.27's nearest counterpart is Relax's ``tvm.relax.VDevice(target, vdevice_id,
memory_scope)``: :meth:`VirtualDevice.as_vdevice` gives it. The front end plans no devices (one
target per build), so a ``VirtualDevice`` is a record programs build and compare, not a
placement the build follows.
"""

from __future__ import annotations

from typing import Any

import tvm

__all__ = ["VirtualDevice", "make_virtual_device"]


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


def make_virtual_device(device: Any) -> VirtualDevice:
    """The ``VirtualDevice`` of ``device``, as TVM 0.19's Relay annotations made it.

    Parameters
    ----------
    device : tvm.runtime.Device, str or VirtualDevice
        A device, a device name (``"cuda"``, ``"cpu"``), or a virtual device (returned as is).

    Returns
    -------
    VirtualDevice
        On that device, with no target and no memory scope.

    Raises
    ------
    ValueError
        For an unknown device name or a value of another type.
    """
    if isinstance(device, VirtualDevice):
        return device
    if isinstance(device, str):
        return VirtualDevice(tvm.device(device))  # ValueError: Unknown device
    if isinstance(device, tvm.runtime.Device):
        return VirtualDevice(device)
    raise ValueError(
        f"expecting a Device, a device name or a VirtualDevice, not {type(device).__name__}"
    )
