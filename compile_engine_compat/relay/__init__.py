"""Relay's Python building API, emitting Relax: ``from compile_engine_compat import relay``.

Names, signatures, defaults and attribute names follow Relay in TVM 0.7-0.19. A Relay
``Function`` built here is a Relax function to the engine (every entry point takes it), and to
TVM (``tvm.IRModule.from_expr(func)`` holds its Relax form). Under
``compile_engine_compat.install()`` this package is ``tvm.relay``.

The ops come from one table (:data:`compile_engine_compat.relay.OP_TABLE`); an op or
attribute value with no Relax equivalent raises :class:`UnsupportedRelayError` at the builder
call, naming what to write instead.
"""

from __future__ import annotations

from typing import Any as _AnyT

from . import _emit, _expr, _ops, analysis, backend, expr, function, op, qnn, testing, transform, ty
from ._emit import free_vars
from ._expr import (
    Any,
    Call,
    Constant,
    Expr,
    Function,
    FuncType,
    Let,
    RelayTypeError,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    TupleWrapper,
    Type,
    Var,
    const,
    var,
)
from ._ops import OP_TABLE, REFUSED_OPS, UnsupportedRelayError, namespace
from .build_module import build, create_executor
from .op import image, nn

# The expression classes reach the op table and the emitter through this one connection.
_expr.connect(_ops.builder, _ops.RelayOp, _emit.to_relax, _emit.function_to_relax)
_ops.connect_strategy(op.op.strategy_function)

globals().update(namespace(""))

__all__ = [
    "OP_TABLE",
    "REFUSED_OPS",
    "Any",
    "Call",
    "Constant",
    "Expr",
    "FuncType",
    "Function",
    "Let",
    "RelayTypeError",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "Type",
    "UnsupportedRelayError",
    "Var",
    "analysis",
    "backend",
    "build",
    "const",
    "create_executor",
    "expr",
    "free_vars",
    "function",
    "image",
    "nn",
    "op",
    "qnn",
    "testing",
    "transform",
    "ty",
    "var",
]
__all__ += sorted(namespace(""))

#: Parts of Relay this front end does not provide -> why, and what replaces them.
REMOVED: dict[str, str] = {
    "frontend": "Relay's model importers are gone: use tvm.relax.frontend (from_onnx, "
    "torch.from_exported_program, ...)",
    "vm": "the Relay VM is gone: ex = tvm.compile(mod, target); relax.VirtualMachine(ex, dev)",
    "adt": "ADTs and Relay control flow (If, Match, recursion) are not mapped: use relax.If "
    "in a relax.BlockBuilder function",
    "prelude": "the Relay prelude (ADT lists, trees) is not mapped: use Relax tuples",
    "If": "Relay control flow is not mapped: use relax.If in a relax.BlockBuilder function",
    "Match": "ADT matching is not mapped: restructure with relax.If and tuples",
    "RefCreate": "Relay references are not mapped: Relax values are immutable",
    "quantize": "relay.quantize is gone: quantize in the source framework",
}


def __getattr__(name: str) -> _AnyT:
    if name.startswith("_"):
        raise AttributeError(f"module 'compile_engine_compat.relay' has no attribute {name!r}")
    from compile_engine_compat.surfaces.import_alias import RelayRemovedError, _message

    raise RelayRemovedError(_message(f"tvm.relay.{name}", REMOVED.get(name)))
