"""``tvm.context``, ``tvm.device`` taking target names and the deprecated device aliases
``tvm.gpu``/``cl``/``mtl`` (TVM <=0.19), served by ``install()``.

See :mod:`compile_engine_compat.surfaces.moved_names` for where each is set.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api, warn_legacy

__all__ = ["cl", "context", "device", "device_type", "gpu", "mtl"]

#: Target names TVM 0.19's ``tvm.device``/``tvm.context`` took as device names.
_TARGET_DEVICES = {"llvm": "cpu", "c": "cpu", "stackvm": "cpu", "nvptx": "cuda"}
#: TVM's own ``tvm.device``, which :func:`device` replaces while installed.
_device = tvm.device


def _target_device(dev_type: Any) -> str | None:
    """The device a target name (``"llvm -mcpu=..."``) stood for, or None for anything else."""
    if isinstance(dev_type, str) and dev_type.split() and dev_type.split()[0] in _TARGET_DEVICES:
        return _TARGET_DEVICES[dev_type.split()[0]]
    return None


def device(dev_type: Any, dev_id: int = 0) -> Any:
    """``tvm.device`` that also takes the target names TVM 0.19 did (``"llvm"`` -> cpu)."""
    translated = _target_device(dev_type)
    if translated is not None:
        warn_legacy("tvm.device")
        dev_type = translated
    return _device(dev_type, dev_id)


@legacy_api("tvm.context")
def context(dev_type: Any, dev_id: int = 0) -> Any:
    """``tvm.context`` (renamed ``tvm.device`` in TVM 0.8)."""
    return _device(_target_device(dev_type) or dev_type, dev_id)


def gpu(dev_id: int = 0) -> Any:
    """``tvm.gpu(dev_id)``: TVM 0.19's deprecated alias of ``tvm.cuda``."""
    warn_legacy("tvm.gpu")
    return tvm.cuda(dev_id)


def cl(dev_id: int = 0) -> Any:
    """``tvm.cl(dev_id)``: TVM 0.19's alias of ``tvm.opencl``."""
    warn_legacy("tvm.cl")
    return tvm.opencl(dev_id)


def mtl(dev_id: int = 0) -> Any:
    """``tvm.mtl(dev_id)``: TVM 0.19's alias of ``tvm.metal``."""
    warn_legacy("tvm.mtl")
    return tvm.metal(dev_id)


# -- upstream Relay test files (test_any): Device.device_type -------------------------------------
@property  # type: ignore[misc]
def device_type(self: Any) -> int:
    """``Device.device_type`` (TVM <= 0.19): the DLPack device type number (cpu 1, cuda 2),
    ``dlpack_device_type()`` in TVM 0.27."""
    return int(self.dlpack_device_type())
