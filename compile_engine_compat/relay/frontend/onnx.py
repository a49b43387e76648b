"""``relay.frontend.from_onnx``, served by Relax's ONNX importer (``tvm.relax.frontend.onnx``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from .common import detached_params, refuse_options, require
from .onnx_quantized import import_onnx

__all__ = ["from_onnx", "onnx_to_relax"]

_REFUSED_OPTIONS = {
    "convert_config": (None, "Relax's ONNX importer takes no conversion config"),
    "export_node_renamed_model_path": (
        None,
        "Relax's ONNX importer keeps the graph's node names; there is no renamed model to write",
    ),
}


def onnx_to_relax(
    model: Any,
    shape: Mapping[str, Any] | None,
    dtype: Any,
    opset: int | None,
    freeze_params: bool,
) -> tuple[tvm.IRModule, dict[str, Any]]:
    """The un-warned ``from_onnx`` (``from_pytorch``'s TorchScript route ends here too)."""
    require("onnx", "onnx", "relay.frontend.from_onnx")
    # Relay kept the graph's spelling (set_input("input.1", x) must find "input.1"); quantized
    # ops and QDQ groups go to the shim's integer converters (onnx_quantized).
    mod = import_onnx(model, shape, dtype, opset, keep_params_in_input=not freeze_params)
    if freeze_params:
        return mod, {}
    num_inputs = int(mod["main"].attrs["num_input"])
    return detached_params(mod, num_inputs)


@legacy_api("relay.frontend.from_onnx")
def from_onnx(
    model: Any,
    shape: Mapping[str, Any] | None = None,
    dtype: Any = "float32",
    opset: int | None = None,
    freeze_params: bool = True,
    convert_config: Any = None,
    export_node_renamed_model_path: Any = None,
) -> tuple[tvm.IRModule, dict[str, Any]]:
    """``relay.frontend.from_onnx``: an ONNX model as Relay's ``(IRModule, params)``.

    Parameters
    ----------
    model : onnx.ModelProto
        The model.
    shape : dict of str to tuple, optional
        Input name -> shape (the graph's own shapes otherwise).
    dtype : str or dict of str to str
        The input dtype, or input name -> dtype.
    opset : int, optional
        Override the model's opset.
    freeze_params : bool
        True (Relay's default): the initializers are constants of ``main`` and ``params`` is
        empty. False: they are parameters of ``main`` after the inputs, returned in ``params``
        under their (sanitized) initializer names, for ``relay.build(mod, params=params)``.
    convert_config, export_node_renamed_model_path : None
        Relay-only options; any other value raises :class:`~.common.FrontendOptionError`.

    Returns
    -------
    tuple
        ``(mod, params)``; ``main`` takes the inputs under the names the ONNX graph spells.

    Raises
    ------
    MissingFrontendDependencyError
        The ``onnx`` package is missing (the ``[onnx]`` extra).
    """
    refuse_options(
        "relay.frontend.from_onnx",
        {
            "convert_config": convert_config,
            "export_node_renamed_model_path": export_node_renamed_model_path,
        },
        _REFUSED_OPTIONS,
    )
    return onnx_to_relax(model, shape, dtype, opset, freeze_params)
