"""``relay.testing``: the helpers and workloads Relay-era tests and tutorials import.

* ``run_infer_type``, ``rand``, ``temp_op_attr``, ``check_grad`` (``relax.transform.Gradient``);
* the workloads, one module each, whose ``get_workload(...)`` returns ``(mod, params)`` with
  Relay's arguments: :mod:`.mlp`, :mod:`.resnet`, :mod:`.mobilenet`, :mod:`.squeezenet`,
  :mod:`.vgg`, :mod:`.dcgan`, :mod:`.densenet`, :mod:`.inception_v3`, :mod:`.synthetic`;
* what they are built with: :mod:`.layers` and :mod:`.init` (``create_workload``, the
  initializers).

A workload's module holds the Relax function of the Relay network, so it goes to
``relay.build``, ``tvm.compile`` and the passes of ``relay.transform`` alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from compile_engine_compat.relay._impl.gradient import (
    check_grad,  # over relax.transform.Gradient (relay/_impl/gradient.py)
)
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay.analysis import free_vars

from . import (
    dcgan,
    densenet,
    inception_v3,
    init,
    layers,
    mlp,
    mobilenet,
    resnet,
    squeezenet,
    synthetic,
    temp_op_attr,
    vgg,
)
from .init import create_workload

__all__ = [
    "check_grad",
    "create_workload",
    "dcgan",
    "densenet",
    "inception_v3",
    "init",
    "layers",
    "mlp",
    "mobilenet",
    "rand",
    "resnet",
    "run_infer_type",
    "run_opt_pass",
    "squeezenet",
    "synthetic",
    "temp_op_attr",
    "vgg",
]


def run_infer_type(expr: Any, mod: Any = None) -> Any:
    """Infer the types of ``expr`` (Relay's ``relay.testing.run_infer_type``).

    Parameters
    ----------
    expr : Expr or TupleWrapper
        A Relay expression.
    mod : ignored
        Relay's module argument (its global functions); Relax typing needs none.

    Returns
    -------
    Expr
        ``expr`` with ``checked_type`` set on it and its sub-expressions.
    """
    return infer(expr)


def run_opt_pass(expr: Any, opt_pass: Any, import_prelude: bool = False) -> Any:
    """Run ``opt_pass`` on a module of ``expr`` (Relay's ``relay.testing.run_opt_pass``).

    Parameters
    ----------
    expr : Expr or Function
        A Relay expression (a function of its free variables) or function.
    opt_pass : tvm.transform.Pass
        The pass.
    import_prelude : bool
        Relay's prelude: not served (ADTs are not mapped); refused when True.

    Returns
    -------
    Function or Expr
        The pass's ``main`` as a Relay function (its body, for an expression), where the module
        still holds the Relay function it was made from; else its Relax function.
    """
    from compile_engine_compat.relay._impl.origin import relay_origin

    from ..function import Function

    if not isinstance(opt_pass, tvm.transform.Pass):
        raise TypeError(f"run_opt_pass takes a tvm.transform.Pass, got {opt_pass!r}")
    if import_prelude:
        raise NotImplementedError(
            "relay.testing.run_opt_pass(import_prelude=True): the Relay "
            "prelude (ADTs) is not mapped"
        )
    func = expr if isinstance(expr, Function) else Function(free_vars(expr), expr)
    mod = tvm.IRModule.from_expr(func)
    mod = opt_pass(mod)
    entry = mod["main"]
    relay_entry = relay_origin(entry)
    if relay_entry is None:
        return entry if isinstance(expr, Function) else entry.body
    return relay_entry if isinstance(expr, Function) else relay_entry.body


def rand(dtype: str, *shape: int) -> Any:
    """``relay.testing.rand(dtype, *shape)``: a tensor of ``np.random.rand`` values on the CPU."""
    return tvm.runtime.tensor(np.random.rand(*shape).astype(dtype), tvm.cpu(0))
