"""``tvm.nd`` (served by ``install()``): ``array``/``empty`` of TVM <=0.19 over ``tvm.runtime``.

They return ``tvm.runtime.Tensor``; while installed, tensors also answer the legacy
``asnumpy()`` (:func:`asnumpy`, set on ``tvm.runtime.Tensor``: see
:mod:`compile_engine_compat.surfaces.moved_names`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api

__all__ = ["array", "empty"]


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
