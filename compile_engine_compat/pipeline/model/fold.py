"""Build-time constant folding for whole-module builds, in NumPy: no kernel compiled to fold.

TVM's ``relax.transform.FoldConstant`` compiles every foldable call with LLVM and runs it: ~55 ms
a call. An ONNX MobileNetV2 has 123 of them (a bias reshape per convolution, an ``isnan`` and a
``where`` per ReLU6 bound), 7 of its 9 s of build time. Folded here in NumPy they cost
microseconds. Two passes:

* :func:`FoldConstantOps`, before legalization: calls of the Relax ops in
  :data:`..op_sources.NUMPY_FOLDINGS`
  whose arguments are all constants become constants. Others stay calls (computed at run time,
  inside the fused kernel that uses them: correct, and cheap for the bias reshapes and scalar
  bounds models carry).
* :func:`FoldWeightPacking`, after ``SplitLayoutRewritePreproc``: the weight-packing copies the
  packed GEMM rule moved out of the kernels (``*_weight_prepack`` PrimFuncs called on constant
  weights) become the packed constants, so weights are packed once at build time, never per
  call. A copy this module cannot read as a split-and-permute of its source stays a call.

NumPy gives IEEE results for every op here (the libm functions ``exp``, ``log``, ``tanh`` may
differ from LLVM's in the last place, within the property suite's tolerances).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax, s_tir, tirx

from compile_engine_compat.pipeline.op_sources import NUMPY_FOLDINGS, NotFoldable, static_shape

__all__ = ["FoldConstantOps", "FoldWeightPacking", "split_and_permute"]

Array = np.ndarray
# A buffer read in TIR (TVM 0.27 reads through TensorLoad expressions).
_LOAD = tvm.ir.expr.TensorLoad


def _value(expr: Any) -> Any:
    """A constant's NumPy value, a ShapeExpr's tuple, or None for anything else."""
    if isinstance(expr, tvm.ir.expr.Constant):
        value = expr.value
        return value.numpy() if hasattr(value, "numpy") else None
    if isinstance(expr, relax.ShapeExpr):
        try:
            return tuple(int(v) for v in expr.values)
        except TypeError:
            return None
    return None


def _as_result(call: Any, value: Array | None) -> Any:
    """``value`` as a constant of the call's type, or None when it does not match it."""
    if value is None:
        return None
    ty = call.ty
    dtype = str(getattr(ty, "dtype", ""))
    shape = static_shape(call)
    if not dtype or shape is None or tuple(np.shape(value)) != shape:
        return None
    # Not ascontiguousarray: it turns a 0-d array (a scalar bound) into shape (1,).
    return relax.const(np.array(value, dtype=dtype, order="C"), dtype)


@relax.expr_functor.mutator
class _Folder(relax.PyExprMutator):
    """Replaces the calls ``evaluate`` computes with constants, and their uses with them."""

    def __init__(self, mod: tvm.IRModule, evaluate: Callable[[Any], Any]) -> None:
        super().__init__(mod)
        self.evaluate = evaluate
        self.folded: dict[Any, Any] = {}  # var -> constant

    def visit_var_binding_(self, binding: Any) -> None:
        value = self.visit_expr(binding.value)
        if isinstance(value, relax.Call):
            constant = self.evaluate(value)
            if constant is not None:
                self.folded[binding.var] = constant
                return  # the binding goes: each use reads the constant instead
        self.builder_.emit_normalized(relax.VarBinding(binding.var, value))

    def visit_var_(self, var: Any) -> Any:
        return self.folded.get(var, var)

    def visit_dataflow_var_(self, var: Any) -> Any:
        return self.folded.get(var, var)


def _fold_with(evaluate: Callable[[tvm.IRModule, Any], Any], name: str) -> tvm.transform.Pass:
    @tvm.transform.module_pass(opt_level=0, name=name)
    def fold(mod: tvm.IRModule, _ctx: tvm.transform.PassContext) -> tvm.IRModule:
        folder = _Folder(mod, lambda call: evaluate(mod, call))
        updates = {
            gvar: folder.visit_expr(func)
            for gvar, func in mod.functions.items()
            if isinstance(func, relax.Function)
        }
        if not folder.folded:
            return mod
        for gvar, func in updates.items():
            mod[gvar] = func
        return relax.transform.DeadCodeElimination()(mod)

    return fold


def _fold_op(_mod: tvm.IRModule, call: Any) -> Any:
    op = getattr(call.op, "name", None)
    fn = NUMPY_FOLDINGS.get(op) if isinstance(op, str) else None
    if fn is None:
        return None
    values = [_value(arg) for arg in call.args]
    if any(value is None for value in values):
        return None
    try:
        with np.errstate(all="ignore"):  # inf/nan results are results (isnan's input)
            return _as_result(call, fn(call, *values))
    except (NotFoldable, ValueError, TypeError):
        return None


def FoldConstantOps() -> tvm.transform.Pass:
    """Fold the calls of :data:`..op_sources.NUMPY_FOLDINGS` ops on constants, in NumPy (before
    legalization)."""
    return _fold_with(_fold_op, "compile_engine_compat.FoldConstantOps")


# -- weight packing -------------------------------------------------------------------------------

_CALL_TIR = "relax.call_tir"


