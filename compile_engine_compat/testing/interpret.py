"""Run a Relax function on NumPy arrays with the op specs' references, tracking exactness.

Every value carries a status:

``EXACT``
    Bit-identical in any correct implementation: parameters, constants, and integer/bool ops
    on exact values.
``APPROX``
    A float computed by some op: TVM and NumPy may differ by rounding (compared with tolerance).
``FRAGILE``
    Depends *discontinuously* on an ``APPROX`` value: a comparison, ``floor``, ``argmax``, a
    float-to-int cast... of a rounded intermediate. One ulp flips it (``tanh(x) == x`` in
    float16), so NumPy cannot judge it; the oracle still requires the two TVM paths to agree
    bit for bit there. So is an ill-conditioned result (the spec's ``ill_conditioned``: a norm
    over nearly equal values, whose float32 variance cancels). Everything computed from a
    fragile value is fragile.

Each op's reference and whether it is discontinuous come from its spec
(:func:`compile_engine_compat.testing.op_plans.spec_for`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax, tirx

from compile_engine_compat.pipeline.trace import flatten, source_function
from compile_engine_compat.testing.op_plans import OpSpec, spec_for

__all__ = ["APPROX", "EXACT", "FRAGILE", "interpret"]

EXACT, APPROX, FRAGILE = 0, 1, 2


class _NoReference(Exception):
    pass


def interpret(func: Any, arrays: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[int]] | None:
    """Return the flat outputs of ``func`` on ``arrays`` and each output's status.

    None when some op has no NumPy reference (or the function has a construct it cannot run).
    """
    func = source_function(func)
    from tvm.sym import Analyzer

    analyzer = Analyzer()
    env: dict[Any, tuple[Any, Any]] = {}
    for param, array in zip(func.params, arrays):
        env[param] = (np.asarray(array), EXACT)
        for dim, size in zip(param.ty.shape.values, np.shape(array)):
            if isinstance(dim, tirx.Var):
                analyzer.bind(dim, tirx.IntImm("int64", size))
    try:
        for block in func.body.blocks:
            for binding in block.bindings:
                if isinstance(binding, relax.MatchCast):
                    return None
                env[binding.var] = _eval(binding.value, env, analyzer)
        value, status = _eval(func.body.body, env, analyzer)
    except _NoReference:
        return None
    values = [np.asarray(v) for v in flatten(value)]
    statuses = flatten(status)
    if len(statuses) != len(values):  # a tuple value with one status: spread it
        statuses = [max(flatten(status))] * len(values)
    return values, statuses


def _eval(expr: Any, env: dict[Any, tuple[Any, Any]], analyzer: Any) -> tuple[Any, Any]:
    if isinstance(expr, relax.Var):
        return env[expr]
    if isinstance(expr, relax.Tuple):
        pairs = [_eval(f, env, analyzer) for f in expr.fields]
        return [p[0] for p in pairs], [p[1] for p in pairs]
    if isinstance(expr, relax.TupleGetItem):
        value, status = _eval(expr.tuple_value, env, analyzer)
        index = int(expr.index)
        return value[index], status[index] if isinstance(status, list) else status
    if isinstance(expr, relax.ShapeExpr):
        return [int(analyzer.simplify(v)) for v in expr.values], EXACT
    if isinstance(expr, tvm.ir.GenericConst):
        return expr.value.numpy(), EXACT
    if tvm.ir.is_prim_expr(expr):
        return expr.value, EXACT
    if isinstance(expr, tvm.ir.Call) and isinstance(expr.op, tvm.ir.Op):
        return _call(expr, env, analyzer)
    raise _NoReference(type(expr).__name__)


def _call(call: Any, env: dict[Any, tuple[Any, Any]], analyzer: Any) -> tuple[Any, Any]:
    name = call.op.name
    pairs = [_eval(a, env, analyzer) for a in call.args]
    wide = [_widen(p[0]) for p in pairs]
    spec = spec_for(name)
    if spec is None:
        raise _NoReference(name)
    if spec.shaped_reference is not None:
        shape = tuple(int(analyzer.simplify(d)) for d in call.ty.shape.values)
        result = spec.shaped_reference(shape, wide[0])
    else:
        assert spec.reference is not None  # an OpSpec holds one of the two
        with np.errstate(all="ignore"):
            result = spec.reference(call, *wide)
    if result is None:
        raise _NoReference(name)
    value = _cast(result, call.ty)
    if spec.ill_conditioned is not None and spec.ill_conditioned(call, *wide):
        return value, FRAGILE
    return value, _status(spec, [p[1] for p in pairs], value)


def _status(spec: OpSpec, inputs: list[Any], value: Any) -> int:
    worst = max((s for i in inputs for s in flatten(i)), default=EXACT)
    if worst == FRAGILE or (worst == APPROX and spec.discontinuous):
        return FRAGILE
    outputs = flatten(value) if isinstance(value, list) else [value]
    return APPROX if any(np.asarray(o).dtype.kind == "f" for o in outputs) else worst


def _widen(value: Any) -> Any:
    if isinstance(value, list):
        return [_widen(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    return value


def _cast(value: Any, ty: Any) -> Any:
    if isinstance(ty, relax.TupleType):
        return [_cast(v, t) for v, t in zip(value, ty.fields)]
    if isinstance(value, list) and len(value) == 1:  # Relax types a one-piece split as a tensor
        value = value[0]
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(str(ty.dtype))
