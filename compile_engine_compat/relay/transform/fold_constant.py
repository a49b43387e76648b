"""``relay.transform.FoldConstant``: TVM 0.19's constant folding, on the Relay graph.

As Relay's ``ConstantFolder`` did: a call whose arguments are all constants (or tuples of
constants) is evaluated (compiled and run by the package's own build) and becomes a
``relay.Constant``; ``shape_of`` and ``ndarray_size`` of a statically shaped value become
constants without evaluating it; a ``let`` bound to a constant is inlined; an ``if`` on a constant
condition becomes the branch taken; ``(a, b, ...)[i]`` becomes the field. ``nn.dropout``,
``device_copy`` and the annotations are never evaluated, nor QNN ops unless ``fold_qnn``.
Each largest foldable subexpression is evaluated once (Relay evaluated call by call; the
constants are the same). A module with no Relay graph (rewritten by a Relax pass) gets
``relax.transform.FoldConstant``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tvm import relax

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.frontend_helpers import infer_value
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, GraphVisitor, rebuild
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Constant, Expr, If, Let, Tuple, TupleGetItem, const
from ..function import Function
from ..ty import TensorType
from .graph_rewrites import graph_pass

__all__ = ["FoldConstant", "fold_constants"]

#: Ops Relay's folder never evaluated (non-computational, stateful or device-placing).
_NEVER = frozenset(
    "nn.dropout device_copy on_device annotation.on_device annotation.stop_fusion "
    "annotation.checkpoint annotation.compiler_begin annotation.compiler_end shape_of "
    "vm.shape_of ndarray_size".split()
)


def _op_name(node: Any) -> str:
    return str(node.op.name) if isinstance(node, Call) and isinstance(node.op, RelayOp) else ""


def _constant(node: Any) -> bool:
    """Relay's ``IsComplexConstant``: a constant, or a tuple of them."""
    if isinstance(node, Tuple):
        return all(_constant(f) for f in node.fields)
    return isinstance(node, Constant)


class _Foldable(GraphVisitor):
    """Finds the calls (and tuples) whose whole subexpression can be evaluated."""

    def __init__(self, fold_qnn: bool) -> None:
        super().__init__()
        self.fold_qnn = fold_qnn
        self.found: set[int] = set()

    def _evaluable(self, node: Any) -> bool:
        return isinstance(node, Constant) or id(node) in self.found

    def visit_call(self, call: Call) -> None:
        name = _op_name(call)
        qnn_kept = name.startswith("qnn.") and not self.fold_qnn
        if name and name not in _NEVER and not qnn_kept and all(map(self._evaluable, call.args)):
            self.found.add(id(call))

    def visit_tuple(self, tup: Tuple) -> None:
        if all(map(self._evaluable, tup.fields)):
            self.found.add(id(tup))


class _Folder(GraphMutator):
    def __init__(self, foldable: _Foldable) -> None:
        super().__init__()
        self.foldable = foldable

    def stops_at(self, node: Any) -> bool:
        return super().stops_at(node) or self._root(node)

    def _root(self, node: Any) -> bool:
        return isinstance(node, Call) and id(node) in self.foldable.found

    def visit_call(self, call: Call) -> Any:
        if self._root(call):
            return _evaluate(call)
        post = self._visit_children(call)
        name = _op_name(call)
        if name in ("shape_of", "vm.shape_of", "ndarray_size"):
            return _shape_value(call, post)
        if name and name not in _NEVER and all(map(_constant, post.args)):
            qnn_kept = name.startswith("qnn.") and not self.foldable.fold_qnn
            return post if qnn_kept else _evaluate(post)
        return post

    def visit_tuple_getitem(self, item: TupleGetItem) -> Any:
        post = self._visit_children(item)
        if isinstance(post.tuple_value, Tuple):
            return post.tuple_value.fields[post.index]
        return post

    def visit_if(self, node: If) -> Any:
        cond = self.visit(node.cond)
        if isinstance(cond, Constant):
            return self.visit(node.true_branch if bool(cond.data.numpy()) else node.false_branch)
        return rebuild(node, [cond, self.visit(node.true_branch), self.visit(node.false_branch)])

    def visit_let(self, let: Let) -> Any:
        value = self.visit(let.value)
        if isinstance(value, Constant):
            self.memo_map[id(let.var)] = value
            return self.visit(let.body)
        return rebuild(let, [self.visit(let.var), value, self.visit(let.body)])

    def visit_function(self, fn: Function) -> Any:
        if "Primitive" in (fn.attrs or {}):
            return fn
        return self._visit_children(fn)


def _evaluate(node: Call) -> Expr:
    """The value of a call of no free variables, as a constant of its dtype (a call giving a
    tuple stays as it is)."""
    try:
        value = infer_value(node, {}).numpy()
    except (TypeError, ValueError, AttributeError):
        return node
    return const(value, str(value.dtype))


def _shape_value(pre: Call, post: Call) -> Expr:
    """``shape_of``/``ndarray_size`` of a statically shaped tensor as a constant."""
    ty = getattr(pre.args[0], "_checked_type", None)
    if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in _dims(ty)):
        return post
    dtype = str(post.attrs.dtype)  # type: ignore[union-attr]
    shape = [int(d) for d in _dims(ty)]
    if _op_name(pre) == "ndarray_size":
        return const(np.array(int(np.prod(shape)), dtype), dtype)
    return const(np.array(shape, dtype), dtype)


def _dims(ty: TensorType) -> list[Any]:
    return [d.value if hasattr(d, "value") else d for d in ty.shape]


def fold_constants(func: Function, fold_qnn: bool = False) -> Function:
    """``func`` with its constant subexpressions folded (see the module docstring)."""
    infer(func)
    foldable = _Foldable(fold_qnn)
    foldable.visit(func)
    out: Function = _Folder(foldable).visit(func)
    return out


@legacy_api("relay.transform")
def FoldConstant(fold_qnn: bool = False) -> Any:
    """``relay.transform.FoldConstant(fold_qnn=False)`` (opt level 2): TVM 0.19's constant
    folding on the Relay graph (see :mod:`compile_engine_compat.relay.transform.fold_constant`);
    ``fold_qnn=True`` evaluates QNN ops of constants too."""
    fold = bool(fold_qnn)
    fallback = relax.transform.FoldConstant()
    return graph_pass("FoldConstant", 2, lambda func: fold_constants(func, fold), fallback)
