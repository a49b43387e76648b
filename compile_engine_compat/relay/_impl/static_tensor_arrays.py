"""TVM 0.19's static tensor arrays (``StaticTensorArrayOps``): lists of tensors of one shape.

``StaticTensorArrayOps(prelude, dtype, shape).register()`` declares the ADT
``static_tensor_{dtype}_{dims}_t`` (``tensor_nil_...`` and ``tensor_constructor_...``, holding a
tensor of ``shape``; ``any`` names a ``relay.Any()`` dimension, ``scalar`` the empty shape) and
its functions, named as TVM 0.19 named them (``tensor_take_float32_3_4``, ...): ``tensor_take``,
``tensor_concatenate``, ``tensor_expand_dims``, ``tensor_array``, ``tensor_array_read``,
``tensor_array_write``, ``tensor_array_unstack``, ``tensor_array_scatter``,
``tensor_array_split``, ``tensor_array_concat``, ``tensor_array_stack``,
``tensor_array_gather`` and ``tensor_get_data``. Results of take, concatenate and split have
``Any`` first dimensions (their own ADTs, declared as needed), as in TVM 0.19. They run on the
interpreter, as the dynamic ones (:mod:`.tensor_arrays`, whose row-by-row
``tensor_take`` they share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from compile_engine_compat.relay import op
from compile_engine_compat.relay.adt import PatternConstructor, PatternVar
from compile_engine_compat.relay.backend.interpreter import module_types
from compile_engine_compat.relay.expr import Expr, If, Let, Var, const
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import Any as AnyDim
from compile_engine_compat.relay.ty import TensorType, Type, TypeCall

from .tensor_arrays import (
    TensorArrayModule,
    adt_of,
    apply,
    concat_all,
    match,
    one_more,
    scalar_var,
    split_step,
    take_rows,
)

__all__ = ["StaticTensorArrayOps", "get_tensor_array_shape", "static_name"]


def _dims(shape: Sequence[Any]) -> str:
    return "_".join("any" if not isinstance(d, int) else str(d) for d in _ints(shape))


def _ints(shape: Sequence[Any]) -> list[Any]:
    """The dimensions as ints where static (an ``IntImm`` as its value)."""
    out: list[Any] = []
    for dim in shape:
        value = getattr(dim, "value", dim)
        out.append(int(value) if isinstance(value, int) and not isinstance(value, bool) else dim)
    return out


def static_name(
    canonical: str,
    dtype: str,
    shape: Sequence[Any],
    batch_dim: int | None = None,
    extra_shapes: Mapping[str, Sequence[Any]] | None = None,
) -> str:
    """The name TVM 0.19 gave a static tensor-array definition.

    Parameters
    ----------
    canonical : str
        ``"tensor_t"``, ``"tensor_take"``, ...
    dtype : str
        The element type.
    shape : sequence of int or relay.Any
        The tensors' shape (``any`` in the name for an ``Any`` dimension).
    batch_dim : int, optional
        1 when a stack holds one element (``..._batch1_...``).
    extra_shapes : mapping, optional
        Static shapes of other arguments (``{"indices": (2,)}``), appended to the name.
    """
    dims = _dims(shape)
    for what, extra in (extra_shapes or {}).items():
        dims += f"_{what}_{_dims(extra)}"
    dims = dims or "scalar"
    if canonical == "tensor_t":
        return f"static_tensor_{dtype}_{dims}_t"
    if batch_dim == 1 and canonical not in ("tensor_constructor", "tensor_nil"):
        return f"{canonical}_{dtype}_batch1_{dims}"
    return f"{canonical}_{dtype}_{dims}"


class StaticTensorArrayOps:
    """``relay.prelude.StaticTensorArrayOps(prelude, dtype, shape, batch_dim=None)``.

    Parameters
    ----------
    prelude : relay.prelude.Prelude
        Where the definitions go.
    dtype : str
        The element type.
    shape : sequence of int or relay.Any
        The shape of every tensor the array holds.
    batch_dim : int, optional
        1 when a stack of the array holds one element (its first dimension is then 1).
    """

    def __init__(self, prelude: Any, dtype: str, shape: Sequence[Any], batch_dim: Any = None):
        self.prelude = prelude
        self.dtype = dtype
        self.shape = list(shape)
        self.batch_dim = batch_dim
        self.defs = TensorArrayModule(prelude)
        self.list, self.cons, self.nil = self.defs.list, self.defs.cons, self.defs.nil
        self.tensor_type_var: Any = None

    def get_name(self, canonical: str, extra_shapes: Any = None) -> str:
        """The definition's name (see :func:`static_name`)."""
        return static_name(canonical, self.dtype, self.shape, self.batch_dim, extra_shapes)

    def get_global_var(self, canonical: str) -> Any:
        """The ``GlobalVar`` of ``canonical`` for this shape."""
        return self.defs.global_var(self.get_name(canonical))

    def get_type(self, canonical: str) -> Any:
        """The type header of ``canonical`` (``tensor_t``)."""
        return adt_of(self.defs.mod, static_name(canonical, self.dtype, self.shape))[0]

    def get_ctor(self, canonical: str) -> Any:
        """The constructor ``canonical`` (``tensor_constructor``, ``tensor_nil``)."""
        wanted = static_name(canonical, self.dtype, self.shape)
        for ctor in adt_of(self.defs.mod, static_name("tensor_t", self.dtype, self.shape))[1:]:
            if ctor.name_hint == wanted:
                return ctor
        raise ValueError(f"the static tensor array has no constructor {wanted!r}")

    def is_cached(self, name: str) -> bool:
        """Whether the module already defines ``name``."""
        return self.defs.has(name)

    def _other(self, shape: Sequence[Any]) -> StaticTensorArrayOps:
        """The ops of another shape (same dtype and batch), their ADT declared."""
        other = StaticTensorArrayOps(self.prelude, self.dtype, shape, self.batch_dim)
        other.define_tensor_adt()
        return other

    def _rows_any(self) -> list[Any]:
        return [AnyDim(), *self.shape[1:]]

    def _new_axis(self) -> list[Any]:
        return [1 if self.batch_dim == 1 else AnyDim(), *self.shape]

    def _ta(self) -> Type:
        return TypeCall(self.list, [self.tensor_type_var()])

    def _unwrap(self, data: Var, rhs: Any) -> Expr:
        held = Var("t")
        ctor = self.get_ctor("tensor_constructor")
        return match(data, [(PatternConstructor(ctor, [PatternVar(held)]), rhs(held))])

    # -- the definitions -----------------------------------------------------------------------
    def define_tensor_adt(self) -> None:
        """``static_tensor_..._t``: ``tensor_nil`` and ``tensor_constructor`` (once)."""
        name = self.get_name("tensor_t")
        if any(h.name_hint == name for h in _headers(self.defs.mod)):
            self.tensor_type_var = self.get_type("tensor_t")
            return
        held = TensorType(tuple(self.shape), self.dtype)
        self.tensor_type_var = self.defs.declare(
            name,
            [
                (static_name("tensor_nil", self.dtype, self.shape), []),
                (static_name("tensor_constructor", self.dtype, self.shape), [held]),
            ],
        )[0]

    def define_tensor_take(self) -> None:
        """``tensor_take(t, lower, upper)``: rows ``lower`` to ``upper`` (an ``Any`` first
        dimension); not for scalars."""
        name = self.get_name("tensor_take")
        if not self.shape or self.is_cached(name):
            return
        rows = self.defs.define(self.get_name("tensor_take_rows"), take_rows)
        out = self._other(self._rows_any())
        t, lower, upper = (
            Var("tensor", self.tensor_type_var()),
            scalar_var("lower"),
            scalar_var("upper"),
        )
        made = out.get_ctor("tensor_constructor")
        body = self._unwrap(t, lambda held: made(apply(rows, held, lower, upper)))
        self.defs.define(
            name, lambda gvar: Function([t, lower, upper], body, out.tensor_type_var())
        )

    def define_tensor_concatenate(self) -> None:
        """``tensor_concatenate(x, y)``: joined on axis 0 (an ``Any`` first dimension)."""
        name = self.get_name("tensor_concatenate")
        if not self.shape or self.is_cached(name):
            return
        out = self._other(self._rows_any())
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())
        made = out.get_ctor("tensor_constructor")
        body = self._unwrap(
            x, lambda a: self._unwrap(y, lambda b: made(op.concatenate([a, b], axis=0)))
        )
        self.defs.define(name, lambda gvar: Function([x, y], body, out.tensor_type_var()))

    def define_tensor_expand_dims(self) -> None:
        """``tensor_expand_dims(t)``: a new first axis (``Any``, or 1 with ``batch_dim=1``)."""
        out = self._other(self._new_axis())
        x = Var("x", self.tensor_type_var())
        made = out.get_ctor("tensor_constructor")
        body = self._unwrap(x, lambda held: made(op.expand_dims(held, 0, 1)))
        self.defs.define(
            self.get_name("tensor_expand_dims"),
            lambda gvar: Function([x], body, out.tensor_type_var()),
        )

    def define_tensor_array(self) -> None:
        """``tensor_array(n)``: ``n`` ``tensor_nil``."""
        n, nil_tensor = scalar_var("x"), self.get_ctor("tensor_nil")

        def build(gvar: Any) -> Function:
            rest = self.cons(nil_tensor(), apply(gvar, one_more(n, -1)))
            return Function([n], If(op.equal(n, const(0)), self.nil(), rest), self._ta())

        self.defs.define(self.get_name("tensor_array"), build)

    def define_tensor_array_read(self) -> None:
        """``tensor_array_read(ta, n)``: element ``n``."""
        name = self.get_name("tensor_array_read")
        if self.is_cached(name):
            return
        ta, n = Var("tensor_array", self._ta()), scalar_var("x")
        body = apply(self.prelude.nth, ta, n)
        self.defs.define(name, lambda gvar: Function([ta, n], body, self.tensor_type_var()))

    def define_tensor_array_write(self) -> None:
        """``tensor_array_write(ta, n, v)``: element ``n`` replaced by ``v``."""
        name = self.get_name("tensor_array_write")
        if self.is_cached(name):
            return
        ta, n, v = (
            Var("tensor_array", self._ta()),
            scalar_var("x"),
            Var("v", self.tensor_type_var()),
        )
        body = apply(self.prelude.update, ta, n, v)
        self.defs.define(name, lambda gvar: Function([ta, n, v], body, self._ta()))

    def define_tensor_array_unstack(self) -> None:
        """``tensor_array_unstack(t)``: the rows of the tensor ``t`` as an array of the
        shape without the first dimension."""
        if not self.shape:
            return
        out = self._other(self.shape[1:])
        row_ta = TypeCall(self.list, [out.tensor_type_var()])
        made = out.get_ctor("tensor_constructor")

        def helper(gvar: Any) -> Function:
            i, up = scalar_var("i"), scalar_var("up")
            t = Var("t", TensorType(tuple(self.shape), self.dtype))
            rest = self.cons(made(op.take(t, i, axis=0)), apply(gvar, one_more(i, 1), up, t))
            return Function([i, up, t], If(op.equal(i, up), self.nil(), rest), row_ta)

        rows = self.defs.define(self.get_name("tensor_array_unstack_helper"), helper)
        t = Var("tensor", TensorType(tuple(self.shape), self.dtype))
        count = op.take(op.shape_of(t, "int32"), const(0))
        self.defs.define(
            self.get_name("tensor_array_unstack"),
            lambda gvar: Function([t], apply(rows, const(0), count, t), row_ta),
        )

    def define_tensor_array_scatter(
        self, indices_shape: Sequence[Any] | None = None, force_update: bool = False
    ) -> None:
        """``tensor_array_scatter(ta, indices, values)``: element ``indices[k]`` replaced by
        ``values[k]``; ``indices_shape`` defines a version for indices of that static shape
        (its name says it), made again with ``force_update``."""
        extra = {"indices": indices_shape} if indices_shape is not None else None
        name = self.get_name("tensor_array_scatter", extra)
        if hasattr(self.prelude, name) and not force_update:
            return
        write = self.get_global_var("tensor_array_write")
        read = self.get_global_var("tensor_array_read")
        index_type = TensorType(tuple(indices_shape or [AnyDim()]), "int32")

        def helper(gvar: Any) -> Function:
            ta, current, limit = Var("ta", self._ta()), scalar_var("current"), scalar_var("limit")
            indices, values = Var("indices_", index_type), Var("values_", self._ta())
            written = apply(write, ta, op.take(indices, current), apply(read, values, current))
            body = If(
                op.equal(current, limit),
                ta,
                apply(gvar, written, one_more(current, 1), limit, indices, values),
            )
            return Function([ta, current, limit, indices, values], body, self._ta())

        step = self.defs.define(self.get_name("tensor_array_scatter_helper", extra), helper)
        ta, values = Var("tensor_array", self._ta()), Var("values", self._ta())
        indices = Var("indices", index_type)
        if indices_shape is None:
            limit: Expr = op.take(op.shape_of(indices, "int32"), const(0))
        else:
            limit = const(int(_ints(indices_shape)[0]))
        body = apply(step, ta, const(0), limit, indices, values)
        self.defs.define(name, lambda gvar: Function([ta, indices, values], body, self._ta()))

    def define_tensor_array_split(
        self,
        value_shape: Sequence[Any] | None = None,
        lengths_shape: Sequence[Any] | None = None,
        force_update: bool = False,
    ) -> None:
        """``tensor_array_split(ta, value, lengths)``: element ``k`` becomes the next
        ``lengths[k]`` rows of ``value`` (an array of ``Any``-first-dimension tensors);
        ``value_shape``/``lengths_shape`` give those arguments static shapes."""
        if not self.shape:
            return
        name = self.get_name("tensor_array_split")
        if self.is_cached(name) and not force_update:
            return
        out = self._other(self._rows_any())
        out.define_tensor_array_write()
        write = out.get_global_var("tensor_array_write")
        source = self if value_shape is None else self._other(value_shape)
        source.define_tensor_take()
        take = source.get_global_var("tensor_take")
        out_ta = TypeCall(self.list, [out.tensor_type_var()])
        length_type = TensorType(tuple(lengths_shape or [AnyDim()]), "int32")

        helper = split_step(write, take, out_ta, source.tensor_type_var(), length_type)
        step = self.defs.define(self.get_name("ta_split_helper"), helper)
        ta, value = Var("tensor_array", out_ta), Var("value", source.tensor_type_var())
        lengths = Var("lengths", length_type)
        if lengths_shape is None:
            limit: Expr = op.take(op.shape_of(lengths, "int32"), const(0))
        else:
            limit = const(int(_ints(lengths_shape)[0]))
        body = apply(step, ta, value, const(0), const(0), limit, lengths)
        self.defs.define(name, lambda gvar: Function([ta, value, lengths], body, out_ta))

    def define_tensor_array_concat(self) -> None:
        """``tensor_array_concat(ta)``: the elements joined on axis 0 (``tensor_nil`` when
        empty)."""
        name = self.get_name("tensor_array_concat")
        if not self.shape or self.is_cached(name):
            return
        out = self._other(self._rows_any())
        out.define_tensor_concatenate()
        join = out.get_global_var("tensor_concatenate")
        build = concat_all(self.defs, join, out.tensor_type_var, out.get_ctor("tensor_nil"))
        self.defs.define(name, build)

    def define_tensor_array_stack(self) -> None:
        """``tensor_array_stack(ta)``: the elements stacked on a new first axis."""
        expand = self.get_global_var("tensor_expand_dims")
        out = self._other(self._new_axis())
        out.define_tensor_concatenate()
        join = out.get_global_var("tensor_concatenate")
        ta, grown = Var("tensor_array", self._ta()), Var("expanded")
        p = self.prelude
        if self.batch_dim == 1:
            stacked: Expr = apply(p.id, apply(p.hd, grown))
        else:
            stacked = apply(p.foldl, join, apply(p.hd, grown), apply(p.tl, grown))
        body = Let(grown, apply(p.map, expand, ta), stacked)
        result = out.tensor_type_var()
        self.defs.define(
            self.get_name("tensor_array_stack"), lambda gvar: Function([ta], body, result)
        )

    def define_tensor_array_gather(self) -> None:
        """``tensor_array_gather(ta, indices)``: elements ``indices`` stacked."""
        stack = self.get_global_var("tensor_array_stack")
        read = self.get_global_var("tensor_array_read")
        result = self._other(self._new_axis()).tensor_type_var
        index_type = TensorType((AnyDim(),), "int32")

        def helper(gvar: Any) -> Function:
            ta, accu = Var("ta", self._ta()), Var("accu", self._ta())
            current, limit, indices = (
                scalar_var("current"),
                scalar_var("limit"),
                Var("indices_", index_type),
            )
            before = one_more(current, -1)
            picked = self.cons(apply(read, ta, op.take(indices, before)), accu)
            body = If(
                op.equal(current, const(0)),
                apply(stack, accu),
                apply(gvar, ta, picked, before, limit, indices),
            )
            return Function([ta, accu, current, limit, indices], body, result())

        step = self.defs.define(self.get_name("tensor_array_gather_helper"), helper)
        ta, indices = Var("tensor_array", self._ta()), Var("indices", index_type)
        limit = op.take(op.shape_of(indices, "int32"), const(0))
        body = apply(step, ta, self.nil(), limit, limit, indices)
        self.defs.define(
            self.get_name("tensor_array_gather"),
            lambda gvar: Function([ta, indices], body, result()),
        )

    def define_tensor_get_data(self) -> None:
        """``tensor_get_data(t)``: the tensor a ``tensor_constructor`` holds."""
        t = Var("tensor", self.tensor_type_var())
        body = self._unwrap(t, lambda held: held)
        result = TensorType(tuple(self.shape), self.dtype)
        self.defs.define(self.get_name("tensor_get_data"), lambda gvar: Function([t], body, result))

    def register(self) -> None:
        """Declare the ADT and every function of this shape."""
        self.define_tensor_adt()
        self.define_tensor_take()
        self.define_tensor_concatenate()
        self.define_tensor_expand_dims()
        self.define_tensor_array()
        self.define_tensor_array_read()
        self.define_tensor_array_write()
        self.define_tensor_array_unstack()
        self.define_tensor_array_scatter()
        self.define_tensor_array_split()
        self.define_tensor_array_concat()
        self.define_tensor_array_stack()
        self.define_tensor_array_gather()
        self.define_tensor_get_data()


