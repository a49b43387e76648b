"""``relay.transform.gradient`` and ``relay.testing.check_grad``, over ``relax.transform.Gradient``.

Relay's ``gradient(func)`` returned a function of the same parameters giving
``(func's output, (d sum(output) / d param, ...))``: the gradient of the sum of the outputs, as if
seeded with ones. Here the forward function becomes Relax, a scalar ``sum`` of its outputs is
added as the differentiation target, ``relax.transform.Gradient`` builds the adjoint, and its
result is rearranged into Relay's ``(output, grads)``. Ops Relax has no gradient for are refused at
the ``gradient`` call, naming TVM's reason.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat.boundary import register_op_attr_if_absent
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import TensorType, from_struct_info

__all__ = [
    "ELEMENTWISE_DERIVATIVES",
    "GradientFunction",
    "check_grad",
    "gradient",
    "register_elementwise_gradients",
]


def _squared(x: Any) -> Any:
    return relax.op.multiply(x, x)


def _one(x: Any) -> Any:
    return relax.const(1.0, x.ty.dtype)


def _half_of(x: Any, op: Any) -> Any:
    """``(exp(x) op exp(-x)) / 2``: ``cosh`` with ``add``, ``sinh`` with ``subtract``."""
    both = op(relax.op.exp(x), relax.op.exp(relax.op.negative(x)))
    return relax.op.multiply(relax.const(0.5, x.ty.dtype), both)


#: Relax op -> ``d op(x) / dx`` as a Relax expression of ``x``: the elementwise ops whose
#: gradient Relay had and TVM 0.27's Relax leaves out.
ELEMENTWISE_DERIVATIVES: dict[str, Any] = {
    "relax.erf": lambda x: relax.op.multiply(
        relax.const(2.0 / np.sqrt(np.pi), x.ty.dtype), relax.op.exp(relax.op.negative(_squared(x)))
    ),
    "relax.tan": lambda x: relax.op.divide(_one(x), _squared(relax.op.cos(x))),
    "relax.atan": lambda x: relax.op.divide(_one(x), relax.op.add(_one(x), _squared(x))),
    # (exp compositions: TVM 0.27's LLVM codegen has no tirx.sinh/cosh intrinsic)
    "relax.sinh": lambda x: _half_of(x, relax.op.add),
    "relax.cosh": lambda x: _half_of(x, relax.op.subtract),
    "relax.asin": lambda x: relax.op.rsqrt(relax.op.subtract(_one(x), _squared(x))),
    "relax.acos": lambda x: relax.op.negative(
        relax.op.rsqrt(relax.op.subtract(_one(x), _squared(x)))
    ),
    "relax.asinh": lambda x: relax.op.rsqrt(relax.op.add(_squared(x), _one(x))),
    "relax.acosh": lambda x: relax.op.rsqrt(relax.op.subtract(_squared(x), _one(x))),
    "relax.atanh": lambda x: relax.op.divide(_one(x), relax.op.subtract(_one(x), _squared(x))),
}


def _chain_rule(derivative: Any) -> Any:
    """An ``FPrimalGradient``: ``output_grad * derivative(x)``."""

    def grad(orig_var: Any, orig_call: Any, output_grad: Any, ctx: Any) -> list[Any]:
        return [relax.op.multiply(output_grad, derivative(orig_call.args[0]))]

    return grad


@functools.cache
def register_elementwise_gradients() -> tuple[str, ...]:
    """Give Relax the gradients of :data:`ELEMENTWISE_DERIVATIVES` where TVM has none (once).

    Returns the ops this call registered.
    """
    return tuple(
        name
        for name, derivative in ELEMENTWISE_DERIVATIVES.items()
        if register_op_attr_if_absent(name, "FPrimalGradient", _chain_rule(derivative))
    )


def _tuple_bound(bb: relax.BlockBuilder, binding: Any) -> Any:
    """``binding`` with the tuple it reads a field of bound to a variable first (Relax's
    ``Gradient`` reads fields of variables only)."""
    value = getattr(binding, "value", None)
    if isinstance(value, relax.TupleGetItem) and not isinstance(value.tuple_value, relax.Var):
        field = relax.TupleGetItem(bb.emit(value.tuple_value), value.index)
        return relax.VarBinding(binding.var, field)
    return binding


def _loss_module(forward: relax.Function) -> tvm.IRModule:
    """``forward`` returning ``(sum of its outputs, its output)``: the scalar target first."""
    bb = relax.BlockBuilder()
    with bb.function("main", list(forward.params)):
        with bb.dataflow():
            for block in forward.body.blocks:
                for binding in block.bindings:
                    bb.emit_normalized(_tuple_bound(bb, binding))
            out = forward.body.body
            if not isinstance(out, relax.Var):
                # Relax's Gradient reads tuple fields of variables only.
                out = bb.emit(out)
            ty = out.ty
            if isinstance(ty, relax.TupleType):
                parts = [
                    bb.emit(relax.op.sum(relax.TupleGetItem(out, i))) for i in range(len(ty.fields))
                ]
                total = parts[0]
                for part in parts[1:]:
                    total = bb.emit(relax.op.add(total, part))
                loss = bb.emit_output(total)
            else:
                loss = bb.emit_output(relax.op.sum(out))
        bb.emit_func_output(relax.Tuple([loss, out]))
    return bb.get()


def _output_and_grads(adjoint: relax.Function) -> relax.Function:
    """The adjoint ``((loss, output), grads)`` rearranged as Relay's ``(output, grads)``."""
    seq = adjoint.body
    result = seq.body
    ty = result.ty
    body = relax.Tuple(
        [relax.TupleGetItem(relax.TupleGetItem(result, 0), 1), relax.TupleGetItem(result, 1)]
    )
    ret = relax.TupleType([ty.fields[0].fields[1], ty.fields[1]])
    func = relax.Function(adjoint.params, relax.SeqExpr(seq.blocks, body), ret)
    return relax.transform.Normalize()(tvm.IRModule({"main": func}))["main"]


