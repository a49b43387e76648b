"""``relay.transform.ToMixedPrecision``: TVM 0.19's automatic mixed precision, on the Relay graph.

Each op call is classified by :mod:`.mixed_precision` (ALWAYS, FOLLOW, NEVER; an op in no list
is FOLLOW and counted as missing). After its arguments are rewritten:

* an ALWAYS call, and a FOLLOW call whose floating-point arguments are all in the mixed type (or
  are variables or constants, which can be cast), computes in the mixed type: its float arguments
  are cast to it, its ``out_dtype`` (convolutions, ``dense``, ``batch_matmul``) or ``dtype``
  (``zeros``, ``full``) attribute becomes the accumulation dtype, and the result is cast to the
  output dtype where the two differ; a ``clip`` whose bounds do not fit the type stays in float32;
* any other call gets its float arguments cast to float32;
* a call of a ``relay.Function`` is NEVER (its signature is kept), a call of a variable or a
  global function (recursion, ADTs) is left as it is;
* a ``let`` variable takes the type of its new value.

Casts are cached: one node casts a value to a dtype, and casting that cast back gives the
original value. With the pass-config key ``relay.ToMixedPrecision.keep_orig_output_dtype`` the
function's outputs are cast back to their original dtypes. ``missing_op_mode``: 0 raises when an
op is in no list, 1 logs a warning per missing op, 2 is silent.
"""

from __future__ import annotations

import collections
import logging
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.graph_walk import GraphMutator
from compile_engine_compat.relay._impl.passes import InferTypeLocal
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.surfaces.passconfig import current_config

from ..expr import Call, Constant, Expr, Let, Tuple, TupleGetItem, Var
from ..function import Function
from ..op.op import builder
from ..ty import TensorType, TupleType, Type
from . import mixed_precision as lists
from .graph_rewrites import graph_pass

__all__ = ["KEEP_ORIG_OUTPUT_DTYPE", "ToMixedPrecision", "to_mixed_precision"]

#: The pass-config key that keeps the function's outputs in their original dtypes.
KEEP_ORIG_OUTPUT_DTYPE = "relay.ToMixedPrecision.keep_orig_output_dtype"

_LOG = logging.getLogger("compile_engine_compat.relay.transform")

#: The largest finite value of each mixed precision type (a clip beyond it stays in float32).
_MAX_VALUE = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
}

#: Attribute types whose ``out_dtype`` is an accumulation dtype (TVM 0.19's list).
_OUT_DTYPE_ATTRS = frozenset(
    f"relay.attrs.{name}Attrs"
    for name in (
        *("Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv2DWinograd"),
        *("Conv2DWinogradNNPACKWeightTransform", "DeformableConv2D", "Conv3D"),
        *("Conv3DTranspose", "Conv3DWinograd", "Dense", "BatchMatmul"),
    )
)


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float") or dtype == "bfloat16"


def _changeable(dtype: Any) -> bool:
    """An ``out_dtype``/``dtype`` attribute the pass may set: a float, or unset (void)."""
    text = str(dtype) if dtype is not None else ""
    return text in ("", "void") or _is_float(text)


