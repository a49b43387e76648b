"""A Relay function marked ``Primitive`` as one kernel, as TVM 0.19's ``FuseOps`` kept it.

TVM 0.19 fused operators into functions marked ``Primitive=1`` and left a function already so
marked alone: its body became one kernel (one ``auto_scheduler`` task), whatever ops it held.
Relax's ``FuseOps`` would split the inlined body again by its own rules (two convolutions are
two kernels). So a call of a ``Primitive`` function literal is emitted as one ``call_tir`` of
the PrimFunc the shim's kernel path makes of the whole function (trace to one TE graph, inline
the injective stages, ``te.create_prim_func``), marked opaque so that Relax fuses nothing into
it. A function that path cannot take (tuples among its parameters or results, dynamic shapes,
ops served as already-lowered calls) is inlined as any called function literal is.
"""

from __future__ import annotations

import weakref
from typing import Any

from tvm import relax, tirx

from compile_engine_compat.pipeline import fuse, lower, trace

__all__ = ["is_primitive", "primitive_call"]

#: Relax's ``OpPatternKind`` of a kernel nothing is fused with (``kOpaque``).
_OPAQUE = 8


def is_primitive(func: Any) -> bool:
    """Whether the Relay function literal ``func`` is marked ``Primitive`` (nonzero) and is not
    for an external compiler (``Compiler``: its codegen, not a kernel of the shim's, runs it)."""
    attrs = getattr(func, "attrs", None)
    if not isinstance(attrs, dict) or attrs.get("Compiler") is not None:
        return False
    # Only parameters typed as tensors of static shapes (others are inlined without converting
    # the function on its own first).
    for param in getattr(func, "params", ()):
        ty = param.type_annotation or param._checked_type
        shape = getattr(ty, "shape", None)
        if shape is None or not all(isinstance(d, int | tirx.IntImm) for d in shape):
            return False
    value = attrs.get("Primitive")
    try:
        return value is not None and int(value) != 0
    except (TypeError, ValueError):
        return False


def primitive_call(bb: relax.BlockBuilder, relax_func: relax.Function, args: list[Any],
                   name: str) -> Any | None:  # fmt: skip
    """One ``call_tir`` of ``relax_func`` (the Relax form of a ``Primitive`` function) applied
    to ``args``, or None where the kernel path cannot make it one kernel (then inline it).

    Parameters
    ----------
    bb : relax.BlockBuilder
        The builder of the calling function (the kernel is added to its module).
    relax_func : relax.Function
        The called function, converted.
    args : list of relax.Expr
        The call's arguments, one tensor per parameter.
    name : str
        The kernel's name hint.
    """
    # The kernel is made once per Relax function (a program converted again, as type
    # inference does after a failure, or a function called many times, reuses it).
    made = _KERNELS.get(relax_func)
    if made is None:
        made = _KERNELS[relax_func] = _kernel(relax_func, name)
    if made is False:
        return None
    prim_func, constants, out_sinfo = made
    gvar = bb.add_func(prim_func, name)
    operands = list(args) + [relax.const(value) for value in constants]
    single = isinstance(relax_func.body.ty, relax.TensorType)
    return relax.call_tir(gvar, operands, out_sinfo[0] if single else out_sinfo)


#: Relax function -> (PrimFunc, constant values, output types), or False: not one kernel.
_KERNELS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _kernel(relax_func: relax.Function, name: str) -> Any:
    """The one kernel of ``relax_func`` (see :func:`primitive_call`), or False."""
    tensors = all(isinstance(p.ty, relax.TensorType) for p in relax_func.params)
    if not tensors or not _all_static_tensors([*relax_func.params, relax_func.body]):
        return False
    try:
        traced = trace.trace(relax_func)
    except Exception:  # call_tir inside, control flow...: inlined instead
        return False
    arguments = traced.inputs + [placeholder for placeholder, _ in traced.constants]
    outputs = lower.distinct_outputs(arguments, traced.outputs)
    prim_func = lower.to_prim_func(arguments, fuse.fuse_injective(outputs), name)
    prim_func = prim_func.without_attr("global_symbol").with_attr("op_pattern", _OPAQUE)
    out_sinfo = [relax.TensorType(list(o.shape), o.dtype) for o in outputs]
    return prim_func, [value for _, value in traced.constants], out_sinfo


def _all_static_tensors(exprs: list[Any]) -> bool:
    """Whether each expression is a tensor of a static shape, or a flat tuple of them."""
    for expr in exprs:
        info = expr.ty
        fields = info.fields if isinstance(info, relax.TupleType) else [info]
        for field in fields:
            if not isinstance(field, relax.TensorType) or field.shape is None:
                return False
            if not all(isinstance(d, tirx.IntImm) for d in field.shape.values):
                return False
    return True
