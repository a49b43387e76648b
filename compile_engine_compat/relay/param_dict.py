"""``relay.save_param_dict`` / ``relay.load_param_dict``: TVM 0.27's ``tvm.runtime`` functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import legacy_api

__all__ = ["load_param_dict", "save_param_dict"]


@legacy_api("relay.save_param_dict")
def save_param_dict(params: Mapping[str, Any]) -> bytearray:
    """``relay.save_param_dict(params)``: the bytes ``tvm.runtime.save_param_dict`` writes.

    NumPy arrays are accepted as Relay accepted them; the result is a ``bytearray``, as Relay's
    was (TVM 0.27's function returns ``bytes``).
    """
    tensors = {
        name: value
        if isinstance(value, tvm.runtime.Tensor)
        else tvm.runtime.tensor(np.asarray(value))
        for name, value in params.items()
    }
    return bytearray(tvm.runtime.save_param_dict(tensors))  # TVM 0.19 returned a bytearray


@legacy_api("relay.save_param_dict")
def load_param_dict(param_bytes: Any) -> dict[str, Any]:
    """``relay.load_param_dict(blob)``: name -> ``tvm.runtime.Tensor``."""
    return dict(tvm.runtime.load_param_dict(param_bytes))
