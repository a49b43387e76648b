"""``relay.transform.DynamicToStatic``: TVM 0.19's rewrite of ``dyn.*`` calls into their
static ops, on the Relay graph.

As Relay's pass did: the function's constants are folded (``FoldConstant``: ``shape_of`` of a
static tensor, an ``if`` on a constant, the ``where`` calls ``strided_slice``'s builder put
around its bounds), then every ``dyn.*`` call whose tensor-valued attributes (a shape, ``k``,
the scales, the bounds, ``pad_width``...) are constants becomes the call of its static op with
those values as attributes (``dyn.reshape(x, [2, 3])`` -> ``reshape(x, newshape=[2, 3])``),
and again until nothing changes (a static result can make the next call's shape constant).
A ``dyn.*`` call of a value known only when the function runs stays as it is.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator
from compile_engine_compat.relay._impl.registry import RelayOp, static_row

from ..expr import Call, Constant, If, TupleWrapper
from ..function import Function
from ..op.op import builder
from .fold_constant import fold_constants
from .graph_rewrites import graph_pass

__all__ = ["DynamicToStatic", "dynamic_to_static"]

#: Fold-and-rewrite rounds at most (each one makes at least one call static).
_ROUNDS = 16


class _ToStatic(GraphMutator):
    """Each ``dyn.*`` call of constant tensor attributes as its static op's call."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = False

    def visit_call(self, call: Call) -> Any:
        post = self._visit_children(call)
        op = post.op if isinstance(post, Call) else None
        row = static_row(op.row) if isinstance(op, RelayOp) else None
        if row is None:
            return post
        count = len(row.dynamic)
        tensors = post.args[-count:]
        if not all(isinstance(t, Constant) for t in tensors):
            return post
        values: dict[str, Any] = {}
        if post.attrs is not None:
            values.update((name, post.attrs[name]) for name in post.attrs.keys())
        values.update((a, t.data.numpy().tolist()) for a, t in zip(row.dynamic, tensors))
        values.update(zip(row.inputs, post.args[:-count]))
        out = builder(row.name)(**values)
        self.changed = True
        return out.astuple() if isinstance(out, TupleWrapper) else out

    def visit_function(self, fn: Function) -> Any:
        post = self._visit_children(fn)
        return fn if post is fn else _untyped(post)


class _ConstantBranches(GraphMutator):
    """Each ``if`` on a constant condition as the branch it takes, before any typing (the
    branches may differ in type, as Relay's folder allowed)."""

    def visit_if(self, node: If) -> Any:
        cond = self.visit(node.cond)
        if isinstance(cond, Constant):
            return self.visit(node.true_branch if bool(cond.data.numpy()) else node.false_branch)
        return self._visit_children(node)


def _untyped(func: Function) -> Function:
    """``func`` without the result type inference gave it (inferred again once static)."""
    return Function(func.params, func.body, None, func.type_params, func.attrs)


def dynamic_to_static(func: Function) -> Function:
    """``func`` with its constants folded and each ``dyn.*`` call of constant shape-like
    inputs its static op (see the module docstring)."""
    func = _untyped(_ConstantBranches().visit(_untyped(func)))
    for _ in range(_ROUNDS):
        func = fold_constants(func)
        rewriter = _ToStatic()
        out: Function = rewriter.visit(func)
        if not rewriter.changed:
            return out
        func = out
    return fold_constants(func)


@legacy_api("relay.transform")
def DynamicToStatic() -> Any:
    """``relay.transform.DynamicToStatic()`` (opt level 2): each ``dyn.*`` call whose
    shape-like inputs fold to constants becomes its static op, on the Relay graph (see
    :mod:`compile_engine_compat.relay.transform.dynamic_to_static`)."""
    return graph_pass("DynamicToStatic", 2, dynamic_to_static)
