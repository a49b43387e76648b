"""``relay.testing``: the helpers and workloads Relay-era tests and tutorials import.

* ``run_infer_type``, ``run_opt_pass``, ``count_ops``, ``rand``, ``temp_op_attr``,
  ``check_grad`` (``relax.transform.Gradient``), ``gradient``, ``enabled_targets``;
* the workloads, one module each, whose ``get_workload(...)`` returns ``(mod, params)`` with
  Relay's arguments: :mod:`.mlp`, :mod:`.resnet`, :mod:`.resnet_3d`, :mod:`.mobilenet`,
  :mod:`.squeezenet`, :mod:`.vgg`, :mod:`.dcgan`, :mod:`.densenet`, :mod:`.inception_v3`,
  :mod:`.dqn`, :mod:`.lstm`, :mod:`.synthetic`;
* what they are built with: :mod:`.layers` and :mod:`.init` (``create_workload``, the
  initializers).

A workload's module holds the Relax function of the Relay network, so it goes to
``relay.build``, ``tvm.compile`` and the passes of ``relay.transform`` alike.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.relay._impl.gradient import (  # over relax.transform.Gradient
    check_grad,
    gradient,
)
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay.analysis import free_vars

from ..backend.interpreter import module_form
from ..expr import BaseOp, Call, Expr, If, Let, Tuple, TupleGetItem
from ..function import Function
from ..prelude import Prelude  # TVM 0.19's relay.testing re-exported it
from ..ty import TensorType
from . import (
    dcgan,
    densenet,
    dqn,
    inception_v3,
    init,
    layers,
    lstm,
    mlp,
    mobilenet,
    resnet,
    resnet_3d,
    squeezenet,
    synthetic,
    temp_op_attr,
    vgg,
)
from .init import create_workload
from .nat import count, make_nat_expr, make_nat_value
from .py_converter import run_as_python, to_python

__all__ = [
    "Prelude",
    "check_grad",
    "count",
    "count_ops",
    "create_workload",
    "dcgan",
    "densenet",
    "dqn",
    "enabled_targets",
    "gradient",
    "inception_v3",
    "init",
    "layers",
    "lstm",
    "make_nat_expr",
    "make_nat_value",
    "mlp",
    "mobilenet",
    "rand",
    "resnet",
    "resnet_3d",
    "run_as_python",
    "run_infer_type",
    "run_opt_pass",
    "squeezenet",
    "synthetic",
    "temp_op_attr",
    "to_python",
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
        ``expr`` with ``checked_type`` set on it and its sub-expressions; a function with no
        return type annotation comes back as a typed copy annotated with the inferred one, as
        Relay's ``InferType`` returned it (``run_infer_type(f).ret_type``).
    """
    typed = infer(expr)
    if type(typed) is not Function or typed.ret_type is not None:  # not a gradient's
        return typed
    ret_type = getattr(typed.checked_type, "ret_type", None)
    if ret_type is None:
        return typed
    annotated = Function(
        typed.params, typed.body, ret_type, typed.type_params, typed.attrs, typed.span
    )
    return infer(annotated)


