"""``relay.frontend.from_pytorch``: TorchScript through ONNX, ``nn.Module`` through torch.export.

TVM 0.27 has no TorchScript importer. A ``torch.jit.ScriptModule`` (traced, or scripted if the
exporter takes it) goes through the TorchScript ONNX exporter in memory
(``torch.onnx.export(..., dynamo=False)``) and Relax's ONNX importer; a plain ``nn.Module`` goes
through ``torch.export.export`` and ``tvm.relax.frontend.torch.from_exported_program``. Either
way ``main`` takes the inputs under the names of ``input_infos``, then the weights, returned in
``params`` under their state-dict names where the route keeps them.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import tvm

from compile_engine_compat.boundary import onnx_export_symbolics
from compile_engine_compat.deprecations import legacy_api

from .common import (
    FrontendOptionError,
    UnsupportedModelError,
    detached_params,
    refuse_options,
    rename_params,
    require,
)
from .onnx import onnx_to_relax
from .pytorch_symbolics import SYMBOLICS

__all__ = ["from_pytorch"]

_REFUSED_OPTIONS = {
    "custom_convert_map": (
        None,
        "Relay op converters cannot run on Relax: give tvm.relax.frontend.torch."
        "from_exported_program(custom_convert_map=...) Relax converters instead",
    ),
    "use_parser_friendly_name": (False, "the names are the importer's (state-dict names)"),
    "keep_quantized_weight": (
        False,
        "quantized weights are int8 constants of the module already (its QDQ groups fold into "
        "integer ops), not params",
    ),
    "export_renamed_c_graph_path": (None, "there is no renamed TorchScript graph to write"),
    "preserve_pytorch_scopes": (False, "Relax's importers keep no source scopes in spans"),
}
_WHAT = "relay.frontend.from_pytorch"
#: The opset the package's own symbolics are registered at (``Bitwise*`` is opset 18).
_SYMBOLICS_OPSET = 18
_ROUTE = (
    "pass the nn.Module itself (from_pytorch(model, input_infos) uses torch.export), or import "
    "torch.export.export(model, args) with tvm.relax.frontend.torch.from_exported_program"
)
#: TorchScript scalar types -> dtypes (what a traced graph records for each input).
_SCALAR_TYPES = {
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
    "BFloat16": "bfloat16",
    "Int": "int32",
    "Long": "int64",
    "Short": "int16",
    "Char": "int8",
    "Byte": "uint8",
    "Bool": "bool",
}


def _graph_dtypes(module: Any) -> list[str | None]:
    """The dtype a traced graph recorded for each input (None where it recorded none): TVM
    0.19 typed each input from the graph, ``default_dtype`` only where it said nothing."""
    graph = getattr(module, "graph", None)
    if graph is None:
        return []
    dtypes: list[str | None] = []
    # A module's graph takes the module itself first (a class-typed input); a function's not.
    for value in [v for v in graph.inputs() if v.type().kind() != "ClassType"]:
        scalar = getattr(value.type(), "scalarType", lambda: None)()
        dtypes.append(_SCALAR_TYPES.get(scalar) if scalar else None)
    return dtypes


def _control_flow(module: Any) -> list[str]:
    """The TorchScript control-flow nodes (``prim::Loop``, ``prim::If``) of ``module``'s graph."""
    graph = getattr(module, "inlined_graph", None)
    if graph is None:
        return []
    return sorted({n.kind() for n in graph.nodes() if n.kind() in ("prim::Loop", "prim::If")})


