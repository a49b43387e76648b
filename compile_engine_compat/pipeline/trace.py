"""Trace a whole Relax function into one TE graph.

Each Relax op is lowered through its own registered legalization (the ``FLegalize`` op attribute),
exactly as ``relax.transform.LegalizeOps`` would, except that the TE compute each legalization
builds through ``BlockBuilder.call_te`` is captured and composed with its neighbours instead of
being wrapped into a separate PrimFunc. The result is one DAG of ``te.Tensor``: placeholders for
the parameters, compute/extern tensors for the outputs.

Why a class-level hook on ``BlockBuilder.call_te``: legalizations are FFI functions; the block
builder they receive is re-wrapped on the Python side as a plain ``BlockBuilder``, so neither a
subclass nor an instance attribute survives the crossing. The hook is inert (it forwards to the
original) unless the *current thread* is tracing, so ordinary ``LegalizeOps``/``tvm.compile`` in
the same process behave exactly as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import tvm
import tvm_ffi
from tvm import relax, te, tirx

from compile_engine_compat.boundary import dataflow_block, patched
from compile_engine_compat.pipeline.op_sources import FALLBACK_LOWERINGS, REJECTED_OPS

__all__ = [
    "TRACE_LOCK",
    "Scheduled",
    "TracedFunction",
    "UnsupportedConstructError",
    "UserSchedule",
    "op_names",
    "source_function",
    "trace",
]


class UnsupportedConstructError(TypeError):
    """The Relax function holds something that has no tensor-level TE form."""


TEValue = Any  # a te.Tensor, a PrimExpr, or a (nested) list of them

# -- the call_te hook ---------------------------------------------------------------------------

_tls = threading.local()

#: Guards everything in TVM that is not thread-safe: Relax BlockBuilder's process-wide scope stack
#: and topi's process-global tag scope (both used while tracing). Re-entrant, so callers may hold
#: it around a trace to make "look up, else trace and insert" atomic.
TRACE_LOCK = threading.RLock()
_original_call_te = relax.BlockBuilder.call_te


def _call_te_hook(self: relax.BlockBuilder, func: Callable[..., Any], *args: Any, **kwargs: Any):
    tracer = getattr(_tls, "tracer", None)
    if tracer is None:
        return _original_call_te(self, func, *args, **kwargs)
    return tracer.call_te(self, func, *args, **kwargs)


@contextlib.contextmanager
def _tracing(tracer: _Tracer, params: list[relax.Var]) -> Iterator[relax.BlockBuilder]:
    """A BlockBuilder scope over ``params`` whose ``call_te`` calls reach ``tracer``.

    The class-level hook is set only while a trace runs (the boundary module's ``patched``):
    outside the shim's own traces, ``BlockBuilder.call_te`` is TVM's. Another thread's
    ``call_te`` meanwhile reaches the original through the hook (the tracer is per thread).
    """
    bb = relax.BlockBuilder()
    bb.begin_scope(params)
    previous = getattr(_tls, "tracer", None)
    _tls.tracer = tracer
    try:
        with patched(relax.BlockBuilder, "call_te", _call_te_hook), dataflow_block(bb):
            yield bb
    finally:
        _tls.tracer = previous
        bb.end_scope()


# -- results ------------------------------------------------------------------------------------


@dataclass
class TracedFunction:
    """One Relax function as one TE graph.

    Attributes
    ----------
    inputs : list of te.Tensor
        One placeholder per flattened tensor parameter, in parameter order.
    constants : list of (te.Tensor, tvm.runtime.Tensor)
        Placeholders standing for non-scalar constants, with the values to bind to them.
    outputs : list of te.Tensor
        The flattened outputs of the function body (may include placeholders and repeats;
        see :func:`.lower.distinct_outputs`).
    schedules : list of (callable, list of te.Operation)
        The schedules user implementations brought, each with the TE ops it made: they travel
        with the traced function to the schedule stage (:func:`.schedule.user_schedules`).
    """

    inputs: list[te.Tensor]
    constants: list[tuple[te.Tensor, Any]] = field(default_factory=list)
    outputs: list[te.Tensor] = field(default_factory=list)
    schedules: list[tuple[UserSchedule, list[Any]]] = field(default_factory=list)


#: A user implementation's schedule: ``schedule(sch, block_names)`` on the function's schedule.
UserSchedule = Callable[[Any, list[str]], None]


@dataclass(frozen=True)
class Scheduled:
    """What an op lowering returns for TE that comes with its own schedule.

    The tracer records ``schedule`` with the ops of ``value`` in the traced function and carries
    on with ``value``.
    """

    value: TEValue
    schedule: UserSchedule


#: A per-op lowering: (call, te_args, default) -> TE value, or a :class:`Scheduled` one.
#: ``default`` lowers through the op's legalization or fallback.
OpLowering = Callable[[Any, list[TEValue], Callable[[], TEValue]], Any]


class _Tracer:
    def __init__(self, op_lowering: OpLowering | None) -> None:
        self.env: dict[Any, TEValue] = {}
        self.constants: list[tuple[te.Tensor, Any]] = []
        self._const_memo: dict[Any, te.Tensor] = {}
        self._op_lowering = op_lowering
        self.schedules: list[tuple[UserSchedule, list[Any]]] = []

    # called by the hook, inside a legalization
    def call_te(self, bb: relax.BlockBuilder, func: Callable[..., Any], *args: Any, **kwargs: Any):
        for reserved in ("primfunc_name_hint", "primfunc_attrs", "ty_args"):
            kwargs.pop(reserved, None)
        te_args = [self.to_te(bb, a) for a in args]
        te_kwargs = {k: self.to_te(bb, v) for k, v in kwargs.items()}
        result = func(*te_args, **te_kwargs)
        if isinstance(result, list | tuple | tvm_ffi.Array) and len(result) == 1:
            # As relax's call_te: a one-tensor list is typed as that tensor (split into 1).
            result = result[0]
        return self._placeholder_var(result)

    def _placeholder_var(self, value: TEValue) -> relax.Var:
        var = relax.Var("traced", _relax_type(value))
        self.env[var] = value
        return var

    def to_te(self, bb: relax.BlockBuilder, arg: Any) -> Any:
        if isinstance(arg, list | tuple | tvm_ffi.Array):
            return [self.to_te(bb, a) for a in arg]
        if isinstance(arg, tvm_ffi.Map | dict):
            return {k: self.to_te(bb, v) for k, v in arg.items()}
        if isinstance(arg, tvm.ir.Expr) and not tvm.ir.is_prim_expr(arg):
            return self.eval(bb, arg)
        return arg

    def eval(self, bb: relax.BlockBuilder, expr: Any) -> TEValue:
        if isinstance(expr, relax.Var):
            if expr in self.env:
                return self.env[expr]
            bound = bb.lookup_binding(expr)
            if bound is None:
                raise UnsupportedConstructError(f"free variable {expr.name!r} in the function body")
            value = self.eval(bb, bound)
            self.env[expr] = value
            return value
        if isinstance(expr, relax.Tuple):
            return [self.eval(bb, f) for f in expr.fields]
        if isinstance(expr, relax.TupleGetItem):
            return self.eval(bb, expr.tuple_value)[int(expr.index)]
        if isinstance(expr, relax.ShapeExpr):
            return list(expr.values)
        if tvm.ir.is_prim_expr(expr):  # R.prim_value(...) is a plain PrimExpr now
            return expr
        if isinstance(expr, tvm.ir.GenericConst):
            return self._constant(expr)
        if isinstance(expr, tvm.ir.Call):
            return self._call(bb, expr)
        raise UnsupportedConstructError(f"{type(expr).__name__} is not supported: {_short(expr)}")

    def _constant(self, const: Any) -> te.Tensor:
        if const in self._const_memo:
            return self._const_memo[const]
        value = const.value
        dtype = str(value.dtype)
        if len(value.shape) == 0:
            scalar = value.numpy().item()
            tensor = te.compute((), lambda: tirx.const(scalar, dtype), name="compile_engine_const")
        else:
            # int64 dims, as Relax types them: ops such as topi.argmax derive their output
            # dtype from the index dtype, so int32 dims would change the result's dtype.
            shape = [tirx.IntImm("int64", int(d)) for d in value.shape]
            tensor = te.placeholder(shape, dtype, name=f"const{len(self.constants)}")
            self.constants.append((tensor, value))
        self._const_memo[const] = tensor
        return tensor

    def _call(self, bb: relax.BlockBuilder, call: Any) -> TEValue:
        op = call.op
        if not isinstance(op, tvm.ir.Op):
            raise UnsupportedConstructError(
                f"a call to {type(op).__name__} {_short(op)} "
                "(only calls to Relax ops are supported)"
            )
        name = op.name
        if name in REJECTED_OPS:
            raise UnsupportedConstructError(f"{REJECTED_OPS[name]} is not supported")

        def default() -> TEValue:
            return self._legalize(bb, call)

        if self._op_lowering is None:
            return default()
        te_args = [self.eval(bb, a) for a in call.args]
        result = self._op_lowering(call, te_args, default)
        if isinstance(result, Scheduled):
            self.schedules.append((result.schedule, [t.op for t in flatten(result.value)]))
            return result.value
        return result

    def _legalize(self, bb: relax.BlockBuilder, call: Any) -> TEValue:
        name = call.op.name
        fallback = FALLBACK_LOWERINGS.get(name)
        if fallback is not None:
            return fallback(call, [self.eval(bb, a) for a in call.args])
        legalize = call.op.get_attr("FLegalize")
        if legalize is None:
            raise UnsupportedConstructError(
                f"op {name} has no legalization (FLegalize) and no TE fallback"
            )
        if call.ty is None:
            call = bb.normalize(call)
        lowered = legalize(bb, call)
        if lowered.same_as(call):
            raise UnsupportedConstructError(f"op {name} was left unchanged by its legalization")
        if isinstance(lowered, tvm.ir.Call) and getattr(lowered.op, "name", "") in REJECTED_OPS:
            raise UnsupportedConstructError(
                f"op {name} legalizes to a prebuilt kernel ({lowered.op.name}), not to a TE "
                "compute that can be composed into one PrimFunc"
            )
        return _as_relax_dtype(self.eval(bb, lowered), call.ty)


def _as_relax_dtype(value: TEValue, ty: Any) -> TEValue:
    """Cast a traced value to the dtype Relax types the call with.

    Some topi kernels take their result dtype from the index dtype of their input's shape
    (argmax/argmin: int32 dims give int32). Composed, an input's dims can be int32 where the new
    path hands the kernel an int64-shaped buffer, so the result dtype would differ.
    """
    if isinstance(ty, relax.TupleType) and isinstance(value, list):
        return [_as_relax_dtype(v, t) for v, t in zip(value, ty.fields)]
    if not isinstance(ty, relax.TensorType) or not isinstance(value, te.Tensor):
        return value
    dtype = str(ty.dtype)
    if not dtype or dtype == "void" or str(value.dtype) == dtype:
        return value
    return te.compute(
        value.shape, lambda *i: value(*i).astype(dtype), name=f"{value.op.name}_{dtype}"
    )


def _relax_type(value: TEValue) -> Any:
    if isinstance(value, te.Tensor):
        return relax.TensorType(list(value.shape), value.dtype)
    if isinstance(value, list | tuple | tvm_ffi.Array):
        return relax.TupleType([_relax_type(v) for v in value])
    raise UnsupportedConstructError(f"a TE compute returned {type(value).__name__}, not tensors")


def _short(obj: Any, limit: int = 120) -> str:
    text = str(obj).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- entry points -------------------------------------------------------------------------------


def as_relax_source(source: Any) -> Any:
    """Convert an object that knows its Relax form (``__relax_function__``); pass others through.

    Front ends that build functions in another spelling (the Relay-style builder) implement
    ``__relax_function__(self) -> relax.Function | IRModule``, so that every entry point that
    takes a source function takes theirs too, through this one place.
    """
    convert = getattr(type(source), "__relax_function__", None)
    return source if convert is None else convert(source)


def source_function(source: Any) -> relax.Function:
    """Return the Relax function to lower from a function or an IRModule.

    Parameters
    ----------
    source : relax.Function or tvm.IRModule
        An IRModule yields its ``main`` function, or its only Relax function. An object with
        ``__relax_function__`` is converted first (:func:`as_relax_source`).

    Returns
    -------
    relax.Function

    Raises
    ------
    TypeError
        If ``source`` is neither, or the module has no single Relax function to pick.
    """
    if isinstance(source, relax.Function):
        return source
    source = as_relax_source(source)
    if isinstance(source, relax.Function):
        return source
    if isinstance(source, tvm.IRModule):
        funcs = {gv.name_hint: f for gv, f in source.functions.items()}
        relax_funcs = {n: f for n, f in funcs.items() if isinstance(f, relax.Function)}
        if "main" in relax_funcs:
            return relax_funcs["main"]
        if len(relax_funcs) == 1:
            return next(iter(relax_funcs.values()))
        raise TypeError(
            "the IRModule must hold a Relax function named 'main' or exactly one Relax function; "
            f"it holds {sorted(relax_funcs) or 'none'}"
        )
    raise TypeError(
        f"expected a tvm.relax.Function or a tvm.IRModule, got {type(source).__module__}."
        f"{type(source).__qualname__}"
    )


def _param_placeholders(param: relax.Var) -> TEValue:
    def make(ty: Any, name: str) -> TEValue:
        if isinstance(ty, relax.TensorType):
            if ty.shape is None or not isinstance(ty.shape, relax.ShapeExpr):
                raise UnsupportedConstructError(
                    f"parameter {name!r} has unknown rank or shape ({ty}); give it a shape"
                )
            if not ty.dtype:
                raise UnsupportedConstructError(f"parameter {name!r} has no dtype")
            return te.placeholder(list(ty.shape.values), ty.dtype, name=name)
        if isinstance(ty, relax.TupleType):
            return [make(f, f"{name}_{i}") for i, f in enumerate(ty.fields)]
        raise UnsupportedConstructError(
            f"parameter {name!r} of type {ty} is not a tensor or a tuple of tensors"
        )

    return make(param.ty, param.name)


def flatten(value: TEValue) -> list[Any]:
    """Flatten nested lists of TE values, depth-first."""
    # topi returns some multi-output results (split) as an FFI Array, not a Python list.
    if isinstance(value, list | tuple | tvm_ffi.Array):
        return [leaf for item in value for leaf in flatten(item)]
    return [value]


def trace(source: Any, op_lowering: OpLowering | None = None) -> TracedFunction:
    """Trace a Relax function into one TE graph.

    Parameters
    ----------
    source : relax.Function or tvm.IRModule
        A normalized Relax function (as built by BlockBuilder or TVMScript).
    op_lowering : callable, optional
        Called for every op call as ``op_lowering(call, te_args, default)``; returns the op's TE
        outputs. ``default()`` lowers through the op's legalization. Used by the strategy
        registry and by a user's ``relay.backend.lower_call`` override.

    Returns
    -------
    TracedFunction

    Raises
    ------
    UnsupportedConstructError
        For MatchCast bindings, control flow, nested functions, non-tensor parameters,
        already-lowered calls (``call_tir``, ``call_dps_packed``) and ops with no TE form.
    """
    with TRACE_LOCK:
        return _trace_locked(source_function(source), op_lowering)


def _trace_locked(func: relax.Function, op_lowering: OpLowering | None) -> TracedFunction:
    if not isinstance(func.body, relax.SeqExpr):
        func = relax.transform.Normalize()(tvm.IRModule({"main": func}))["main"]
    tracer = _Tracer(op_lowering)
    per_param = [_param_placeholders(p) for p in func.params]
    for param, placeholders in zip(func.params, per_param):
        tracer.env[param] = placeholders
    with _tracing(tracer, list(func.params)) as bb:
        for block in func.body.blocks:
            for binding in block.bindings:
                if isinstance(binding, relax.MatchCast):
                    raise UnsupportedConstructError(
                        f"MatchCast is not supported (binding of {binding.var.name!r}); "
                        "declare the shape on the parameter instead"
                    )
                if isinstance(binding.value, relax.If | relax.Function):
                    kind = (
                        "control flow (relax.If)"
                        if isinstance(binding.value, relax.If)
                        else ("a nested function")
                    )
                    raise UnsupportedConstructError(
                        f"{kind} is not supported (binding of {binding.var.name!r})"
                    )
                tracer.env[binding.var] = tracer.eval(bb, binding.value)
                bb.emit_normalized(binding)
        result = tracer.eval(bb, func.body.body)
    outputs = flatten(result)
    for out in outputs:
        if not isinstance(out, te.Tensor):
            raise UnsupportedConstructError(
                f"the function returns a {type(out).__name__}, not a tensor: {_short(out)}"
            )
    return TracedFunction(flatten(per_param), tracer.constants, outputs, tracer.schedules)


def op_names(source: Any) -> list[str]:
    """Return the names of the ops the function calls, in post-order, without ``relax.``.

    This is the legacy naming input: ``fused_`` + ``_``.join(names).
    """
    func = source_function(source)
    names: list[str] = []

    def visit(expr: Any) -> None:
        if isinstance(expr, tvm.ir.Call):
            for arg in expr.args:
                visit(arg)
            if isinstance(expr.op, tvm.ir.Op):
                names.append(expr.op.name.removeprefix("relax."))
        elif isinstance(expr, relax.Tuple):
            for f in expr.fields:
                visit(f)
        elif isinstance(expr, relax.TupleGetItem):
            visit(expr.tuple_value)
        elif isinstance(expr, relax.SeqExpr):
            for block in expr.blocks:
                for binding in block.bindings:
                    visit(binding.value)
            visit(expr.body)

    visit(func.body)
    return names


def trace_op(
    op: Any,
    attrs: Any,
    inputs: Sequence[te.Tensor],
    out_type: Any = None,
) -> list[te.Tensor]:
    """Lower one op applied to TE tensors through its legalization (the default strategy).

    Parameters
    ----------
    op : tvm.ir.Op or str
        The Relax op (``"relax.nn.conv2d"`` or ``"nn.conv2d"``).
    attrs : tvm.ir.Attrs or None
        The op's attributes.
    inputs : sequence of te.Tensor
        Its tensor arguments.
    out_type : relax type, optional
        Unused: output types are inferred from the inputs.

    Returns
    -------
    list of te.Tensor
    """
    with TRACE_LOCK:
        return _trace_op_locked(op, attrs, inputs)


def _trace_op_locked(op: Any, attrs: Any, inputs: Sequence[te.Tensor]) -> list[te.Tensor]:
    if isinstance(op, str):
        op = tvm.ir.Op.get(op if op.startswith("relax.") else f"relax.{op}")
    params = [
        relax.Var(f"arg{i}", relax.TensorType(list(t.shape), t.dtype)) for i, t in enumerate(inputs)
    ]
    call = tvm.ir.Call(op, params, attrs)
    tracer = _Tracer(None)
    for param, tensor in zip(params, inputs):
        tracer.env[param] = tensor
    with _tracing(tracer, params) as bb:
        call = bb.normalize(call)
        result = tracer._legalize(bb, call)
    return flatten(result)