def _fold_packing(mod: tvm.IRModule, call: Any) -> Any:
    if getattr(call.op, "name", None) != _CALL_TIR:
        return None
    func = mod[call.args[0]]
    args = call.args[1].fields
    if not isinstance(func, tirx.PrimFunc) or len(args) != 1 or len(func.params) != 2:
        return None
    source = _value(args[0])
    if not isinstance(source, np.ndarray):
        return None
    return _as_result(call, split_and_permute(func, source))


def FoldWeightPacking() -> tvm.transform.Pass:
    """Compute the weight-packing copies called on constants, in NumPy (see the module doc)."""
    return _fold_with(_fold_packing, "compile_engine_compat.FoldWeightPacking")


def split_and_permute(func: tirx.PrimFunc, source: Array) -> Array | None:
    """Run the one-block copy ``func(source, out)`` in NumPy, or None if it is not such a copy.

    The copy must be one block whose value is its source at a permutation of its iteration
    variables, stored at indices that are each an iteration variable ``v``, ``v // c``,
    ``v % c`` or 0 (the column panels of the packed GEMM rule, a unit axis where the columns are
    one panel): a reshape that splits axes and a transpose.

    Parameters
    ----------
    func : tvm.tirx.PrimFunc
        ``(source, out)``, scheduled or not (the block's iteration domain is what counts).
    source : numpy.ndarray
        The source's value.

    Returns
    -------
    numpy.ndarray or None
    """
    blocks = _blocks(func.body)
    if len(blocks) != 1:
        return None
    block = blocks[0]
    store = block.body
    if not isinstance(store, tirx.BufferStore) or not isinstance(store.value, _LOAD):
        return None
    iter_vars = list(block.iter_vars)
    extents = _all([_int(iv.dom.extent) for iv in iter_vars])
    if extents is None or any(_int(iv.dom.min) != 0 for iv in iter_vars):
        return None
    position = {iv.var: i for i, iv in enumerate(iter_vars)}
    reads = _all([_var_position(index, position) for index in store.value.indices])
    if reads is None or sorted(reads) != list(range(len(iter_vars))):
        return None
    if tuple(source.shape) != tuple(extents[i] for i in reads):
        return None
    out_shape = _all([_int(dim) for dim in func.params[1].ty.shape])
    # Constant indices are unit axes (a split whose outer part has one value): they change no
    # element's place in memory, so they are left out and put back by the final reshape.
    indices = [index for index in store.indices if _int(index) is None]
    if out_shape is None or len(indices) + sum(1 for i in store.indices if _int(i) == 0) != len(
        store.indices
    ):
        return None
    # The source in iteration order: in_order[v0, v1, ...] = source[reads(v)].
    in_order = np.transpose(source, np.argsort(reads))
    stored = _store(in_order, extents, indices, position)
    if stored is None or stored.size != int(np.prod(out_shape)):
        return None
    return stored.reshape(out_shape)


def _all(values: list[int | None]) -> list[int] | None:
    """``values`` when none is None."""
    found = [value for value in values if value is not None]
    return found if len(found) == len(values) else None


def _store(
    in_order: Array, extents: Sequence[int], indices: Sequence[Any], position: dict[Any, int]
) -> Array | None:
    """``out[indices(v)] = in_order[v]`` for split-and-permute ``indices``."""
    splits: dict[int, int] = {}  # axis -> c, for axes stored as v // c and v % c
    axes: list[tuple[int, str]] = []  # per output axis: (iteration axis, "all"/"outer"/"inner")
    for index in indices:
        found = _split_index(index, position)
        if found is None:
            return None
        axis, part, factor = found
        if factor is not None:
            if splits.setdefault(axis, factor) != factor or extents[axis] % factor:
                return None
        axes.append((axis, part))
    shape: list[int] = []
    names: list[tuple[int, str]] = []
    for axis, extent in enumerate(extents):
        if axis in splits:
            shape += [extent // splits[axis], splits[axis]]
            names += [(axis, "outer"), (axis, "inner")]
        else:
            shape.append(extent)
            names.append((axis, "all"))
    if sorted(axes) != sorted(names):
        return None  # an axis stored twice, or not at all
    split = in_order.reshape(shape)
    return np.array(np.transpose(split, [names.index(a) for a in axes]), order="C")


def _split_index(index: Any, position: dict[Any, int]) -> tuple[int, str, int | None] | None:
    """``(iteration axis, part, c)`` for ``v`` (part "all"), ``v // c`` ("outer"), ``v % c``."""
    axis = _var_position(index, position)
    if axis is not None:
        return axis, "all", None
    for kind, part in ((tirx.FloorDiv, "outer"), (tirx.FloorMod, "inner")):
        if isinstance(index, kind):
            axis = _var_position(index.a, position)
            factor = _int(index.b)
            if axis is not None and factor:
                return axis, part, factor
    return None


def _var_position(expr: Any, position: dict[Any, int]) -> int | None:
    if isinstance(expr, tirx.Var):
        for var, i in position.items():
            if var.same_as(expr):
                return i
    return None


def _int(expr: Any) -> int | None:
    return int(expr.value) if isinstance(expr, tirx.IntImm) else None


def _blocks(stmt: Any) -> list[Any]:
    """The blocks below the root block of a PrimFunc body (any nesting of loops)."""
    found: list[Any] = []

    def on_block(block: Any) -> None:
        if block.name_hint != "root":
            found.append(block)

    tvm_ffi.structural_walk(stmt, [(s_tir.SBlock, on_block)])
    return found