def _inputs(
    input_infos: Any, default_dtype: str, graph_dtypes: Sequence[str | None] = ()
) -> list[tuple[str, tuple[int, ...], str]]:
    """Relay's ``[(name, shape)]`` or ``[(name, (shape, dtype))]`` as (name, shape, dtype): an
    input without a dtype takes the graph's (``graph_dtypes``), else ``default_dtype``."""
    if isinstance(input_infos, dict):
        input_infos = list(input_infos.items())
    if not isinstance(input_infos, Sequence) or isinstance(input_infos, str):
        raise TypeError(f"{_WHAT}: input_infos is a list of (name, shape), got {input_infos!r}")
    inputs = []
    for index, info in enumerate(input_infos):
        if not (isinstance(info, Sequence) and len(info) == 2 and isinstance(info[0], str)):
            raise TypeError(f"{_WHAT}: each input_infos entry is (name, shape), got {info!r}")
        name, spec = info
        recorded = graph_dtypes[index] if index < len(graph_dtypes) else None
        dtype = recorded or default_dtype
        if len(spec) == 2 and isinstance(spec[1], str) and not isinstance(spec[0], int):
            spec, dtype = spec
        shape = tuple(int(d) for d in spec)
        if any(d < 0 for d in shape):
            raise ValueError(f"{_WHAT}: input {name!r} has a negative dimension {shape}")
        inputs.append((name, shape, dtype))
    return inputs


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No warning from the shim's own conversion. torch's about its exporters (the TorchScript
    exporter's deprecation, "no signature found ... skipping _decide_input_format", the pytree
    notes of torch.export and of TVM's importer) are this route's detail, not the caller's; the
    legacy-call warning of ``from_pytorch`` is given outside, and stays."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _examples(torch: Any, inputs: list[tuple[str, tuple[int, ...], str]]) -> tuple[Any, ...]:
    return tuple(torch.zeros(shape, dtype=getattr(torch, dtype)) for _, shape, dtype in inputs)


def _from_script_module(
    torch: Any, module: Any, inputs: list[tuple[str, tuple[int, ...], str]]
) -> tuple[tvm.IRModule, dict[str, Any]]:
    onnx = require("onnx", "onnx", _WHAT + " (a TorchScript module goes through ONNX)")
    names = [name for name, _, _ in inputs]
    buffer = io.BytesIO()
    try:
        with _quiet(), onnx_export_symbolics(SYMBOLICS, _SYMBOLICS_OPSET):
            torch.onnx.export(
                module,
                _examples(torch, inputs),
                buffer,
                input_names=names,
                dynamo=False,
                # Unfolded, the initializers keep the state-dict names (a folded BatchNorm
                # would leave "onnx::Conv_17").
                do_constant_folding=False,
            )
    except Exception as exc:
        raise FrontendOptionError(
            f"{_WHAT}: this TorchScript module does not export to ONNX ({exc}). TVM 0.27 has no "
            f"TorchScript importer: {_ROUTE}"
        ) from exc
    model = onnx.load_from_string(buffer.getvalue())
    shapes = {name: shape for name, shape, _ in inputs}
    dtypes = {name: dtype for name, _, dtype in inputs}
    try:
        return onnx_to_relax(model, shapes, dtypes, None, freeze_params=False)
    except tvm.error.OpNotImplemented as exc:
        flow = _control_flow(module)
        held = f" (its graph holds {', '.join(flow)})" if flow else ""
        raise UnsupportedModelError(
            f"{_WHAT}: this TorchScript module{held} does not import: TVM 0.27 has no "
            f"TorchScript importer, and its route through ONNX stops at {exc}. Control flow "
            f"(a detection model's loops) needs the torch.export route: {_ROUTE}"
        ) from exc


def _from_nn_module(
    torch: Any, module: Any, inputs: list[tuple[str, tuple[int, ...], str]]
) -> tuple[tvm.IRModule, dict[str, Any]]:
    from tvm.relax.frontend.torch import from_exported_program

    with _quiet():
        program = torch.export.export(module, _examples(torch, inputs))
        mod = from_exported_program(
            program, keep_params_as_input=True, unwrap_unit_return_tuple=True
        )
    func = mod["main"]
    num_inputs = int(func.attrs["num_input"])
    if num_inputs != len(inputs):
        raise ValueError(
            f"{_WHAT}: the module takes {num_inputs} inputs, input_infos names {len(inputs)}"
        )
    names = {var.name: name for var, (name, _, _) in zip(func.params, inputs)}
    # The exported program's placeholders (p_conv_weight) -> the state-dict names (conv.weight).
    for spec in program.graph_signature.input_specs:
        if spec.target is not None and hasattr(spec.arg, "name"):
            names.setdefault(spec.arg.name, spec.target)
    return detached_params(rename_params(mod, names), num_inputs)


@legacy_api("relay.frontend.from_pytorch")
def from_pytorch(
    script_module: Any,
    input_infos: Any,
    custom_convert_map: Any = None,
    default_dtype: str = "float32",
    use_parser_friendly_name: bool = False,
    keep_quantized_weight: bool = False,
    export_renamed_c_graph_path: Any = None,
    preserve_pytorch_scopes: bool = False,
) -> tuple[tvm.IRModule, dict[str, Any]]:
    """``relay.frontend.from_pytorch``: a PyTorch model as Relay's ``(IRModule, params)``.

    Parameters
    ----------
    script_module : torch.jit.ScriptModule, torch.jit.ScriptFunction or torch.nn.Module
        A traced (or exportable scripted) module or function, or the ``nn.Module`` itself.
    input_infos : list of (str, shape) or (str, (shape, dtype))
        The inputs, in order; their names are the input names of ``main``.
    default_dtype : str
        The dtype of an input given without one, where the traced graph records none (TVM
        0.19 took each input's dtype from the traced graph: a model traced with float64 inputs
        gets float64 inputs).
    custom_convert_map, use_parser_friendly_name, keep_quantized_weight,
    export_renamed_c_graph_path, preserve_pytorch_scopes
        Relay-only options: any value but the default raises
        :class:`~.common.FrontendOptionError` saying why.

    Returns
    -------
    tuple
        ``(mod, params)``: ``main`` takes the inputs, then the weights that ``params`` holds
        (feed both to ``relay.build(mod, params=params)``).

    Raises
    ------
    MissingFrontendDependencyError
        ``torch`` (the ``[torch]`` extra) or, for a ScriptModule, ``onnx`` (``[onnx]``) missing.
    UnsupportedModelError
        A ScriptModule whose ONNX form Relax cannot import (a ``Loop``); the message routes to
        ``torch.export`` and ``from_exported_program``.
    """
    refuse_options(
        _WHAT,
        {
            "custom_convert_map": custom_convert_map,
            "use_parser_friendly_name": use_parser_friendly_name,
            "keep_quantized_weight": keep_quantized_weight,
            "export_renamed_c_graph_path": export_renamed_c_graph_path,
            "preserve_pytorch_scopes": preserve_pytorch_scopes,
        },
        _REFUSED_OPTIONS,
    )
    torch = require("torch", "torch", _WHAT)
    if isinstance(script_module, torch.jit.ScriptModule | torch.jit.ScriptFunction):
        inputs = _inputs(input_infos, default_dtype, _graph_dtypes(script_module))
        return _from_script_module(torch, script_module, inputs)
    inputs = _inputs(input_infos, default_dtype)
    if isinstance(script_module, torch.nn.Module):
        return _from_nn_module(torch, script_module, inputs)
    raise TypeError(
        f"{_WHAT} takes a torch.jit.ScriptModule, a ScriptFunction or a torch.nn.Module, got "
        f"{type(script_module).__qualname__}"
    )
