"""``relay.frontend.from_onnx``, served by Relax's ONNX importer (``tvm.relax.frontend.onnx``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import tvm

from compile_engine_compat.deprecations import legacy_api

from .common import FrontendOptionError, detached_params, refuse_options, require
from .onnx_fold import fold_constant_nodes
from .onnx_quantized import import_onnx

__all__ = ["UnknownInputError", "from_onnx", "onnx_to_relax"]


class UnknownInputError(FrontendOptionError, AssertionError):
    """``shape`` names an input the ONNX graph does not have (an ``AssertionError`` too, as
    TVM 0.19's importer raised one)."""


#: TVM 0.19's ``convert_config`` keys that only chose the form of Relay's ops: Relax's importer
#: computes the same values either way (a ``MatMul`` is one ``matmul``, never a transposed
#: ``nn.batch_matmul``), so they are accepted and change nothing.
_FORM_ONLY_CONFIG = frozenset({"use_nt_batch_matmul"})

_REFUSED_OPTIONS = {
    "export_node_renamed_model_path": (
        None,
        "Relax's ONNX importer keeps the graph's node names; there is no renamed model to write",
    ),
}


def _check_convert_config(convert_config: Any) -> None:
    """Accept TVM 0.19's form-only ``convert_config`` keys; refuse anything else by name."""
    if convert_config is None:
        return
    if not isinstance(convert_config, Mapping):
        raise FrontendOptionError(
            f"relay.frontend.from_onnx(convert_config=...) takes a dict, got {convert_config!r}"
        )
    unknown = sorted(str(key) for key in convert_config if key not in _FORM_ONLY_CONFIG)
    if unknown:
        raise FrontendOptionError(
            f"relay.frontend.from_onnx(convert_config=...) keys {unknown} are not served: "
            f"Relax's ONNX importer takes no conversion config (accepted, with no effect: "
            f"{sorted(_FORM_ONLY_CONFIG)})"
        )


def _initializers_not_inputs(model: Any) -> Any:
    """``model``, or a copy whose graph no longer lists its initializers among its inputs.

    ONNX before IR version 4 listed every initializer as a graph input too; TVM 0.19 took such
    an input as the initializer (a weight), where Relax's importer keeps both and gives ``main``
    the weight twice.
    """
    initializers = {tensor.name for tensor in model.graph.initializer}
    if not any(value.name in initializers for value in model.graph.input):
        return model
    copy = type(model)()
    copy.CopyFrom(model)
    inputs = [value for value in copy.graph.input if value.name not in initializers]
    del copy.graph.input[:]
    copy.graph.input.extend(inputs)
    return copy


def _check_shape_names(model: Any, shape: Mapping[str, Any] | None) -> None:
    """Refuse a ``shape`` entry for an input the graph does not have."""
    if not shape:
        return
    names = {value.name for value in model.graph.input}
    unknown = sorted(str(name) for name in shape if name not in names)
    if unknown:
        raise UnknownInputError(
            f"relay.frontend.from_onnx(shape=...) names inputs {unknown} that the graph does "
            f"not have (its inputs: {sorted(names)})"
        )


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
    model = fold_constant_nodes(_initializers_not_inputs(model), shape)
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
    convert_config : dict, optional
        TVM 0.19's ``{"use_nt_batch_matmul": bool}`` is accepted and changes nothing (it chose
        the form of Relay's batch matmul; Relax emits one ``matmul``, the same values); any
        other key raises :class:`~.common.FrontendOptionError`.
    export_node_renamed_model_path : None
        Relay-only option; any other value raises :class:`~.common.FrontendOptionError`.

    Returns
    -------
    tuple
        ``(mod, params)``; ``main`` takes the inputs under the names the ONNX graph spells.

    Raises
    ------
    MissingFrontendDependencyError
        The ``onnx`` package is missing (the ``[onnx]`` extra).
    UnknownInputError
        ``shape`` names an input the graph does not have.
    """
    refuse_options(
        "relay.frontend.from_onnx",
        {"export_node_renamed_model_path": export_node_renamed_model_path},
        _REFUSED_OPTIONS,
    )
    _check_convert_config(convert_config)
    _check_shape_names(model, shape)
    return onnx_to_relax(model, shape, dtype, opset, freeze_params)
