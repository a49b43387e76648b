"""Relay ops on ``relay.Any()`` dimensions where Relax's own op cannot infer the result shape.

Relay typed such a call with ``Any`` dimensions and computed the real shape at run time with a
shape function. Relax needs the result shape as an expression of the input shapes to lower the
call; where its op infers none (``relax.op.matmul`` of batches ``n`` and ``5``, which it cannot
prove broadcastable), the op is emitted here as a TE compute whose result shape is Relay's rule
written out (``max(n, 5)``), with Relay's run-time checks as ``relax.op.assert_op``: a batch
that neither matches nor is 1 is an error at the call, never a wrong result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm import relax, te, tirx

from compile_engine_compat.relay.expr import Attrs
from compile_engine_compat.relay.ty import Any as AnyDim
from compile_engine_compat.relay.ty import RelayTypeError

__all__ = [
    "BROADCASTING",
    "any_dims",
    "broadcast_call",
    "dynamic_batch_matmul",
    "one_hot",
    "shape_known",
    "shape_values",
    "tensor_attribute",
    "tile",
]

#: Relax's elementwise ops that broadcast their tensor operands (numpy's rule, as Relay's).
BROADCASTING = frozenset(
    f"relax.{name}"
    for name in (
        "add subtract multiply divide floor_divide power maximum minimum mod floor_mod "
        "equal not_equal less less_equal greater greater_equal logical_and logical_or "
        "logical_xor bitwise_and bitwise_or bitwise_xor left_shift right_shift where"
    ).split()
)


def shape_known(value: Any) -> bool:
    """Whether a Relax expression's tensor type has a shape (an expression per dimension)."""
    ty = getattr(value, "ty", None)
    return not isinstance(ty, relax.TensorType) or ty.shape is not None


def _is_one(dim: Any) -> bool:
    return isinstance(dim, tirx.IntImm) and int(dim.value) == 1


def _batch_index(dim: Any, batch: Any, index: Any) -> Any:
    """Which batch of an operand with batch ``dim`` the output batch ``index`` reads (Relay's
    broadcast of a batch of 1)."""
    if _is_one(dim):
        return tirx.IntImm("int64", 0)  # shape (and so index) expressions are int64
    if dim.same_as(batch):
        return index
    return tirx.floormod(index, dim)  # dim is the batch, or 1 (checked at run time)


def _check(bb: relax.BlockBuilder, condition: Any, message: str) -> None:
    """Relay's run-time shape check: ``relax.op.assert_op`` of a condition on shape variables."""
    if isinstance(condition, tirx.IntImm):
        if not int(condition.value):
            raise ValueError(message)
        return
    bb.emit(relax.op.assert_op(relax.prim_value(condition), format=message))


def _operands(a_shape: Any, b_shape: Any, transpose_a: bool, transpose_b: bool) -> tuple:
    """(xb, xi, xk), (yb, yk, yj) of two 3-d shapes, after Relay's transposes."""
    (xb, x1, x2), (yb, y1, y2) = a_shape, b_shape
    xi, xk = (x2, x1) if transpose_a else (x1, x2)
    yk, yj = (y2, y1) if transpose_b else (y1, y2)
    return (xb, xi, xk), (yb, yk, yj)


def _batch(xb: Any, yb: Any) -> Any:
    """Relay's output batch: the other one where one is 1, else ``max(xb, yb)``."""
    if _is_one(xb):
        return yb
    if _is_one(yb) or xb.same_as(yb):
        return xb
    return te.max(xb, yb)


def dynamic_batch_matmul(
    bb: relax.BlockBuilder, a: Any, b: Any, transpose_a: bool, transpose_b: bool, out_dtype: Any
) -> Any:
    """``nn.batch_matmul`` of 3-d operands with symbolic shapes, as Relay computed it.

    The output batch is ``max(XB, YB)``; each batch must equal it or be 1, and the reduction
    lengths must agree (both checked when the call runs).
    """
    (xb, _, xk), (yb, yk, _) = _operands(
        a.ty.shape.values, b.ty.shape.values, transpose_a, transpose_b
    )
    _check(bb, tirx.EQ(xk, yk), "nn.batch_matmul: the reduction lengths differ")
    one = tirx.IntImm("int64", 1)
    agree = tirx.Or(tirx.Or(tirx.EQ(xb, yb), tirx.EQ(xb, one)), tirx.EQ(yb, one))
    _check(bb, agree, "nn.batch_matmul: the batches neither match nor are 1")
    dtype = out_dtype or a.ty.dtype

    def compute(x: te.Tensor, y: te.Tensor) -> te.Tensor:
        # The TE tensors' own shape variables (call_te gives the PrimFunc fresh ones).
        (txb, txi, txk), (tyb, _, tyj) = _operands(x.shape, y.shape, transpose_a, transpose_b)
        batch = _batch(txb, tyb)
        k = te.reduce_axis((0, txk), name="k")

        def element(n: Any, i: Any, j: Any) -> Any:
            bx, by = _batch_index(txb, batch, n), _batch_index(tyb, batch, n)
            left = x[bx, k, i] if transpose_a else x[bx, i, k]
            right = y[by, j, k] if transpose_b else y[by, k, j]
            return te.sum(left.astype(dtype) * right.astype(dtype), axis=k)

        return te.compute((batch, txi, tyj), element, name="T_batch_matmul")

    return bb.call_te(compute, a, b, primfunc_name_hint="batch_matmul")