def run_opt_pass(expr: Any, opt_pass: Any, import_prelude: bool = False) -> Any:
    """Run ``opt_pass`` on ``expr`` as a module's ``main`` (Relay's ``relay.testing.run_opt_pass``).

    Parameters
    ----------
    expr : relay.Function or Expr
        An expression is made the body of a function of its free variables, as
        ``tvm.IRModule.from_expr`` made it.
    opt_pass : tvm.transform.Pass
        A pass (``relay.transform.FoldConstant()``, a ``Sequential``, a user pass).
    import_prelude : bool
        Declare the Relay prelude (``relay.prelude.Prelude``: lists, options, trees) in the
        module first, as TVM 0.19 did; ``main`` may then use its types and functions (such a
        ``main`` is kept for the interpreter, and a pass sees the interpreter's stand-in).

    Returns
    -------
    relay.Function or Expr
        ``main`` after the pass (its body, for an expression): the Relay function, where the
        module still holds the Relay function it was made from (a Relay-graph pass or an
        identity); else the Relax function a Relax pass made.
    """
    from compile_engine_compat.relay._impl.origin import relay_origin

    if not isinstance(opt_pass, tvm.transform.Pass):
        raise TypeError(
            f"run_opt_pass takes a tvm.transform.Pass, got {type(opt_pass).__qualname__}"
        )
    is_function = isinstance(expr, Function | relax.Function)
    if not is_function and isinstance(expr, Expr):
        expr = Function(free_vars(expr), expr)
    if import_prelude:
        from compile_engine_compat.relay.prelude import Prelude

        mod = tvm.IRModule()
        Prelude(mod)
        mod["main"] = module_form(expr, "main", mod) if isinstance(expr, Function) else expr
    else:
        mod = tvm.IRModule.from_expr(expr)
    mod = opt_pass(mod)
    entry = mod["main"]
    entry = relay_origin(entry) or entry
    return entry if is_function else entry.body


def rand(dtype: str, *shape: int) -> Any:
    """``relay.testing.rand(dtype, *shape)``: a tensor of ``np.random.rand`` values on the CPU."""
    return tvm.runtime.tensor(np.random.rand(*shape).astype(dtype), tvm.cpu(0))


def _np_randn_from_type(t: Any, scale: float = 1, mean: float = 0) -> np.ndarray:
    """``relay.testing._np_randn_from_type(t, scale, mean)``: an array of ``t``'s shape and
    dtype drawn from ``np.random.randn`` (the global generator, as Relay's was), scaled and
    shifted; a 0-d array for a scalar type. Upstream's gradient tests import this private name.
    """
    if not isinstance(t, TensorType):
        raise TypeError(f"_np_randn_from_type takes a relay.TensorType, got {t!r}")
    values = mean + scale * np.random.randn(*t.concrete_shape)
    return np.asarray(values).astype(t.dtype)


def enabled_targets() -> list[tuple[str, Any]]:
    """``relay.testing.enabled_targets()``: ``tvm.testing.enabled_targets()`` (Relay re-exported
    it), the ``(target, device)`` pairs this machine runs."""
    import tvm.testing  # imported on use: it imports pytest

    return list(tvm.testing.enabled_targets())


def _children(node: Any) -> list[Any]:
    """The sub-expressions of a Relay node of the front end."""
    if isinstance(node, Call):
        return [node.op, *node.args] if isinstance(node.op, Expr) else list(node.args)
    if isinstance(node, Tuple):
        return list(node.fields)
    if isinstance(node, TupleGetItem):
        return [node.tuple_value]
    if isinstance(node, If):
        return [node.cond, node.true_branch, node.false_branch]
    if isinstance(node, Let):
        return [node.value, node.body]
    if isinstance(node, Function):
        return [node.body]
    return []


def count_ops(expr: Any) -> collections.Counter[str]:
    """How often each op is called in ``expr`` (Relay's ``relay.testing.count_ops``).

    A Relay expression of the front end is counted as built (``nn.conv2d``, ``nn.bias_add``);
    a Relax one (what a pass returned) by its ops, named as Relay named them (``relax.``
    dropped).
    """
    counts: collections.Counter[str] = collections.Counter()
    if isinstance(expr, relax.Expr) or isinstance(expr, tvm.IRModule):
        nodes = expr.functions.values() if isinstance(expr, tvm.IRModule) else [expr]

        def visit(node: Any) -> None:
            if isinstance(node, relax.Call) and isinstance(node.op, tvm.ir.Op):
                counts[str(node.op.name).removeprefix("relax.")] += 1

        for node in nodes:
            if isinstance(node, relax.Function):
                relax.analysis.post_order_visit(node, visit)
        if isinstance(expr, relax.Expr) and not isinstance(expr, relax.Function):
            relax.analysis.post_order_visit(expr, visit)
        return counts
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Call) and isinstance(node.op, BaseOp):
            counts[node.op.name] += 1
        stack.extend(_children(node))
    return counts
