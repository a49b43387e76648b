"""Relay's Python building API, emitting Relax: ``from compile_engine_compat import relay``.

Names, signatures, defaults and attribute names follow Relay in TVM 0.7-0.19. A Relay
``Function`` built here is a Relax function to the engine (every entry point takes it), and to
TVM (``tvm.IRModule.from_expr(func)`` holds its Relax form). Under
``compile_engine_compat.install()`` this package is ``tvm.relay``, and each of its modules is
the ``tvm.relay`` module of the same path, so the files sit where Relay kept them:

* the AST: :mod:`.ty` (types), :mod:`.expr` (expressions), :mod:`.function` (``Function``);
* :mod:`.op`: the op table, one module of rows per op family (``relay.op.nn``...), and the
  strategy API;
* :mod:`.expr_functor` (``ExprVisitor``/``ExprMutator`` over the graph);
* :mod:`.analysis`, :mod:`.transform` (the passes), :mod:`.testing`, :mod:`.qnn`;
* :mod:`.build_module` (``relay.build``) and :mod:`.backend` (the engine modules, and what
  ``relay.build`` returns);
* :mod:`.frontend` (the importers, on Relax's), :mod:`.vm` (the Relay VM's compiler, on the
  Relax VM) and :mod:`.param_dict` (``save_param_dict``/``load_param_dict``).

This module only assembles the ``relay`` namespace. The ops come from one table
(:data:`compile_engine_compat.relay.OP_TABLE`); an op or attribute value with no Relax
equivalent raises :class:`UnsupportedRelayError` at the builder call, naming what to write
instead. What the front end does not provide at all (:data:`REMOVED`) is refused on access.
The machinery behind these modules (the emitter, the op registry and converters, the printer,
the passes) is :mod:`._impl`, which TVM never had and the import alias never serves.
"""

from __future__ import annotations

import sys
from typing import Any as _AnyT

from compile_engine_compat.conflicts import require_tvm

require_tvm(__name__)  # before anything imports tvm: an ImportError naming the [tvm] extra

from tvm import target  # re-exported, as TVM 0.19's relay did

from compile_engine_compat.relay._impl import graph_walk as _graph_walk
from compile_engine_compat.relay._impl import printer as _printer
from compile_engine_compat.relay._impl import to_relax as _to_relax
from compile_engine_compat.relay._impl import type_equal as _type_equal
from compile_engine_compat.relay._impl.printer import fromtext, parse, parse_expr
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError

from . import (
    adt,
    analysis,
    backend,
    base,
    build_module,
    expr,
    expr_functor,
    frontend,
    function,
    op,
    prelude,
    qnn,
    quantize,
    scope_builder,
    testing,
    transform,
    ty,
    type_functor,
    vm,
)
from .adt import (
    Clause,
    Constructor,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from .analysis import free_vars
from .base import GlobalVar, SequentialSpan, SourceName, Span, astext, pretty_print
from .build_module import build, create_executor, optimize
from .expr import (
    Call,
    Constant,
    Expr,
    If,
    Let,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    TupleWrapper,
    Var,
    bind,
    const,
    var,
)
from .expr_functor import ExprFunctor, ExprMutator, ExprVisitor
from .function import PublicFunction as Function
from .op import annotation, contrib, image, nn, random, reg, vision
from .op.op import OP_TABLE, REFUSED_OPS, namespace
from .param_dict import load_param_dict, save_param_dict
from .scope_builder import ScopeBuilder
from .transform import build_config  # relay.build_config: the pre-0.7 PassContext
from .ty import (
    Any,
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    RelayTypeError,
    ShapeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeConstraint,
    TypeKind,
    TypeRelation,
    TypeVar,
    scalar_type,
)
from .type_functor import TypeFunctor, TypeMutator, TypeVisitor

# The expressions reach the op table and the emitter through this one connection.
expr.connect(
    op.op.builder,
    _to_relax.to_relax,
    _to_relax.function_to_relax,
    _printer.astext,
    _graph_walk.bind,
)
# ... and the composite types their ==, Relay's structural equality.
ty.connect_equality(_type_equal.types_equal)
globals().update(namespace(""))

# TVM 0.19's relay.analysis imported relay.transform and relay.build_module, and its
# relay.transform the relay package: programs reached them there (set here, where the package
# is assembled, since those modules import relay.analysis).
analysis.build_module = build_module  # type: ignore[attr-defined]
analysis.transform = transform  # type: ignore[attr-defined]
transform.relay = sys.modules[__name__]

__all__ = [
    "OP_TABLE",
    "REFUSED_OPS",
    "Any",
    "Call",
    "Clause",
    "Constant",
    "Constructor",
    "Expr",
    "ExprFunctor",
    "ExprMutator",
    "ExprVisitor",
    "FuncType",
    "Function",
    "GlobalTypeVar",
    "GlobalVar",
    "If",
    "IncompleteType",
    "Let",
    "Match",
    "Pattern",
    "PatternConstructor",
    "PatternTuple",
    "PatternVar",
    "PatternWildcard",
    "RefCreate",
    "RefRead",
    "RefType",
    "RefWrite",
    "RelayTypeError",
    "ScopeBuilder",
    "SequentialSpan",
    "ShapeVar",
    "SourceName",
    "Span",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "Type",
    "TypeCall",
    "TypeConstraint",
    "TypeData",
    "TypeFunctor",
    "TypeKind",
    "TypeMutator",
    "TypeRelation",
    "TypeVar",
    "TypeVisitor",
    "UnsupportedRelayError",
    "Var",
    "adt",
    "analysis",
    "annotation",
    "astext",
    "backend",
    "base",
    "bind",
    "build",
    "build_config",
    "build_module",
    "const",
    "contrib",
    "create_executor",
    "expr",
    "expr_functor",
    "free_vars",
    "fromtext",
    "frontend",
    "function",
    "image",
    "load_param_dict",
    "nn",
    "op",
    "optimize",
    "parse",
    "parse_expr",
    "prelude",
    "pretty_print",
    "qnn",
    "quantize",
    "random",
    "reg",
    "save_param_dict",
    "scalar_type",
    "scope_builder",
    "target",
    "testing",
    "transform",
    "ty",
    "type_functor",
    "var",
    "vision",
    "vm",
]
__all__ += sorted(namespace(""))

#: Parts of Relay this front end does not provide -> why, and what replaces them.
REMOVED: dict[str, str] = {
    # -- upstream Relay test files (test_any's helpers import it) --------------------------------
    "SpanCheck": "Relay's span checker is gone: Relax nodes keep the spans they were built "
    "with (relay.transform.AnnotateSpans is an identity), and errors are Python exceptions",
}


def __getattr__(name: str) -> _AnyT:
    """A part of Relay the front end knows but does not serve is a stand-in refused when used
    (``from tvm.relay import frontend`` works, ``frontend.from_onnx(...)`` raises); anything
    else raises :class:`RelayRemovedError` naming it."""
    if name.startswith("_"):
        raise AttributeError(f"module 'compile_engine_compat.relay' has no attribute {name!r}")
    from compile_engine_compat.surfaces.import_alias import (
        REFUSED_MODULES,
        RelayRemovedError,
        refused_name,
        removed_message,
    )

    if name in REMOVED:
        return refused_name(f"tvm.relay.{name}", REMOVED[name])
    if f"tvm.relay.{name}" in REFUSED_MODULES:
        return refused_name(f"tvm.relay.{name}")
    raise RelayRemovedError(removed_message(f"tvm.relay.{name}", REMOVED.get(name)))
