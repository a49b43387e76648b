"""``relay.transform.recast``: hard casts around chosen ops, as TVM 0.19's ``recast``.

Each call of an op in ``ops`` (``nn.conv2d`` by default) gets its tensor inputs (a tuple's
fields, for ``concatenate``) cast to ``dtype``, its ``out_dtype`` attribute (where it has one)
set to ``out_dtype``, and its result cast back to the dtype it had. ``skip_layers`` names calls
to leave alone by their index among the matched calls, counted from the inputs (negative: from
the output). Meant for trying an op at another precision, as Relay's was.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator, children, rebuild

from ..expr import Attrs, Call, Expr, Tuple
from ..function import Function
from ..op.op import builder
from .transform import InferTypeLocal

__all__ = ["recast"]


def _matched_calls(expr: Any, ops: set[str]) -> list[Call]:
    """The calls of ``ops`` in ``expr``, inputs first (each once)."""
    found: list[Call] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            if isinstance(node, Call) and str(getattr(node.op, "name", "")) in ops:
                found.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(children(node)))
    return found


class _Recast(GraphMutator):
    def __init__(self, dtype: str, out_dtype: str, recast: set[int]) -> None:
        super().__init__()
        self.dtype, self.out_dtype, self.recast = dtype, out_dtype, recast

    def _cast(self, value: Any) -> Any:
        if isinstance(value, Tuple):
            return Tuple([self._cast(f) for f in value.fields], value.span)
        return builder("cast")(value, self.dtype)

    def visit_call(self, call: Call) -> Any:
        new = self._visit_children(call)
        if id(call) not in self.recast:
            return new
        attrs = new.attrs
        if isinstance(attrs, Attrs) and "out_dtype" in attrs:
            attrs = attrs.with_fields(out_dtype=self.out_dtype)
        out = Call(new.op, [self._cast(a) for a in new.args], attrs, new.type_args, new.span)
        return builder("cast")(out, str(InferTypeLocal(call, **INTERNAL).dtype))


@legacy_api("relay.transform")
def recast(
    expr: Any,
    dtype: str,
    out_dtype: str,
    ops: Sequence[str] | None = None,
    skip_layers: Sequence[int] | None = None,
) -> Any:
    """``relay.transform.recast(expr, dtype, out_dtype, ops=None, skip_layers=None)``.

    Parameters
    ----------
    expr : relay.Function or Expr
        What to rewrite.
    dtype, out_dtype : str
        The inputs' dtype and the ``out_dtype`` of each recast call.
    ops : list of str, optional
        The op names to recast (``["nn.conv2d"]``).
    skip_layers : list of int, optional
        Indices, among the matched calls counted from the inputs, of calls left as they are.

    Returns
    -------
    relay.Function or Expr
        The rewritten expression (a new one; ``expr`` is unchanged).
    """
    body = expr.body if isinstance(expr, Function) else expr
    if not isinstance(body, Expr):
        raise TypeError(f"recast takes a relay.Function or expression, got {expr!r}")
    matched = _matched_calls(body, set(ops or ["nn.conv2d"]))
    skipped = {i % len(matched) for i in skip_layers or ()} if matched else set()
    chosen = {id(c) for i, c in enumerate(matched) if i not in skipped}
    new_body = _Recast(str(dtype), str(out_dtype), chosen).visit(body)
    if not isinstance(expr, Function):
        return new_body
    return rebuild(expr, [*expr.params, new_body])
