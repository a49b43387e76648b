"""``relay.data_dep_optimization.simplify_fc_transpose.convert(func, params)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.origin import relay_of

from ..analysis import search_fc_transpose
from ..function import Function
from ..transform.graph_rewrites import SimplifyFCTranspose

__all__ = ["convert"]


@legacy_api("relay.transform.more_passes")
def convert(func: Function, params: Mapping[str, Any]) -> tuple[Function, dict[str, Any]]:
    """``nn.dense(x, transpose(w, [1, 0]))`` -> ``nn.dense(x, w.T)``, ``w.T`` a new parameter.

    Parameters
    ----------
    func : relay.Function
        The function to rewrite.
    params : dict of str to tensor
        Its parameters; each transposed weight ``w`` is replaced by ``w.T`` (transposed in
        NumPy), as TVM 0.19 did (the dict is updated in place and returned).

    Returns
    -------
    (relay.Function, dict)
        The rewritten function and the parameters.

    Raises
    ------
    TypeError
        For something other than a ``relay.Function``.
    KeyError
        For a transposed weight missing from ``params``.
    """
    if not isinstance(func, Function):
        raise TypeError(f"simplify_fc_transpose.convert takes a relay.Function, got {func!r}")
    names = [str(name) for name in search_fc_transpose(func, **INTERNAL)]
    out_params = params if isinstance(params, dict) else dict(params)
    for name in names:
        if name not in out_params:
            raise KeyError(f"simplify_fc_transpose.convert: no parameter {name!r} in params")
        value = out_params.pop(name)
        data = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        out_params[name + ".T"] = tvm.runtime.tensor(np.ascontiguousarray(data.T))
    mod = SimplifyFCTranspose(names, **INTERNAL)(tvm.IRModule.from_expr(func))
    new = relay_of(mod["main"])
    return (new if new is not None else func), out_params
