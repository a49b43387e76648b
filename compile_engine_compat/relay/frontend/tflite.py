"""``relay.frontend.from_tflite``, served by Relax's TFLite importer (``relax.frontend.tflite``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from .common import require

__all__ = ["from_tflite"]


@legacy_api("relay.frontend.from_tflite")
def from_tflite(
    model: Any,
    shape_dict: Mapping[str, Any] | None = None,
    dtype_dict: Mapping[str, str] | None = None,
    op_converter: Any = None,
) -> tuple[tvm.IRModule, dict[str, Any]]:
    """``relay.frontend.from_tflite``: a TFLite model as Relay's ``(IRModule, params)``.

    Parameters
    ----------
    model : tflite.Model.Model
        The parsed flatbuffer (``tflite.Model.GetRootAsModel(buf, 0)``), as Relay took it.
    shape_dict, dtype_dict : dict, optional
        Input name -> shape / dtype.
    op_converter : class, optional
        Relax's ``OperatorConverter`` subclass (a Relay converter cannot run on Relax).

    Returns
    -------
    tuple
        ``(mod, {})``: the weights are constants of ``main``.

    Raises
    ------
    MissingFrontendDependencyError
        The ``tflite`` flatbuffer package is missing (the ``[tflite]`` extra).
    """
    require("tflite", "tflite", "relay.frontend.from_tflite")
    from tvm.relax.frontend.tflite import from_tflite as relax_from_tflite

    options: dict[str, Any] = {}
    if op_converter is not None:
        options["op_converter"] = op_converter
    mod = relax_from_tflite(
        model,
        shape_dict=dict(shape_dict) if shape_dict else None,
        dtype_dict=dict(dtype_dict) if dtype_dict else None,
        **options,
    )
    return mod, {}