class GradientFunction(Function):
    """What :func:`gradient` returns: a Relay function of the forward function's parameters whose
    Relax form computes ``(output, (grad of each parameter))``."""

    def __init__(self, forward: Function, relax_function: relax.Function) -> None:
        super().__init__(forward.params, forward.body)
        self._relax = relax_function
        # Typed as inference would type it: (output, (grads)) of the forward's parameters.
        self._checked_type = from_struct_info(relax_function.ty)

    def __relax_function__(self) -> relax.Function:
        return self._relax


def gradient(expr: Any, mod: Any = None, mode: str = "higher_order") -> GradientFunction:
    """``relay.transform.gradient(func)``: the function giving ``(output, grads)``.

    Parameters
    ----------
    expr : relay.Function
        The forward function; every parameter gets a gradient.
    mod : ignored
        Relay's module of global functions (a Relax gradient needs none).
    mode : {"higher_order", "first_order"}
        Both give the same first-order gradients here.

    Raises
    ------
    UnsupportedRelayError
        For an op ``relax.transform.Gradient`` cannot differentiate, or integer parameters.
    """
    del mod
    if mode not in ("higher_order", "first_order"):
        raise ValueError(f"gradient mode must be 'higher_order' or 'first_order', got {mode!r}")
    if not isinstance(expr, Function):
        # mod["main"] after a Relay pass: the Relax form of a Relay function, read back as it.
        expr = origin.relay_of(expr) or expr
    if not isinstance(expr, Function):
        raise TypeError(f"relay.transform.gradient takes a relay.Function, got {expr!r}")
    register_elementwise_gradients()
    loss = _loss_module(expr.__relax_function__())
    try:
        adjoint = relax.transform.Gradient("main", target_index=0)(loss)["main_adjoint"]
    except Exception as err:  # TVM's reason: an op without a gradient, an integer input...
        raise UnsupportedRelayError(
            f"relay.transform.gradient: relax.transform.Gradient cannot differentiate this "
            f"function ({str(err).splitlines()[-1]}); write the backward pass by hand, or "
            "differentiate in the source framework"
        ) from err
    return GradientFunction(expr, _output_and_grads(adjoint))


def _random_input(ty: Any, scale: float, mean: float, rng: np.random.Generator) -> np.ndarray:
    if not isinstance(ty, TensorType):
        raise TypeError(f"check_grad makes random inputs for tensors only, got {ty!r}")
    return (rng.standard_normal(ty.concrete_shape) * scale + mean).astype(ty.dtype)


def check_grad(
    func: Function,
    inputs: Sequence[np.ndarray] | None = None,
    test_inputs: Sequence[np.ndarray] | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    scale: float | None = None,
    mean: float = 0,
    mode: str = "higher_order",
    target_devices: Sequence[tuple[Any, Any]] | None = None,
    executor_kind: str = "debug",
) -> None:
    """``relay.testing.check_grad``: :func:`gradient` against two-sided finite differences.

    The numerical gradient of ``sum(func(*inputs))`` is taken element by element (each input
    moved by ``+-eps``), as Relay's was; ``assert_allclose`` compares them. Arguments as in
    Relay; ``target_devices`` defaults to ``tvm.testing.enabled_targets()``.
    """
    from compile_engine_compat.relay._impl.to_relax import infer
    from compile_engine_compat.relay.build_module import create_executor

    infer(func)
    backward = gradient(func, mode=mode)
    scale = 10 * eps if scale is None else scale
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = [_random_input(p.checked_type, scale, mean, rng) for p in func.params]
    inputs = list(inputs)
    tested = list(test_inputs) if test_inputs is not None else list(inputs)
    if target_devices is None:
        import tvm.testing

        target_devices = tvm.testing.enabled_targets()
    for target, dev in target_devices:
        run_backward = create_executor(executor_kind, device=dev, target=target).evaluate(backward)
        run_forward = create_executor(executor_kind, device=dev, target=target).evaluate(func)
        _, grads = run_backward(*inputs)
        by_input = {id(x): g.numpy().astype("float64") for x, g in zip(inputs, grads)}
        missing = [i for i, x in enumerate(tested) if id(x) not in by_input]
        if missing:
            raise ValueError(f"test_inputs {missing} are not among inputs (compared by identity)")
        if not tested:
            raise ValueError("check_grad needs at least one input to test")
        for x in tested:
            numeric = np.zeros(x.shape)
            for index in np.ndindex(*x.shape):
                saved = x[index]
                x[index] = saved + eps
                plus = _as_float64_sum(run_forward(*inputs))
                x[index] = saved - eps
                minus = _as_float64_sum(run_forward(*inputs))
                x[index] = saved
                numeric[index] = (plus - minus) / (2 * eps)
            np.testing.assert_allclose(by_input[id(x)], numeric, atol=atol, rtol=rtol)


def _as_float64_sum(value: Any) -> float:
    """The sum of a result's elements (a tensor or a tuple of them), in float64."""
    if hasattr(value, "numpy"):
        return float(np.sum(value.numpy().astype("float64")))
    return float(sum(_as_float64_sum(v) for v in value))