def _broadcast_dim(bb: relax.BlockBuilder, a: Any, b: Any, what: str) -> Any:
    """One output dimension of a broadcast of ``a`` and ``b`` (Relay's rule), checking at run
    time what only run time can tell (a symbolic dimension is the other one, or 1)."""
    if _is_one(a):
        return b
    if _is_one(b) or a.same_as(b):
        return a
    if isinstance(a, tirx.IntImm) and isinstance(b, tirx.IntImm):
        if int(a.value) != int(b.value):
            raise ValueError(f"{what}: dimensions {a} and {b} neither match nor are 1")
        return a
    one = tirx.IntImm("int64", 1)
    agree = tirx.Or(tirx.Or(tirx.EQ(a, b), tirx.EQ(a, one)), tirx.EQ(b, one))
    _check(bb, agree, f"{what}: broadcast dimensions neither match nor are 1")
    if isinstance(a, tirx.IntImm):
        return a
    if isinstance(b, tirx.IntImm):
        return b
    return te.max(a, b)


def _expand(bb: relax.BlockBuilder, value: Any, shape: list[Any]) -> Any:
    """``value`` broadcast to ``shape``: each input dimension is the output's or 1, so index
    ``i % dim`` reads the right element either way (known only at run time)."""

    def compute(t: te.Tensor, *out: Any) -> te.Tensor:
        lead = len(out) - len(t.shape)

        def element(*index: Any) -> Any:
            return t[
                tuple(
                    tirx.IntImm("int64", 0) if _is_one(d) else tirx.floormod(i, d)
                    for d, i in zip(t.shape, index[lead:])
                )
            ]

        return te.compute(list(out), element, name="broadcast")

    return bb.emit(bb.call_te(compute, value, *shape, primfunc_name_hint="broadcast"))


def broadcast_call(bb: relax.BlockBuilder, call: Any, what: str) -> Any:
    """``call`` (an elementwise op of :data:`BROADCASTING` whose result shape Relax cannot
    infer) on operands broadcast to Relay's output shape first, so its shape is known.

    Returns ``call`` unchanged when an operand is not a tensor of known shape.
    """
    args = list(call.args)
    if not all(isinstance(a.ty, relax.TensorType) and a.ty.shape is not None for a in args):
        return call
    shapes = [list(a.ty.shape.values) for a in args]
    ndim = max(len(s) for s in shapes)
    out: list[Any] = []
    for position in range(ndim):
        dims = [s[position - ndim + len(s)] for s in shapes if position - ndim + len(s) >= 0]
        dim = dims[0]
        for other in dims[1:]:
            dim = _broadcast_dim(bb, dim, other, what)
        out.append(dim)
    expanded = [
        a if len(s) == ndim and all(d.same_as(o) for d, o in zip(s, out)) else _expand(bb, a, out)
        for a, s in zip(args, shapes)
    ]
    return bb.normalize(relax.Call(call.op, expanded, call.attrs, call.ty_args))