def _headers(mod: Any) -> list[Any]:
    return list(module_types(mod))


def get_tensor_array_shape(expr: Expr, dtype: str, prelude: Any) -> tuple[Any, ...] | None:
    """``relay.prelude.get_tensor_array_shape``: the shape of a static tensor array's tensors,
    read from the name of the ADT of ``expr``'s type, or None for a dynamic array.

    Parameters
    ----------
    expr : relay.Expr
        A tensor array (a list of a tensor ADT).
    dtype : str
        Its element type.
    prelude : relay.prelude.Prelude
        The prelude whose module declares the array's ADT.
    """
    from compile_engine_compat.relay.analysis import free_vars

    mod = prelude.mod
    mod["main"] = Function(free_vars(expr), expr)
    ty = mod["main"].checked_type.ret_type
    if not isinstance(ty, TypeCall) or not ty.args:
        raise ValueError(f"get_tensor_array_shape: the expression is not a tensor array ({ty!r})")
    element = ty.args[0]
    name = getattr(getattr(element, "func", element), "name_hint", "")
    prefix = f"static_tensor_{dtype}_"
    if not name.startswith(prefix):
        return None
    dims = name[len(prefix) : -len("_t")]
    if dims == "scalar":
        return ()
    return tuple(AnyDim() if d in ("?", "any") else int(d) for d in dims.split("_"))
