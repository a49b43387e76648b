"""``tvm.nd`` (served by ``install()``): ``array``/``empty``/``from_dlpack`` of TVM <=0.19 over
``tvm.runtime``.

They return ``tvm.runtime.Tensor`` (``tvm.nd.NDArray`` is that class); while installed, tensors
also answer the legacy ``asnumpy()`` and ``to_dlpack()`` (:func:`asnumpy`, :func:`to_dlpack`,
set on ``tvm.runtime.Tensor``: see :mod:`compile_engine_compat.surfaces.moved_names`).
``copyfrom`` is TVM's own. The DLPack hand-off shares memory both ways, as in TVM 0.19:
``torch.utils.dlpack.from_dlpack(x.to_dlpack())`` and ``tvm.nd.from_dlpack(torch_tensor)``
copy nothing.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes  # TVM 0.19's ndarray module had it (apache-tvm requires it)
import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.tvm_legacy.device import cl, device, gpu, mtl

# ``tvm.nd`` was ``tvm.runtime.ndarray``, which also held the device constructors: TVM 0.27 keeps
# them (as ``tvm.runtime.cpu``, ...), so they are TVM's own; ``device`` takes TVM 0.19's names.
cpu = tvm.runtime.cpu
cuda = tvm.runtime.cuda
opencl = tvm.runtime.opencl
rocm = tvm.runtime.rocm
metal = tvm.runtime.metal
vulkan = tvm.runtime.vulkan
vpi = tvm.runtime.vpi
ext_dev = tvm.runtime.ext_dev
hexagon = tvm.hexagon


def webgpu(dev_id: int = 0) -> Any:
    """``tvm.runtime.ndarray.webgpu(dev_id)``: the WebGPU device (``tvm.device("webgpu")``)."""
    return tvm.runtime.device("webgpu", dev_id)


__all__ = [
    "NDArray",
    "array",
    "asnumpy",
    "cl",
    "cpu",
    "cuda",
    "device",
    "empty",
    "ext_dev",
    "from_dlpack",
    "gpu",
    "hexagon",
    "metal",
    "ml_dtypes",
    "mtl",
    "opencl",
    "rocm",
    "to_dlpack",
    "vpi",
    "vulkan",
    "webgpu",
]

#: ``tvm.nd.NDArray``: TVM 0.27 calls the class ``tvm.runtime.Tensor``.
NDArray = tvm.runtime.Tensor


def _device(device: Any, ctx: Any) -> Any:
    dev = device if device is not None else ctx
    return tvm.cpu() if dev is None else dev


@legacy_api("tvm.nd")
def array(arr: Any, device: Any = None, ctx: Any = None) -> Any:
    """``tvm.nd.array(arr, device)`` (``ctx=`` before TVM 0.8): ``tvm.runtime.tensor``."""
    value = arr.numpy() if hasattr(arr, "numpy") else np.asarray(arr)
    return tvm.runtime.tensor(value, _device(device, ctx))


@legacy_api("tvm.nd")
def empty(shape: Any, dtype: str = "float32", device: Any = None, ctx: Any = None) -> Any:
    """``tvm.nd.empty(shape, dtype, device)``: ``tvm.runtime.empty``."""
    return tvm.runtime.empty(tuple(shape), dtype, _device(device, ctx))


@legacy_api("tvm.nd")
def asnumpy(self: Any) -> Any:
    """``Tensor.asnumpy()``: TVM <=0.19's name of ``numpy()``."""
    return self.numpy()


# -- DLPack (Relay programs end to end) ---------------------------------------------------------
@legacy_api("tvm.nd.dlpack")
def from_dlpack(dltensor: Any) -> Any:
    """``tvm.nd.from_dlpack(x)``: a tensor sharing ``x``'s memory (``tvm.runtime.from_dlpack``).

    Parameters
    ----------
    dltensor : PyCapsule or object with ``__dlpack__``
        A DLPack capsule (``torch.utils.dlpack.to_dlpack(t)``) or a tensor of a DLPack-aware
        library (a ``torch.Tensor``, as TVM 0.19 also took).

    Returns
    -------
    tvm.runtime.Tensor
        A view of the same memory: no copy.
    """
    return tvm.runtime.from_dlpack(dltensor)


@legacy_api("tvm.nd.dlpack")
def to_dlpack(self: Any) -> Any:
    """``NDArray.to_dlpack()``: a DLPack capsule of this tensor's memory (no copy)."""
    return self.__dlpack__()