def shape_values(bb: relax.BlockBuilder, tensor: Any, what: str) -> list[Any]:
    """The values of a 1-d (or 0-d) numeric tensor as shape variables of the running function
    (Relay's ``dyn.*`` ops read a shape tensor at run time): ``relax.op.tensor_to_shape``, cast
    to one fresh ``int64`` variable per element (a ``relay.Any()`` dimension)."""
    ty = tensor.ty
    dims = None if not isinstance(ty, relax.TensorType) or ty.shape is None else ty.shape.values
    if dims is not None and len(dims) == 0:  # a scalar (dyn.one_hot's depth): one value
        tensor, dims = bb.emit(relax.op.reshape(tensor, [1])), [tirx.IntImm("int64", 1)]
    if (
        not dims
        or len(dims) != 1
        or not isinstance(dims[0], tirx.IntImm)
        or str(ty.dtype) == "bool"
    ):
        raise RelayTypeError(
            f"{what}: a tensor-valued {what} must be a 1-d numeric tensor of known length, got {ty}"
        )
    if str(ty.dtype) != "int64":  # Relay cast a float shape (dyn.tile's reps) to int64
        tensor = bb.emit(relax.op.astype(tensor, "int64"))
    shape = bb.emit(relax.op.tensor_to_shape(tensor))
    # Relay typed the result with Any dimensions: the variables are relay.Any()'s.
    names = [AnyDim() for _ in range(int(dims[0]))]
    bb.match_cast(shape, relax.ShapeType(names))
    return names


def any_dims(bb: relax.BlockBuilder, value: Any) -> Any:
    """``value`` with each dimension that is an expression of shape variables (``3 * n``) a
    fresh ``relay.Any()`` variable, as Relay typed a result its shape function computed."""
    value = bb.emit(value)
    ty = value.ty
    dims = list(ty.shape.values)
    fresh = [d if isinstance(d, tirx.IntImm | tirx.Var) else AnyDim() for d in dims]
    if all(f is d for f, d in zip(fresh, dims)):
        return value
    return bb.match_cast(value, relax.TensorType(fresh, ty.dtype))


Emit = Callable[[relax.BlockBuilder, list[Any], Attrs], Any]


def tensor_attribute(emit: Emit, attr: str) -> Emit:
    """The emitter of a ``dyn.`` op: ``emit`` with attribute ``attr`` read from the last input
    (a shape tensor) as shape variables (:func:`shape_values`)."""

    def emit_dynamic(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        values = tuple(shape_values(bb, args[-1], attr))
        return emit(bb, list(args[:-1]), Attrs.with_fields(attrs, **{attr: values}))

    return emit_dynamic


def _int64(dim: Any) -> Any:
    """A dimension as an ``int64`` expression (a constant stays a constant)."""
    if isinstance(dim, tirx.IntImm):
        return tirx.IntImm("int64", int(dim.value))
    return dim if str(dim.dtype) == "int64" else tirx.Cast("int64", dim)


def tile(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``tile`` by repetitions known as shape variables (``dyn.tile``; Relax's ``tile`` takes
    ints only): the data's shape, left-padded with 1s to the length of ``reps``, times each
    repetition; element ``i`` reads the data at ``i % dim``."""
    data = args[0]
    reps = list(attrs.reps)

    def compute(x: te.Tensor, *times: Any) -> te.Tensor:
        lead = max(len(times) - len(x.shape), 0)
        dims = [tirx.IntImm("int64", 1)] * lead + [_int64(d) for d in x.shape]
        times = (tirx.IntImm("int64", 1),) * (len(dims) - len(times)) + tuple(times)

        def element(*index: Any) -> Any:
            return x[tuple(tirx.floormod(i, d) for i, d in zip(index[lead:], dims[lead:]))]

        return te.compute([d * t for d, t in zip(dims, times)], element, name="tile")

    return any_dims(bb, bb.call_te(compute, data, *reps, primfunc_name_hint="tile"))


def one_hot(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``dyn.one_hot(indices, on_value, off_value, depth)`` (Relax's takes an int depth and
    number values): ``on_value`` where the index equals the position along the new ``axis``,
    else ``off_value``, the depth read when the function runs."""
    indices, on_value, off_value, depth_tensor = args
    (depth,) = shape_values(bb, depth_tensor, "depth")
    dtype = str(attrs.dtype)
    on, off = (
        bb.emit(relax.op.reshape(bb.emit(relax.op.astype(v, dtype)), []))
        for v in (on_value, off_value)
    )

    def compute(ind: te.Tensor, on: te.Tensor, off: te.Tensor, size: Any) -> te.Tensor:
        ndim = len(ind.shape) + 1
        axis = int(attrs.axis) % ndim

        def element(*index: Any) -> Any:
            rest = index[:axis] + index[axis + 1 :]
            hit = ind[rest].astype("int64") == index[axis].astype("int64")
            return tirx.Select(hit, on[()], off[()])

        shape = [*ind.shape[:axis], size, *ind.shape[axis:]]
        return te.compute(shape, element, name="one_hot")

    return bb.call_te(compute, indices, on, off, depth, primfunc_name_hint="one_hot")