class _MixedPrecision(GraphMutator):
    def __init__(self, func: Function, mixed: str, keep_output_dtype: bool) -> None:
        super().__init__()
        self.mixed = mixed
        self.root = func.body
        self.missing: collections.Counter[str] = collections.Counter()
        self.casts: dict[tuple[int, str], Expr] = {}
        self.original: list[str] = []
        if keep_output_dtype:
            root_type = self.type_of(func.body)
            fields = root_type.fields if isinstance(root_type, TupleType) else [root_type]
            self.original = [str(t.dtype) for t in fields if isinstance(t, TensorType)]

    # -- types ----------------------------------------------------------------------------
    def type_of(self, expr: Any) -> Type:
        """The type of ``expr``, inferred from its inputs' types when it is new."""
        known = expr._checked_type if isinstance(expr, Expr) else None
        if known is None and isinstance(expr, Var):
            known = expr.type_annotation
        if known is not None:
            return known
        if isinstance(expr, Tuple):
            found: Type = TupleType([self.type_of(f) for f in expr.fields])
        elif isinstance(expr, TupleGetItem):
            found = self.type_of(expr.tuple_value).fields[expr.index]  # type: ignore[attr-defined]
        elif isinstance(expr, Let):
            found = self.type_of(expr.body)
        elif isinstance(expr, Call) and isinstance(expr.op, RelayOp):
            # A call of the same op on variables of its arguments' types: one op to type.
            probe_args = [Var(f"arg{i}", self.type_of(a)) for i, a in enumerate(expr.args)]
            found = InferTypeLocal(Call(expr.op, probe_args, expr.attrs), **INTERNAL)
        else:
            found = InferTypeLocal(expr, **INTERNAL)
        expr._checked_type = found
        return found

    def is_mixed(self, ty: Type, ignore_non_float: bool) -> bool:
        if isinstance(ty, TensorType):
            return (ignore_non_float and not _is_float(ty.dtype)) or ty.dtype == self.mixed
        if isinstance(ty, TupleType):
            return all(self.is_mixed(t, ignore_non_float) for t in ty.fields)
        return False  # a function or another kind of value is never in the mixed type

    # -- casts ----------------------------------------------------------------------------
    def cached_cast(self, expr: Expr, dtype: str, wanted: str) -> Expr:
        if not _is_float(dtype) or dtype == wanted:
            return expr
        key = (id(expr), wanted)
        if key not in self.casts:
            cast = builder("cast")(expr, wanted)
            cast._checked_type = TensorType(self.type_of(expr).shape, wanted)  # type: ignore[attr-defined]
            self._keep.extend((expr, cast))
            self.casts[key] = cast
            self.casts[(id(cast), dtype)] = expr  # casting the cast back: the original
        return self.casts[key]

    def cast_arg(self, expr: Expr, ty: Type, wanted: str) -> Expr:
        if isinstance(ty, TensorType):
            return self.cached_cast(expr, ty.dtype, wanted)
        if isinstance(ty, TupleType):
            fields = [
                expr.fields[i] if isinstance(expr, Tuple) else TupleGetItem(expr, i)
                for i in range(len(ty.fields))
            ]
            cast = [self.cast_arg(f, t, wanted) for f, t in zip(fields, ty.fields)]
            if all(c is f for c, f in zip(cast, fields)):
                return expr
            return Tuple(cast)
        raise TypeError(
            f"relay.transform.ToMixedPrecision: cannot cast an argument of type {ty!r} (only "
            "tensors and tuples of tensors)"
        )

    # -- the rewrite ----------------------------------------------------------------------
    def classify(self, call: Call) -> tuple[int, str, str]:
        """(category, accumulation dtype, output dtype) of a call."""
        if isinstance(call.op, Function):
            return lists.MIXED_PRECISION_NEVER, "float32", "float32"
        rule = lists.conversion_rule(call.op)
        if rule is None:
            self.missing[str(call.op.name)] += 1
            return lists.MIXED_PRECISION_FOLLOW, self.mixed, self.mixed
        described = list(rule(call, self.mixed))
        if len(described) != 3:
            raise ValueError(
                f"the mixed precision conversion function of {call.op.name} returned "
                f"{len(described)} values: it returns [category, accumulation dtype, output dtype]"
            )
        return int(described[0]), str(described[1]), str(described[2])

    def attrs_fit(self, call: Call) -> bool:
        """False for a clip whose bounds lie outside the mixed type's range."""
        attrs = call.attrs
        if attrs is None or getattr(attrs, "_type_key", "") != "relay.attrs.ClipAttrs":
            return True
        bound = _MAX_VALUE.get(self.mixed, float(np.finfo(np.float32).max))
        return float(attrs.a_min) >= -bound and float(attrs.a_max) <= bound

    def new_attrs(self, call: Call, accumulation: str) -> Any:
        attrs = call.attrs
        if attrs is None:
            return attrs
        key = getattr(attrs, "_type_key", "")
        if key in _OUT_DTYPE_ATTRS and _changeable(attrs.out_dtype):
            return attrs.with_fields(out_dtype=accumulation)
        if key == "relay.attrs.InitOpAttrs" and _changeable(attrs.dtype):
            return attrs.with_fields(dtype=accumulation)
        return attrs

    def visit_call(self, call: Call) -> Any:
        post = self._visit_children(call)
        if not isinstance(post.op, RelayOp | Function):
            return post  # a variable, a global function or a constructor: left alone
        category, accumulation, output = self.classify(call)
        arg_types = [self.type_of(a) for a in post.args]
        if category == lists.MIXED_PRECISION_FOLLOW:
            follows = all(
                self.is_mixed(t, True) or isinstance(a, Var | Constant)
                for a, t in zip(post.args, arg_types)
            )
            category = lists.MIXED_PRECISION_ALWAYS if follows else lists.MIXED_PRECISION_NEVER
        mixed = category == lists.MIXED_PRECISION_ALWAYS and self.attrs_fit(call)
        wanted = self.mixed if mixed else "float32"
        args = [self.cast_arg(a, t, wanted) for a, t in zip(post.args, arg_types)]
        if not mixed:
            if all(a is b for a, b in zip(args, post.args)):
                return post
            return Call(post.op, args, call.attrs, post.type_args, post.span)
        out: Expr = Call(post.op, args, self.new_attrs(call, accumulation), [], post.span)
        if accumulation != output:
            out = self.cast_arg(out, self.type_of(out), output)
        if call is self.root and self.original and self.original[0] != output:
            out = self.cast_arg(out, self.type_of(out), self.original[0])
        return out

    def visit_tuple(self, tup: Tuple) -> Any:
        post = self._visit_children(tup)
        if tup is not self.root or not self.original:
            return post
        fields = [
            self.cast_arg(f, self.type_of(f), dtype) for f, dtype in zip(post.fields, self.original)
        ]
        if all(a is b for a, b in zip(fields, post.fields)):
            return post
        return Tuple(fields, post.span)

    def visit_let(self, let: Let) -> Any:
        value = self.visit(let.value)
        var = Var(let.var.name_hint, self.type_of(value))
        self._keep.append(let.var)
        self.memo_map[id(let.var)] = var
        return Let(var, value, self.visit(let.body))

    def visit_function(self, fn: Function) -> Any:
        post = self._visit_children(fn)
        if post is fn:
            return fn
        # The return type is found again (Relay erased it before rewriting).
        return Function(post.params, post.body, None, post.type_params, post.attrs)


