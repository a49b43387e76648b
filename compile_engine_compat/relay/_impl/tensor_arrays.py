"""TVM 0.19's tensor arrays (``TensorArrayOps``): lists of tensors of any shape, for one dtype.

``TensorArrayOps(prelude, dtype).register()`` declares in the prelude's module the ADT
``tensor_{dtype}_t`` (``tensor_nil_{dtype}``, and ``tensor0_{dtype}`` ... ``tensor6_{dtype}``
holding a tensor of rank 0 to 6) and the functions TVM 0.19 named (each suffixed
``_{dtype}``): ``tensor_take``, ``tensor_expand_dims``, ``tensor_concatenate``,
``tensor_array``, ``tensor_array_read``, ``tensor_array_write``,
``tensor_array_unstack_tensor1`` ... ``6``, ``tensor_array_scatter``, ``tensor_array_split``,
``tensor_array_concat``, ``tensor_array_stack`` and ``tensor_array_gather``, with their
meanings. They are Relay programs over the prelude's ``List``, run by the interpreter
(``create_executor("debug"/"vm")``, ``relay.vm.compile``), each op call compiled by TVM.

One difference from TVM 0.19: ``tensor_take(t, lower, upper)`` took rows with
``take(t, arange(lower, upper))``, a call whose shape depends on the values; the shim's ops take
no tensor-valued ``arange`` bounds, so the rows are taken one by one (``take(t, i, axis=0)``)
and concatenated, which computes the same tensor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm

from compile_engine_compat.relay import op
from compile_engine_compat.relay.adt import (
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    TypeData,
)
from compile_engine_compat.relay.backend.interpreter import declare_type, module_form, module_types
from compile_engine_compat.relay.expr import Call, Expr, If, Let, Var, const
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import Any as AnyDim
from compile_engine_compat.relay.ty import GlobalTypeVar, TensorType, Type, TypeCall

__all__ = [
    "MAX_RANK",
    "TensorArrayModule",
    "TensorArrayOps",
    "adt_of",
    "apply",
    "concat_all",
    "match",
    "one_more",
    "scalar_var",
    "split_step",
    "take_rows",
]

#: The highest rank a ``tensor_t`` holds (``tensor6``).
MAX_RANK = 6
#: The highest rank ``tensor_concatenate`` joins (TVM 0.19's limit).
CONCAT_RANK = 4
_I32 = TensorType((), "int32")


def apply(func: Any, *args: Expr) -> Call:
    """``func(*args)`` as a Relay call (``func`` a module function's ``GlobalVar``)."""
    return Call(func, list(args))


def scalar_var(name: str) -> Var:
    """A variable of type ``Tensor[(), int32]``."""
    return Var(name, _I32)


def one_more(expr: Expr, delta: int) -> Expr:
    """``expr + delta`` (``expr - -delta`` for a negative ``delta``)."""
    return op.add(expr, const(delta)) if delta > 0 else op.subtract(expr, const(-delta))


def concat_all(defs: TensorArrayModule, join: Any, element: Any, empty: Any) -> Any:
    """``build(gvar)`` of ``tensor_array_concat``: the elements of a list of ``element`` joined
    by ``join`` (a ``tensor_concatenate``), ``empty()`` for an empty list."""

    def build(gvar: Any) -> Function:
        ta, hd, tl = Var("tensor_array", TypeCall(defs.list, [element()])), Var("hd"), Var("tl")
        rest = (PatternWildcard(), apply(join, hd, apply(gvar, tl)))
        last = match(tl, [(PatternConstructor(defs.nil), hd), rest])
        cell = PatternConstructor(defs.cons, [PatternVar(hd), PatternVar(tl)])
        body = match(ta, [(PatternConstructor(defs.nil), empty()), (cell, last)])
        return Function([ta], body, element())

    return build


def split_step(write: Any, take: Any, array: Type, value_type: Type, lengths_type: Type) -> Any:
    """``build(gvar)`` of ``ta_split_helper(ta, value, offset, current, limit, lengths)``:
    element ``current`` of ``ta`` written with ``lengths[current]`` rows of ``value`` from
    ``offset`` (``take``: a ``tensor_take``), and on to ``limit``."""

    def build(gvar: Any) -> Function:
        ta, value = Var("tensor_array", array), Var("value1", value_type)
        offset, current = scalar_var("offset1"), scalar_var("current1")
        limit, lengths = scalar_var("limit1"), Var("lengths", lengths_type)
        # Each use its own node, as TVM 0.19 wrote it: a shared call is Relay's fGraph.
        after = (op.add(offset, op.take(lengths, current)), one_more(current, 1), limit, lengths)
        rows = apply(take, value, offset, op.add(op.take(lengths, current), offset))
        written = apply(write, apply(gvar, ta, value, *after), current, rows)
        body = If(op.equal(current, limit), ta, written)
        return Function([ta, value, offset, current, limit, lengths], body, array)

    return build


def take_rows(gvar: Any) -> Function:
    """``rows(t, i, upper)``: ``t[i:upper]`` on axis 0, the rows taken one by one and joined
    (see the module docstring); ``gvar`` is the function's own ``GlobalVar``."""
    t, i, upper = Var("t"), scalar_var("i"), scalar_var("upper")

    def row() -> Expr:  # each use its own node (a shared call is Relay's fGraph)
        return op.expand_dims(op.take(t, i, axis=0), 0)

    more = op.concatenate([row(), apply(gvar, t, one_more(i, 1), upper)], 0)
    rest = If(op.greater_equal(one_more(i, 1), upper), row(), more)
    empty = op.strided_slice(t, [0], [0])
    return Function([t, i, upper], If(op.greater_equal(i, upper), empty, rest))


class TensorArrayModule:
    """What the tensor-array definitions share: the module, its ``List`` and how a function is
    defined (its ``GlobalVar`` made once, the function stored as the interpreter runs it).

    Parameters
    ----------
    prelude : relay.prelude.Prelude
        Its module holds ``List`` and the prelude's functions.
    """

    def __init__(self, prelude: Any) -> None:
        self.prelude = prelude
        self.mod: tvm.IRModule = prelude.mod
        self.list, self.cons, self.nil = adt_of(self.mod, "List")

    def global_var(self, name: str) -> Any:
        """The module's ``GlobalVar`` ``name`` (a new one when the module has none)."""
        for gvar in self.mod.get_global_vars():
            if gvar.name_hint == name:
                return gvar
        return tvm.ir.GlobalVar(name)

    def has(self, name: str) -> bool:
        """Whether the module defines ``name``."""
        return any(g.name_hint == name for g in self.mod.get_global_vars())

    def define(self, name: str, build: Callable[[Any], Function]) -> Any:
        """``def @name`` from ``build(gvar)`` (which may call ``gvar``); its ``GlobalVar``."""
        gvar = self.global_var(name)
        self.mod[gvar] = module_form(build(gvar), name, self.mod)
        vars(self.prelude)[name] = gvar  # the Prelude answers it by name, as 0.19's did
        return gvar

    def declare(self, name: str, cases: list[tuple[str, list[Type]]]) -> tuple[Any, ...]:
        """``type name { case(fields), ... }``: the header and its constructors."""
        header = GlobalTypeVar(name)
        ctors = [Constructor(case, fields, header) for case, fields in cases]
        declare_type(self.mod, header, TypeData(header, [], ctors))
        return (header, *ctors)


def adt_of(mod: Any, name: str) -> tuple[Any, ...]:
    """``(header, *constructors)`` of the ADT ``name`` declared in ``mod``."""
    for header, data in module_types(mod).items():
        if header.name_hint == name:
            return (header, *data.constructors)
    raise ValueError(f"the module declares no type {name!r}: make a relay.prelude.Prelude first")


def match(data: Expr, clauses: list[tuple[Any, Expr]]) -> Match:
    """An incomplete ``match`` of ``data`` on ``(pattern, rhs)`` clauses."""
    return Match(data, [Clause(p, rhs) for p, rhs in clauses], False)


class TensorArrayOps:
    """``relay.prelude.TensorArrayOps(prelude, dtype)``: the tensor-array ops of ``dtype``.

    Parameters
    ----------
    prelude : relay.prelude.Prelude
        Where the definitions go (``register()``).
    dtype : str
        The element type of the tensors.
    """

    def __init__(self, prelude: Any, dtype: str) -> None:
        self.prelude = prelude
        self.dtype = dtype
        self.defs = TensorArrayModule(prelude)
        self.list, self.cons, self.nil = self.defs.list, self.defs.cons, self.defs.nil
        self.tensor_type_var: Any = None
        self.ctors: list[Any] = []  # tensor_nil, tensor0 ... tensor6

    # -- names -------------------------------------------------------------------------------------
    def get_name(self, canonical: str) -> str:
        """The definition's name for this dtype (``tensor_float32_t``, ``tensor_take_float32``)."""
        return f"tensor_{self.dtype}_t" if canonical == "tensor_t" else f"{canonical}_{self.dtype}"

    def get_global_var(self, canonical: str) -> Any:
        """The ``GlobalVar`` of ``canonical`` for this dtype."""
        return self.defs.global_var(self.get_name(canonical))

    def get_type(self, canonical: str) -> Any:
        """The type header of ``canonical`` (``tensor_t``) for this dtype."""
        return adt_of(self.defs.mod, self.get_name(canonical))[0]

    def get_ctor(self, canonical: str) -> Any:
        """The constructor ``canonical`` (``tensor2``) of this dtype's ``tensor_t``."""
        name = self.get_name(canonical)
        for ctor in adt_of(self.defs.mod, self.get_name("tensor_t"))[1:]:
            if ctor.name_hint == name:
                return ctor
        raise ValueError(f"tensor_t of {self.dtype} has no constructor {name!r}")

    def _tensor(self, rank: int) -> Constructor:
        return self.ctors[rank + 1]

    def _ta(self) -> Type:
        return TypeCall(self.list, [self.tensor_type_var()])

    # -- the definitions -----------------------------------------------------------------------
    def define_tensor_adt(self) -> None:
        """``tensor_t``: ``tensor_nil`` and ``tensor{r}`` holding a tensor of rank ``r``."""
        cases: list[tuple[str, list[Type]]] = [(self.get_name("tensor_nil"), [])]
        for rank in range(MAX_RANK + 1):
            shape = tuple(AnyDim() for _ in range(rank))
            cases.append((self.get_name(f"tensor{rank}"), [TensorType(shape, self.dtype)]))
        header, *ctors = self.defs.declare(self.get_name("tensor_t"), cases)
        self.tensor_type_var, self.ctors = header, ctors

    def _per_rank(
        self, name: str, params: list[Var], data: Var, ranks: range, rhs: Callable[..., Expr]
    ) -> None:
        """``def @name(params)``: a match on ``data`` with one clause per rank in ``ranks``,
        ``rhs(rank, tensor)`` its right side."""

        def build(gvar: Any) -> Function:
            clauses = []
            for rank in ranks:
                held = Var(f"t{rank}")
                clauses.append(
                    (PatternConstructor(self._tensor(rank), [PatternVar(held)]), rhs(rank, held))
                )
            return Function(params, match(data, clauses), self.tensor_type_var())

        self.defs.define(self.get_name(name), build)

    def define_tensor_take(self) -> None:
        """``tensor_take(t, lower, upper)``: rows ``lower`` to ``upper`` (excluded) of ``t``."""
        rows = self.defs.define(self.get_name("tensor_take_rows"), take_rows)
        t, lower, upper = (
            Var("tensor", self.tensor_type_var()),
            scalar_var("lower"),
            scalar_var("upper"),
        )
        self._per_rank(
            "tensor_take",
            [t, lower, upper],
            t,
            range(1, MAX_RANK + 1),
            lambda rank, held: self._tensor(rank)(apply(rows, held, lower, upper)),
        )

    def define_tensor_expand_dims(self) -> None:
        """``tensor_expand_dims(t)``: ``t`` with a new first axis of length 1."""
        x = Var("x", self.tensor_type_var())
        self._per_rank(
            "tensor_expand_dims",
            [x],
            x,
            range(MAX_RANK),
            lambda rank, held: self._tensor(rank + 1)(op.expand_dims(held, 0, 1)),
        )

    def define_tensor_concat(self) -> None:
        """``tensor_concatenate(x, y)``: ``x`` and ``y`` (the same rank, 1 to 4) on axis 0."""
        x, y = Var("x", self.tensor_type_var()), Var("y", self.tensor_type_var())

        def rhs(rank: int, first: Var) -> Expr:
            second = Var(f"s{rank}")
            joined = self._tensor(rank)(op.concatenate([first, second], axis=0))
            return match(
                y, [(PatternConstructor(self._tensor(rank), [PatternVar(second)]), joined)]
            )

        self._per_rank("tensor_concatenate", [x, y], x, range(1, CONCAT_RANK + 1), rhs)

    def define_tensor_array(self) -> None:
        """``tensor_array(n)``: a list of ``n`` ``tensor_nil``."""
        n = scalar_var("x")
        nil_tensor = self.ctors[0]

        def build(gvar: Any) -> Function:
            rest = self.cons(nil_tensor(), apply(gvar, one_more(n, -1)))
            return Function([n], If(op.equal(n, const(0)), self.nil(), rest), self._ta())

        self.defs.define(self.get_name("tensor_array"), build)

    def define_tensor_array_read(self) -> None:
        """``tensor_array_read(ta, n)``: element ``n``."""
        ta, n = Var("tensor_array", self._ta()), scalar_var("x")
        body = apply(self.prelude.nth, ta, n)
        self.defs.define(
            self.get_name("tensor_array_read"),
            lambda gvar: Function([ta, n], body, self.tensor_type_var()),
        )

    def define_tensor_array_write(self) -> None:
        """``tensor_array_write(ta, n, v)``: ``ta`` with element ``n`` replaced by ``v``."""
        ta, n, v = (
            Var("tensor_array", self._ta()),
            scalar_var("x"),
            Var("v", self.tensor_type_var()),
        )
        body = apply(self.prelude.update, ta, n, v)
        self.defs.define(
            self.get_name("tensor_array_write"), lambda gvar: Function([ta, n, v], body, self._ta())
        )

    def define_tensor_array_unstack(self, rank: int) -> None:
        """``tensor_array_unstack_tensor{rank}(t)``: the rows of ``t`` as a tensor array."""
        name = f"tensor_array_unstack_tensor{rank}"
        shape = tuple(AnyDim() for _ in range(rank))

        def helper(gvar: Any) -> Function:
            i, up, t = scalar_var("i"), scalar_var("up"), Var("t", TensorType(shape, self.dtype))
            row = self._tensor(rank - 1)(op.take(t, i, axis=0))
            rest = self.cons(row, apply(gvar, one_more(i, 1), up, t))
            return Function([i, up, t], If(op.equal(i, up), self.nil(), rest), self._ta())

        rows = self.defs.define(self.get_name(f"{name}_helper"), helper)
        t = Var("tensor", TensorType(shape, self.dtype))
        count = op.take(op.shape_of(t, "int32"), const(0))
        self.defs.define(
            self.get_name(name),
            lambda gvar: Function([t], apply(rows, const(0), count, t), self._ta()),
        )

    def define_tensor_array_unstack_tensor1(self) -> None:
        """``tensor_array_unstack_tensor1``: see :meth:`define_tensor_array_unstack`."""
        self.define_tensor_array_unstack(1)

    def _indices(self) -> Var:
        return Var("indices", TensorType((AnyDim(),), "int32"))

    def define_tensor_array_scatter(self) -> None:
        """``tensor_array_scatter(ta, indices, values)``: ``ta`` with element ``indices[k]``
        replaced by ``values[k]``, for every ``k``."""
        write = self.get_global_var("tensor_array_write")
        read = self.get_global_var("tensor_array_read")

        def helper(gvar: Any) -> Function:
            ta, current, limit = Var("ta", self._ta()), scalar_var("current"), scalar_var("limit")
            indices, values = self._indices(), Var("values_", self._ta())
            written = apply(write, ta, op.take(indices, current), apply(read, values, current))
            rest = apply(gvar, written, one_more(current, 1), limit, indices, values)
            body = If(op.equal(current, limit), ta, rest)
            return Function([ta, current, limit, indices, values], body, self._ta())

        step = self.defs.define(self.get_name("tensor_array_scatter_helper"), helper)
        ta, indices, values = (
            Var("tensor_array", self._ta()),
            self._indices(),
            Var("values", self._ta()),
        )
        limit = op.take(op.shape_of(indices, "int32"), const(0))
        body = apply(step, ta, const(0), limit, indices, values)
        self.defs.define(
            self.get_name("tensor_array_scatter"),
            lambda gvar: Function([ta, indices, values], body, self._ta()),
        )

    def define_tensor_array_split(self) -> None:
        """``tensor_array_split(ta, value, lengths)``: element ``k`` of ``ta`` becomes the next
        ``lengths[k]`` rows of ``value``."""
        write = self.get_global_var("tensor_array_write")
        take = self.get_global_var("tensor_take")

        lengths_type = TensorType((AnyDim(),), "int32")
        helper = split_step(write, take, self._ta(), self.tensor_type_var(), lengths_type)
        step = self.defs.define(self.get_name("ta_split_helper"), helper)
        ta, value = Var("tensor_array", self._ta()), Var("value", self.tensor_type_var())
        lengths = Var("lengths", TensorType((AnyDim(),), "int32"))
        limit = op.take(op.shape_of(lengths, "int32"), const(0))
        body = apply(step, ta, value, const(0), const(0), limit, lengths)
        self.defs.define(
            self.get_name("tensor_array_split"),
            lambda gvar: Function([ta, value, lengths], body, self._ta()),
        )

    def define_tensor_array_concat(self) -> None:
        """``tensor_array_concat(ta)``: the elements joined on axis 0 (``tensor_nil`` for an
        empty array)."""
        join = self.get_global_var("tensor_concatenate")
        build = concat_all(self.defs, join, self.tensor_type_var, self.ctors[0])
        self.defs.define(self.get_name("tensor_array_concat"), build)

    def define_tensor_array_stack(self) -> None:
        """``tensor_array_stack(ta)``: the elements stacked on a new first axis."""
        expand = self.get_global_var("tensor_expand_dims")
        join = self.get_global_var("tensor_concatenate")
        ta = Var("tensor_array", self._ta())
        grown = Var("expanded")
        p = self.prelude
        body = Let(
            grown,
            apply(p.map, expand, ta),
            apply(p.foldl, join, apply(p.hd, grown), apply(p.tl, grown)),
        )
        self.defs.define(
            self.get_name("tensor_array_stack"),
            lambda gvar: Function([ta], body, self.tensor_type_var()),
        )

    def define_tensor_array_gather(self) -> None:
        """``tensor_array_gather(ta, indices)``: elements ``indices`` stacked."""
        stack = self.get_global_var("tensor_array_stack")
        read = self.get_global_var("tensor_array_read")

        def helper(gvar: Any) -> Function:
            ta, accu = Var("ta", self._ta()), Var("accu", self._ta())
            current, limit, indices = scalar_var("current"), scalar_var("limit"), self._indices()
            rest = apply(
                gvar,
                ta,
                self.cons(apply(read, ta, op.take(indices, one_more(current, -1))), accu),
                one_more(current, -1),
                limit,
                indices,
            )
            body = If(op.equal(current, const(0)), apply(stack, accu), rest)
            return Function([ta, accu, current, limit, indices], body, self.tensor_type_var())

        step = self.defs.define(self.get_name("tensor_array_gather_helper"), helper)
        ta, indices = Var("tensor_array", self._ta()), self._indices()
        limit, current = (op.take(op.shape_of(indices, "int32"), const(0)) for _ in range(2))
        self.defs.define(
            self.get_name("tensor_array_gather"),
            lambda gvar: Function(
                [ta, indices],
                apply(step, ta, self.nil(), current, limit, indices),
                self.tensor_type_var(),
            ),
        )

    def register(self) -> None:
        """Declare ``tensor_t`` and every function of this dtype (once per module)."""
        if any(h.name_hint == self.get_name("tensor_t") for h in module_types(self.defs.mod)):
            header, *ctors = adt_of(self.defs.mod, self.get_name("tensor_t"))
            self.tensor_type_var, self.ctors = header, ctors
            return
        self.define_tensor_adt()
        self.define_tensor_take()
        self.define_tensor_expand_dims()
        self.define_tensor_concat()
        self.define_tensor_array()
        self.define_tensor_array_read()
        self.define_tensor_array_write()
        for rank in range(1, MAX_RANK + 1):
            self.define_tensor_array_unstack(rank)
        self.define_tensor_array_scatter()
        self.define_tensor_array_split()
        self.define_tensor_array_concat()
        self.define_tensor_array_stack()
        self.define_tensor_array_gather()
