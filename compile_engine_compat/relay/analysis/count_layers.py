"""``relay.analysis.count_layers``: the deepest chain of the given ops in a Relay graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call
from ..expr_functor import relay_node
from .graph import children, post_order

__all__ = ["count_layers"]


@legacy_api("relay.analysis")
def count_layers(expr: Any, valid_ops: Sequence[str]) -> int:
    """Relay's ``count_layers``: how many of ``valid_ops`` the deepest chain of the graph holds.

    Two parallel convolutions are one layer; a chain of two is two.

    Parameters
    ----------
    expr : Expr, relay.Function, tvm.IRModule (its ``main``) or a front-end Relax function
        The graph.
    valid_ops : sequence of str
        Relay op names, e.g. ``["nn.conv2d", "nn.dense"]``.

    Returns
    -------
    int
    """
    names = set(valid_ops)
    depth: dict[int, int] = {}
    for node in post_order(relay_node(expr)):
        below = max((depth.get(id(c), 0) for c in children(node)), default=0)
        counted = isinstance(node, Call) and isinstance(node.op, RelayOp) and node.op.name in names
        depth[id(node)] = below + (1 if counted else 0)
    root = relay_node(expr)
    return depth.get(id(root), 0)
