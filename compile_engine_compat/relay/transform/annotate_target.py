"""``relay.transform.AnnotateTarget``: mark each node with the external compiler that takes it.

A call of an op goes to the first target whose checker, registered with
``tvm.ir.register_op_attr(op, "target.<target>", fn)``, accepts it (``fn(expr) -> bool``; the
older ``fn(attrs, args)`` form too); a call of a composite function named ``"<target>.<name>"``
goes to that target; anything else is ``"default"`` (the host). Each annotated node gets
``compiler_begin`` on its inputs and ``compiler_end`` on its uses, as Relay's pass did, so that
``MergeCompilerRegions`` and ``PartitionGraph`` can find the regions.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from compile_engine_compat.deprecations import legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, children, rebuild

from ..expr import Call, Expr, Tuple, TupleGetItem
from ..function import Function
from ..op.op import get as get_op
from .relay_module import relay_graph_pass

__all__ = ["AnnotateTarget", "annotate_target", "supported_target"]

DEFAULT = "default"


def _accepts(checker: Any, expr: Call) -> bool:
    """Run a ``target.<compiler>`` checker on ``expr`` (a bool value is the answer itself)."""
    if not callable(checker):
        return bool(checker)
    try:
        arity = len(inspect.signature(checker).parameters)
    except (TypeError, ValueError):
        arity = 1
    return bool(checker(expr.attrs, expr.args) if arity == 2 else checker(expr))


def supported_target(expr: Call, targets: Sequence[str]) -> str:
    """The target of a call: the first one whose checker (or composite name) takes it."""
    if isinstance(expr.op, Function):
        composite = expr.op.attrs.get("Composite")
        compiler = str(composite).split(".", 1)[0] if composite is not None else ""
        return compiler if compiler in targets else DEFAULT
    getter = getattr(expr.op, "get_attr", None)
    if getter is None:
        return DEFAULT
    for target in targets:
        checker = getter(f"target.{target}")
        if checker is not None and _accepts(checker, expr):
            return target
    return DEFAULT


def annotation(kind: str, value: Any, compiler: str) -> Call:
    """``relay.annotation.compiler_<kind>(value, compiler)``."""
    op = get_op(f"annotation.compiler_{kind}")
    return Call(op, [value], op.row.make_attrs({"compiler": compiler}))


class _Annotator(GraphMutator):
    def __init__(self, targets: Sequence[str], include_non_call_ops: bool) -> None:
        super().__init__()
        self.targets = list(targets)
        self.include_non_call_ops = include_non_call_ops
        #: id(original node) -> its target, for the annotated nodes.
        self.target: dict[int, str] = {}

    def stops_at(self, node: Any) -> bool:
        return isinstance(node, Function) or super().stops_at(node)

    def target_of(self, node: Any) -> str | None:
        if isinstance(node, Call) and not isinstance(node.op, Expr | Function):
            return supported_target(node, self.targets)
        if isinstance(node, Call) and isinstance(node.op, Function):
            return supported_target(node, self.targets)
        if not self.include_non_call_ops:
            return None
        if isinstance(node, Tuple):
            kinds = {self.target.get(id(f)) for f in node.fields}
            return kinds.pop() if len(kinds) == 1 and None not in kinds else DEFAULT
        if isinstance(node, TupleGetItem):
            return self.target.get(id(node.tuple_value), DEFAULT)
        return None

    def _dispatch(self, expr: Any) -> Any:
        if isinstance(expr, Function):
            return expr  # a composite (or other local function) is annotated as a whole
        kids = children(expr)
        target = self.target_of(expr) if kids else None
        if target is not None:
            self.target[id(expr)] = target
        new = []
        for kid in kids:
            post = self.visit(kid)
            if isinstance(expr, Call) and kid is expr.op:
                new.append(post)
                continue
            inner = self.target.get(id(kid))
            if inner is not None:
                post = annotation("end", post, inner)
            new.append(annotation("begin", post, target) if target is not None else post)
        return rebuild(expr, new)

    def annotate(self, func: Function) -> Function:
        body = self.visit(func.body)
        if id(func.body) in self.target:
            body = annotation("end", body, self.target[id(func.body)])
        return Function(func.params, body, func.ret_type, func.type_params, func.attrs)


def annotate_target(
    func: Function, targets: Sequence[str], include_non_call_ops: bool = True
) -> Function:
    """``func`` with every node annotated for its target (see the module docstring)."""
    if "Compiler" in func.attrs:
        return func
    return _Annotator(targets, include_non_call_ops).annotate(func)


@legacy_api("relay.transform.PartitionGraph")
def AnnotateTarget(targets: str | Sequence[str], include_non_call_ops: bool = True) -> Any:
    """Annotate the nodes each external compiler takes (Relay's pass).

    Parameters
    ----------
    targets : str or list of str
        The compilers, in order of preference.
    include_non_call_ops : bool
        Annotate tuples and tuple fields too.

    Returns
    -------
    tvm.transform.Pass
    """
    names = [targets] if isinstance(targets, str) else [str(t) for t in targets]
    if not names:
        raise ValueError("AnnotateTarget needs at least one target")
    return relay_graph_pass(
        "AnnotateTarget",
        lambda fs: {g: annotate_target(f, names, include_non_call_ops) for g, f in fs.items()},
    )
