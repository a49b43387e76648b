"""``relay.analysis``'s counts over a Relay graph: MACs, op frequencies, the dense-of-transpose
weights, and one intermediate value as a module of its own."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import UPPER, Call, Expr, Tuple, TupleGetItem, Var
from ..expr_functor import relay_node
from ..function import Function
from .graph import post_order
from .vars import free_vars

__all__ = [
    "extract_intermdeiate_expr",
    "get_total_mac_number",
    "list_op_freqs",
    "search_fc_transpose",
]

#: Ops whose MACs Relay counted: the reduction is over the kernel (conv) or the last input axis.
_CONVS = ("nn.conv1d", "nn.conv2d", "nn.conv3d")
_CONV_TRANSPOSES = ("nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose")
_MATMULS = ("nn.dense", "nn.batch_matmul", "nn.matmul")


def _shape(node: Expr) -> list[int]:
    return [int(d) for d in node.checked_type.shape]  # type: ignore[attr-defined]


def _macs(call: Call) -> int:
    """The multiply-accumulates of one op call (0 for ops Relay did not count)."""
    name = call.op.name
    attrs: Any = call.attrs
    if name in _CONVS or name in _CONV_TRANSPOSES:
        kernel = _shape(call.args[1])
        layout = str(attrs.kernel_layout or "")
        out_axis = layout.index("O") if "O" in layout else (1 if name in _CONV_TRANSPOSES else 0)
        per_output = int(np.prod(kernel)) // kernel[out_axis]
        if name in _CONV_TRANSPOSES:
            per_output //= max(int(attrs.groups), 1)
        return int(np.prod(_shape(call))) * per_output
    if name in _MATMULS:
        reduce_axis = _shape(call.args[0])[-1]
        if name == "nn.batch_matmul" and attrs.transpose_a:
            reduce_axis = _shape(call.args[0])[-2]
        if name == "nn.matmul" and attrs.transpose_a:
            reduce_axis = _shape(call.args[0])[0]
        return int(np.prod(_shape(call))) * reduce_axis
    return 0


@legacy_api("relay.analysis")
def get_total_mac_number(expr: Any) -> int:
    """Relay's ``get_total_mac_number``: the multiply-accumulates of a model.

    Counted for the convolutions (1-3d, transposed included), ``dense``, ``matmul`` and
    ``batch_matmul``, from their output and kernel shapes, as Relay did.

    Parameters
    ----------
    expr : Expr, or the Relax function of a front-end function (``mod["main"]``)
        The model; its types are inferred first.

    Returns
    -------
    int
    """
    root = relay_node(expr)
    UPPER.to_relax(root)  # types every node
    calls = [n for n in post_order(root) if isinstance(n, Call) and isinstance(n.op, RelayOp)]
    return sum(_macs(c) for c in calls)


@legacy_api("relay.analysis")
def list_op_freqs(mod: Any) -> dict[str, int]:
    """Relay's ``list_op_freqs``: each op's name and how many calls to it the module makes.

    Parameters
    ----------
    mod : tvm.IRModule, relay.Function or Expr
        Every function of a module counts. A function the front end built is counted on its
        Relay graph (Relay's op names); any other Relax function on its Relax calls (Relax's
        names without the ``relax.`` prefix).

    Returns
    -------
    dict of str to int
    """
    counts: Counter[str] = Counter()
    funcs = list(mod.functions.values()) if isinstance(mod, tvm.IRModule) else [mod]
    for func in funcs:
        relay_func = func if isinstance(func, Expr) else origin.relay_of(func)
        if relay_func is not None:
            for node in post_order(relay_func):
                if isinstance(node, Call) and isinstance(node.op, RelayOp):
                    counts[node.op.name] += 1
        elif isinstance(func, relax.Function):

            def count(node: Any) -> None:
                if isinstance(node, relax.Call) and isinstance(node.op, tvm.ir.Op):
                    counts[str(node.op.name).removeprefix("relax.")] += 1

            relax.analysis.post_order_visit(func, count)
    return dict(counts)


@legacy_api("relay.analysis")
def search_fc_transpose(expr: Any) -> list[str]:
    """Relay's ``search_fc_transpose``: the weights ``w`` of ``nn.dense(x, transpose(w, [1, 0]))``.

    Parameters
    ----------
    expr : Expr, or the Relax function of a front-end function
        The graph.

    Returns
    -------
    list of str
        The weight variables' names, in post-order.
    """
    names: list[str] = []
    for node in post_order(expr):
        if not (isinstance(node, Call) and isinstance(node.op, RelayOp)):
            continue
        if node.op.name != "nn.dense":
            continue
        weight = node.args[1]
        if not (isinstance(weight, Call) and isinstance(weight.op, RelayOp)):
            continue
        attrs: Any = weight.attrs
        axes = attrs.axes if weight.op.name == "transpose" else None
        if axes is not None and [int(a) for a in axes] == [1, 0]:
            if isinstance(weight.args[0], Var) and weight.args[0].name_hint not in names:
                names.append(weight.args[0].name_hint)
    return names


@legacy_api("relay.analysis")
def extract_intermdeiate_expr(mod: Any, expr_id: int) -> tvm.IRModule:
    """Relay's ``extract_intermdeiate_expr`` (sic): the module computing ``%expr_id`` of main.

    Parameters
    ----------
    mod : tvm.IRModule
        A module whose ``main`` the front end built.
    expr_id : int
        The value's id: its position among main's calls, tuples and projections in post-order
        (the ``%n`` of Relay's text, the result being the last id).

    Returns
    -------
    tvm.IRModule
        ``main`` returns that value, as a function of the variables it uses.

    Raises
    ------
    ValueError
        If main has no ``%expr_id``.
    """
    main = relay_node(mod)
    # Relay's expression ids: the computed values (calls, tuples, projections) in post-order.
    values = [n for n in post_order(main.body) if isinstance(n, Call | Tuple | TupleGetItem)]
    if not 0 <= expr_id < len(values):
        raise ValueError(f"extract_intermdeiate_expr: main has no %{expr_id} ({len(values)})")
    value = values[expr_id]
    return tvm.IRModule.from_expr(Function(free_vars(value), value))
