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


def rand(dtype: str, *shape: int) -> Any:
    """``relay.testing.rand(dtype, *shape)``: a tensor of ``np.random.rand`` values on the CPU."""
    return tvm.runtime.tensor(np.random.rand(*shape).astype(dtype), tvm.cpu(0))
