"""``relay.transform.SplitArgs(max_function_args)``: a ``concatenate`` of more inputs than a
kernel may take split into a chain of smaller ones, on the Relay graph (TVM 0.19's pass).

GPU targets limit the arguments of a kernel (``tvm.target.Target(kind).max_function_args``:
opencl 128, metal 31). Each input of a concatenate is one buffer, plus one argument per unknown
(``Any``) dimension and, when it has any, one per dimension of its shape; the output is one more
buffer (and its shape when unknown). Where the inputs need more than the limit, they are taken
in order, a ``concatenate(stop_fusion(Tuple(...)))`` closing each group that would exceed it and
starting the next. A limit of 0 (a target with none) changes nothing.
"""

from __future__ import annotations

from typing import Any

from compile_engine_compat.deprecations import legacy_api

from ..expr import Call, Expr, Tuple
from ..op.op import builder
from ..ty import TensorType
from .graph_rewrites import graph_pass, op_name, rewrite_calls

__all__ = ["SplitArgs"]


def _shape_arguments(expr: Expr) -> tuple[int, int]:
    """(its rank, its unknown dimensions) of a tensor-typed expression ((0, 0) if untyped)."""
    ty: Any = getattr(expr, "_checked_type", None) or getattr(expr, "type_annotation", None)
    if not isinstance(ty, TensorType):
        return 0, 0
    dims = list(ty.shape)
    return len(dims), sum(1 for d in dims if not hasattr(d, "value"))


def _arguments(expr: Expr) -> int:
    """How many kernel arguments one input takes: its buffer, then its shape when unknown."""
    rank, unknown = _shape_arguments(expr)
    return 1 + unknown + (rank if unknown else 0)


def _concat(fields: list[Expr], axis: int) -> Expr:
    return builder("concatenate")(builder("annotation.stop_fusion")(Tuple(fields)), axis)


def _split(limit: int) -> Any:
    def rule(call: Call) -> Expr:
        inputs = call.args[0]
        if limit <= 0 or op_name(call) != "concatenate" or not isinstance(inputs, Tuple):
            return call
        # The output's buffer, and its shape when unknown (when an input's is).
        shapes = [_shape_arguments(field) for field in inputs.fields]
        unknown = any(count for _, count in shapes)
        room = limit - 1 - (shapes[0][0] if unknown else 0)
        if sum(map(_arguments, inputs.fields)) < room:
            return call
        axis = int(call.attrs.axis)  # type: ignore[union-attr]
        group: list[Expr] = []
        taken = 0
        for field in inputs.fields:
            needs = _arguments(field)
            if taken + needs > room:
                group, taken = [_concat(group, axis)], needs
            taken += needs
            group.append(field)
        return _concat(group, axis)

    return rule


@legacy_api("relay.transform.more_passes")
def SplitArgs(max_function_args: int = 0) -> Any:
    """``relay.transform.SplitArgs(max_function_args)`` (opt level 1), on the Relay graph.

    Each ``concatenate`` whose inputs need more kernel arguments than ``max_function_args``
    becomes a chain of concatenates of at most that many, each over a ``stop_fusion``
    (``tvm.target.Target(kind).max_function_args`` is the limit of a target; 0 splits nothing).
    """
    if isinstance(max_function_args, bool) or not isinstance(max_function_args, int):
        raise TypeError(
            f"SplitArgs(max_function_args) takes an int (0: no limit), got {max_function_args!r}"
        )
    return graph_pass("SplitArgs", 1, rewrite_calls(_split(max_function_args)))