def to_mixed_precision(func: Function, mixed_precision_type: str, missing_op_mode: int) -> Any:
    """``func`` rewritten to compute in ``mixed_precision_type`` where TVM 0.19's lists allow.

    Raises
    ------
    ValueError
        With ``missing_op_mode=0``, naming the ops in no list.
    """
    keep = bool(current_config().get(KEEP_ORIG_OUTPUT_DTYPE, False))
    rewriter = _MixedPrecision(func, mixed_precision_type, keep)
    out = rewriter.visit(func)
    if rewriter.missing and missing_op_mode != 2:
        listed = ", ".join(f"{name} ({n}x)" for name, n in sorted(rewriter.missing.items()))
        if missing_op_mode == 0:
            raise ValueError(
                "relay.transform.ToMixedPrecision(missing_op_mode=0): ops with no "
                f"FTVMMixedPrecisionConversionType: {listed}; register one with "
                "relay.op.register_mixed_precision_conversion, or use missing_op_mode=1 or 2"
            )
        _LOG.warning("ToMixedPrecision: ops not in any mixed precision list: %s", listed)
    return out


@legacy_api("relay.transform")
def ToMixedPrecision(mixed_precision_type: str = "float16", missing_op_mode: int = 1) -> Any:
    """``relay.transform.ToMixedPrecision(mixed_precision_type="float16", missing_op_mode=1)``.

    TVM 0.19's pass (opt level 0), rewriting the Relay graph of each function the front end
    built: see the module's docstring for the rules. Functions with no Relay graph (a Relax pass
    built them) are left as they are.

    Parameters
    ----------
    mixed_precision_type : str
        A floating-point type: ``"float16"``, ``"bfloat16"``, ``"float64"``.
    missing_op_mode : int
        0: raise on an op in no list; 1: warn; 2: silent (such an op is FOLLOW).

    Raises
    ------
    ValueError
        For a type that is not floating point, or a mode other than 0, 1 and 2.
    """
    if missing_op_mode not in (0, 1, 2):
        raise ValueError("Missing op mode is either 0, 1, or 2")
    try:
        dtype = str(tvm.DataType(str(mixed_precision_type)))
    except Exception as err:  # TVM raises its own error for an unknown type string
        raise ValueError(
            f"relay.transform.ToMixedPrecision: {mixed_precision_type!r} is not a data type"
        ) from err
    if not _is_float(dtype):
        raise ValueError(
            "relay.transform.ToMixedPrecision: only IEEE floating point types and bfloat16 are "
            f"mixed precision types, got {dtype!r}"
        )

    def rewrite(func: Function) -> Function:
        out: Function = to_mixed_precision(func, dtype, missing_op_mode)
        return out

    return graph_pass("ToMixedPrecision", 0, rewrite)
