"""What the frontends share: optional imports naming their extra, refused options, the
``(IRModule, params)`` pair Relay's importers returned; and TVM 0.19's converter helpers
(``infer_type``, ``infer_shape``, ``infer_value``, ``get_relay_op``, ``AttrCvt``, ...), from
:mod:`.helpers`."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.relay._impl.frontend_helpers import *  # noqa: F403 - TVM 0.19's relay.frontend.common helpers
from compile_engine_compat.relay._impl.frontend_helpers import __all__ as _HELPERS
from compile_engine_compat.relay._impl.rnn_cells import gru_cell, lstm_cell, rnn_cell

__all__ = [
    *_HELPERS,
    "FrontendOptionError",
    "MissingFrontendDependencyError",
    "UnservedFrontendError",
    "UnsupportedModelError",
    "detached_params",
    "gru_cell",
    "lstm_cell",
    "refuse_options",
    "rename_params",
    "require",
    "rnn_cell",
]


class MissingFrontendDependencyError(ModuleNotFoundError):
    """A frontend's framework is not installed; the message names the extra that installs it."""


class FrontendOptionError(ValueError):
    """A Relay frontend option that the Relax importer serving it cannot honour."""


class UnservedFrontendError(NotImplementedError):
    """A Relay frontend with no importer in TVM 0.27; the message names the working route."""


class UnsupportedModelError(tvm.error.OpNotImplemented):
    """A model the importer serving a Relay frontend cannot convert (control flow the route
    through ONNX drops, say); the message names the route that converts it. A
    ``tvm.error.OpNotImplemented``, so code catching Relay's error still catches it."""


def require(module: str, extra: str, what: str) -> Any:
    """Import ``module`` or raise :class:`MissingFrontendDependencyError` naming ``extra``.

    Parameters
    ----------
    module : str
        The framework module (``"onnx"``, ``"torch"``).
    extra : str
        The package extra that installs it (``"onnx"``, ``"torch"``).
    what : str
        The frontend that needs it, for the message.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingFrontendDependencyError(
            f"{what} needs the {module!r} package: pip install 'compile-engine-compat[{extra}]'",
            name=module,
        ) from exc


def refuse_options(what: str, options: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Raise :class:`FrontendOptionError` for each option not left at its default.

    Parameters
    ----------
    what : str
        The frontend, for the message.
    options : mapping
        Option name -> the value given.
    defaults : mapping
        Option name -> (the default, why the option cannot be served).
    """
    for name, value in options.items():
        default, why = defaults[name]
        # An empty map (custom_convert_map={}) asks for nothing: the same as the default None.
        unset = value is default or (default is None and isinstance(value, Mapping) and not value)
        if not unset and value != default:
            raise FrontendOptionError(f"{what}({name}=...) is not served: {why}")


def detached_params(mod: tvm.IRModule, num_inputs: int) -> tuple[tvm.IRModule, dict[str, Any]]:
    """Split the weights kept as trailing parameters of ``main`` into Relay's named params.

    Parameters
    ----------
    mod : tvm.IRModule
        A Relax module whose ``main`` takes ``num_inputs`` data inputs, then the weights,
        carrying their values in the ``params`` attribute (Relax's importers with
        ``keep_params_in_input``).
    num_inputs : int
        How many leading parameters are data inputs.

    Returns
    -------
    tuple
        The module without the attribute, and ``{parameter name: tvm.runtime.Tensor}``.
    """
    from tvm.relax.frontend import detach_params  # imports the frontends' common module

    mod, detached = detach_params(mod)
    values = list(detached.get("main", []))
    weights = list(mod["main"].params)[num_inputs:]
    if len(weights) != len(values):
        raise ValueError(
            f"the importer kept {len(values)} weights but main has {len(weights)} "
            "parameters after its inputs"
        )
    return mod, {
        var.name: tvm.runtime.tensor(np.asarray(v.numpy())) for var, v in zip(weights, values)
    }


def rename_params(mod: tvm.IRModule, names: Mapping[str, str]) -> tvm.IRModule:
    """``mod`` with the parameters of ``main`` renamed (``old name -> new name``; others kept).

    Relax importers name inputs after the source's placeholders (``x``, ``p_conv_weight``);
    Relay's importers used the caller's input names and the state-dict names.
    """
    func = mod["main"]
    renamed = [
        relax.Var(names[var.name], var.ty) if var.name in names else var for var in func.params
    ]
    bound = func.bind_params({old: new for old, new in zip(func.params, renamed) if old is not new})
    new_func = relax.Function(renamed, bound.body, func.ret_ty, func.is_pure, func.attrs)
    functions = {gv: new_func if f.same_as(func) else f for gv, f in mod.functions_items()}
    return tvm.IRModule(functions, attrs=mod.attrs)
