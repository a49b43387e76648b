"""Shape functions: compute a Relax function's output shapes from its input shapes.

Relay attached a shape function to every op; Relax instead carries symbolic shapes in its types,
so a function's output shapes are PrimExprs over the symbolic dims of its parameters. The shape
function is a TE kernel over int64 shape tensors that evaluates those expressions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tvm
from tvm import relax, te, tirx
from tvm.sym import Analyzer

from compile_engine_compat.pipeline import lower as _lowering
from compile_engine_compat.pipeline.trace import UnsupportedConstructError, source_function

__all__ = ["NEED_INPUT_SHAPE", "NO_NEED", "ShapeFunc", "lower_shape_func"]

#: Legacy ``shape_func_param_states`` values.
NO_NEED = 0
NEED_INPUT_SHAPE = 2


@dataclass(frozen=True)
class ShapeFunc:
    """A lowered shape function (the engine's ``lower_shape_func`` wraps it in a CachedFunc).

    Attributes
    ----------
    inputs : list of te.Tensor
        One ``(ndim,)`` int64 tensor per flattened tensor parameter.
    outputs : list of te.Tensor
        One ``(ndim,)`` int64 tensor per flattened output.
    prim_func : tvm.tirx.PrimFunc
        Before inlining.
    funcs : tvm.IRModule
        Holds ``prim_func`` under the kernel name.
    schedule : tvm.s_tir.Schedule
        Its injective stages inlined.
    param_states : list of int
        Per parameter, :data:`NEED_INPUT_SHAPE` when an output shape depends on its shape, else
        :data:`NO_NEED`.
    """

    inputs: list[te.Tensor]
    outputs: list[te.Tensor]
    prim_func: tirx.PrimFunc
    funcs: tvm.IRModule
    schedule: Any
    param_states: list[int]


def _flat_tensor_types(ty: Any, what: str) -> list[Any]:
    if isinstance(ty, relax.TensorType):
        if not isinstance(ty.shape, relax.ShapeExpr):
            raise UnsupportedConstructError(f"{what} has no known rank")
        return [ty]
    if isinstance(ty, relax.TupleType):
        return [t for field in ty.fields for t in _flat_tensor_types(field, what)]
    raise UnsupportedConstructError(f"{what} of type {ty} is not a tensor or tuple of tensors")


def lower_shape_func(source: Any, name: str) -> ShapeFunc:
    """Build the shape function of ``source``.

    Parameters
    ----------
    source : relax.Function or tvm.IRModule
    name : str
        Unique kernel name (legacy: ``shape_func_<ops>``).

    Returns
    -------
    ShapeFunc
    """
    func = source_function(source)
    param_types: list[tuple[int, Any]] = []
    for index, param in enumerate(func.params):
        for ty in _flat_tensor_types(param.ty, f"parameter {param.name!r}"):
            param_types.append((index, ty))

    inputs = [
        te.placeholder((len(ty.shape.values),), "int64", name=f"shape{i}")
        for i, (_, ty) in enumerate(param_types)
    ]
    # Each symbolic dim is read from the first parameter dim that is exactly that variable.
    dim_source: dict[Any, tuple[int, int]] = {}
    for flat_index, (_, ty) in enumerate(param_types):
        for axis, dim in enumerate(ty.shape.values):
            if isinstance(dim, tirx.Var) and dim not in dim_source:
                dim_source[dim] = (flat_index, axis)

    used_params: set[int] = set()

    def resolve(dim: Any) -> Any:
        # Binding each symbolic var to a load from its shape tensor makes the simplifier
        # substitute it (modern TVM exposes no plain Substitute to Python).
        analyzer = Analyzer()
        for var in tirx.analysis.undefined_vars(dim):
            if var not in dim_source:
                raise UnsupportedConstructError(
                    f"output dim {dim} depends on {var}, which no input shape defines"
                )
            flat_index, axis = dim_source[var]
            used_params.add(param_types[flat_index][0])
            analyzer.bind(var, inputs[flat_index][axis])
        return analyzer.simplify(tirx.Cast("int64", dim))

    outputs = []
    for i, ty in enumerate(_flat_tensor_types(func.ret_ty, "the return value")):
        dims = [resolve(d) for d in ty.shape.values]
        outputs.append(_shape_tensor(dims, f"out_shape{i}"))

    prim_func = _lowering.to_prim_func(inputs, outputs, name)
    funcs = tvm.IRModule({name: prim_func})
    schedule = _lowering.inline_injective(prim_func, name)
    states = [NEED_INPUT_SHAPE if i in used_params else NO_NEED for i in range(len(func.params))]
    return ShapeFunc(inputs, outputs, prim_func, funcs, schedule, states)


def _shape_tensor(dims: list[Any], name: str) -> te.Tensor:
    def element(i: Any) -> Any:
        value = tirx.const(0, "int64")
        for axis in reversed(range(len(dims))):
            value = tirx.if_then_else(i == axis, dims[axis], value)
        return value

    return te.compute((len(dims),), element, name=name)
