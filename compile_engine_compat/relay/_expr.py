"""Relay's expression and type nodes, as plain Python objects that know their Relax form.

A Relay program built with these classes is a DAG of immutable nodes. Nothing is checked or
inferred while building (as in Relay); :func:`._emit.infer` turns the
graph into one Relax function and fills in ``checked_type`` on every node it visits.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any as AnyT

import numpy as np
import tvm
from tvm import relax, tirx


class _Late:
    """What the expression classes use from the modules built on top of them.

    Operators build calls through the op table (:mod:`._ops`), and ``astext``, ``checked_type``
    and TVM's view of an expression go through the emitter (:mod:`._emit`); both import this
    module, so this one never imports them. ``relay/__init__`` connects them once
    (:func:`connect`), before anything can build an expression.
    """

    builder: Callable[[str], AnyT]
    relay_op: AnyT  # the RelayOp class (Any: calls on its instances are checked there)
    to_relax: Callable[[AnyT], AnyT]
    function_to_relax: Callable[[AnyT], AnyT]


_late = _Late()


def connect(
    builder: Callable[[str], AnyT],
    relay_op: type,
    to_relax: Callable[[AnyT], AnyT],
    function_to_relax: Callable[[AnyT], AnyT],
) -> None:
    """Give the expression classes the op table's builders and the emitter (see :class:`_Late`)."""
    _late.builder, _late.relay_op = builder, relay_op
    _late.to_relax, _late.function_to_relax = to_relax, function_to_relax


__all__ = [
    "Any",
    "Attrs",
    "Call",
    "Constant",
    "Expr",
    "FuncType",
    "Function",
    "Let",
    "RelayTypeError",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "Type",
    "Var",
    "const",
    "var",
]


class RelayTypeError(TypeError):
    """A Relay graph that Relax rejects (wrong shapes or dtypes), named by its Relay op."""


# -- types --------------------------------------------------------------------------------------


class Type:
    """Base of the Relay types (``relay.ty``)."""

    def __ne__(self, other: object) -> bool:
        return not self == other


def _dim(value: AnyT) -> AnyT:
    """A shape entry as Relay kept it: Python ints become int64 ``IntImm``."""
    if isinstance(value, bool):
        raise TypeError(f"a shape entry must be an int or a PrimExpr, got {value!r}")
    if isinstance(value, int | np.integer):
        return tirx.IntImm("int64", int(value))
    if isinstance(value, tirx.IntImm):
        return tirx.IntImm("int64", int(value.value))
    # A symbolic dimension: any expression whose type is a PrimType (a tirx.Var, n * 2).
    if isinstance(getattr(value, "ty", None), tvm.ir.PrimType):
        return value
    raise TypeError(f"a shape entry must be an int or a PrimExpr, got {value!r}")


def _same_dim(a: AnyT, b: AnyT) -> bool:
    if isinstance(a, tirx.IntImm) and isinstance(b, tirx.IntImm):
        return int(a.value) == int(b.value)
    return a.same_as(b)


class TensorType(Type):
    """``relay.TensorType(shape, dtype="float32")``.

    Parameters
    ----------
    shape : sequence of int or PrimExpr
        The shape; :func:`Any` marks a dimension known only at run time.
    dtype : str
        The element type.
    """

    def __init__(self, shape: Sequence[AnyT], dtype: str = "float32") -> None:
        self.shape = tuple(_dim(d) for d in shape)
        self.dtype = str(tvm.DataType(dtype))

    @property
    def concrete_shape(self) -> tuple[int, ...]:
        """The shape as Python ints (raises ``TypeError`` for a symbolic dimension)."""
        return tuple(int(d) for d in self.shape)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorType)
            and self.dtype == other.dtype
            and len(self.shape) == len(other.shape)
            and all(_same_dim(a, b) for a, b in zip(self.shape, other.shape))
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        dims = ", ".join(str(int(d)) if isinstance(d, tirx.IntImm) else "?" for d in self.shape)
        comma = "," if len(self.shape) == 1 else ""
        return f"Tensor[({dims}{comma}), {self.dtype}]"

    def struct_info(self) -> AnyT:
        """The Relax form (``relax.TensorType``)."""
        return relax.TensorType(list(self.shape), self.dtype)


class TupleType(Type):
    """``relay.TupleType(fields)``."""

    def __init__(self, fields: Sequence[Type]) -> None:
        self.fields = tuple(fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TupleType) and self.fields == other.fields

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"({', '.join(map(repr, self.fields))})"

    def struct_info(self) -> AnyT:
        """The Relax form (``relax.TupleType``)."""
        return relax.TupleType([f.struct_info() for f in self.fields])  # type: ignore[attr-defined]


class FuncType(Type):
    """``relay.FuncType(arg_types, ret_type, type_params=None, type_constraints=None)``."""

    def __init__(
        self,
        arg_types: Sequence[Type],
        ret_type: Type,
        type_params: Sequence[AnyT] | None = None,
        type_constraints: Sequence[AnyT] | None = None,
    ) -> None:
        self.arg_types = tuple(arg_types)
        self.ret_type = ret_type
        self.type_params = tuple(type_params or ())
        self.type_constraints = tuple(type_constraints or ())

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FuncType)
            and self.arg_types == other.arg_types
            and self.ret_type == other.ret_type
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"fn ({', '.join(map(repr, self.arg_types))}) -> {self.ret_type!r}"


_any_ids = itertools.count()


def Any() -> AnyT:
    """A dimension known only at run time (Relay's ``relay.Any()``).

    Returns
    -------
    tvm.tirx.Var
        A fresh int64 shape variable; in Relax it is a symbolic dimension of the parameter.
    """
    return tirx.Var(f"any_dim{next(_any_ids)}", "int64")


def from_struct_info(info: AnyT) -> Type:
    """The Relay type of a Relax struct info (tensor or tuple of them)."""
    if isinstance(info, relax.TupleType):
        return TupleType([from_struct_info(f) for f in info.fields])
    if isinstance(info, relax.TensorType) and info.shape is not None:
        shape = info.shape.values if hasattr(info.shape, "values") else info.shape
        return TensorType(list(shape), info.dtype)
    raise RelayTypeError(f"the Relax value of type {info} has no Relay type")


# -- attributes ---------------------------------------------------------------------------------


class Attrs:
    """A call's attributes, read as Relay's were (``call.attrs.padding``, ``.axis``).

    Parameters
    ----------
    type_key : str
        Relay's attribute type, e.g. ``"relay.attrs.Conv2DAttrs"``.
    fields : mapping
        Attribute name to value, defaults included.
    """

    def __init__(self, type_key: str, fields: Mapping[str, AnyT]) -> None:
        object.__setattr__(self, "_type_key", type_key)
        object.__setattr__(self, "_fields", dict(fields))

    def __getattr__(self, name: str) -> AnyT:
        fields = object.__getattribute__(self, "_fields")
        if name in fields:
            return fields[name]
        raise AttributeError(f"{self._type_key} has no attribute {name!r}")

    def __setattr__(self, name: str, value: AnyT) -> None:
        raise AttributeError("Relay attributes are immutable")

    def __getitem__(self, name: str) -> AnyT:
        return self._fields[name]

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def keys(self) -> list[str]:
        """The attribute names (Relay's ``Attrs.keys``)."""
        return list(self._fields)

    def get_int_tuple(self, key: str) -> tuple[int, ...]:
        """The attribute as a tuple of ints."""
        return tuple(int(v) for v in self._fields[key])

    def get_int(self, key: str) -> int:
        """The attribute as an int."""
        return int(self._fields[key])

    def get_str(self, key: str) -> str:
        """The attribute as a str."""
        return str(self._fields[key])

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._fields.items())
        return f"{self._type_key}({inner})"


# -- expressions --------------------------------------------------------------------------------


class Expr:
    """Base of the Relay expressions, with Relay's operator overloads."""

    _checked_type: Type | None = None

    @property
    def checked_type(self) -> Type:
        """The type found by inference (``relay.transform.InferType`` / ``run_infer_type``)."""
        if self._checked_type is None:
            raise ValueError(
                "The type checker has not populated the checked_type for this node: run "
                "relay.transform.InferType() or relay.testing.run_infer_type first"
            )
        return self._checked_type

    def astype(self, dtype: str) -> Call:
        """``relay.cast(self, dtype)``."""
        return _builder("cast")(self, dtype)

    def astext(self, show_meta_data: bool = True, annotate: AnyT = None) -> str:
        """The Relax TVMScript of this expression as a function of its free variables.

        Relay's text format is gone; the Relax script is the honest text of what runs.
        """
        return str(_late.to_relax(self).script())

    def __add__(self, other: AnyT) -> Call:
        return _builder("add")(self, _operand(other))

    def __radd__(self, other: AnyT) -> Call:
        return _builder("add")(_operand(other), self)

    def __sub__(self, other: AnyT) -> Call:
        return _builder("subtract")(self, _operand(other))

    def __rsub__(self, other: AnyT) -> Call:
        return _builder("subtract")(_operand(other), self)

    def __mul__(self, other: AnyT) -> Call:
        return _builder("multiply")(self, _operand(other))

    def __rmul__(self, other: AnyT) -> Call:
        return _builder("multiply")(_operand(other), self)

    def __truediv__(self, other: AnyT) -> Call:
        return _builder("divide")(self, _operand(other))

    def __rtruediv__(self, other: AnyT) -> Call:
        return _builder("divide")(_operand(other), self)

    def __neg__(self) -> Call:
        return _builder("negative")(self)

    def __lt__(self, other: AnyT) -> Call:
        return _builder("less")(self, _operand(other))

    def __gt__(self, other: AnyT) -> Call:
        return _builder("greater")(self, _operand(other))

    def __le__(self, other: AnyT) -> Call:
        return _builder("less_equal")(self, _operand(other))

    def __ge__(self, other: AnyT) -> Call:
        return _builder("greater_equal")(self, _operand(other))

    def __tvm_ffi_object__(self) -> AnyT:
        """What TVM receives for this expression: the Relax function of its free variables.

        So ``tvm.IRModule.from_expr(expr)`` holds it as ``main``, as Relay's did.
        """
        return _late.to_relax(self)

    # Relay nodes compare by identity (structural equality is tvm.ir.structural_equal's job).
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _builder(name: str) -> AnyT:
    return _late.builder(name)


def _operand(other: AnyT) -> Expr:
    """The other operand of ``x + other``: an Expr only, as in Relay (no implicit dtype)."""
    if isinstance(other, Expr):
        return other
    if isinstance(other, int | float | np.number):
        raise TypeError(f'convert "{other}" with `const` first')
    raise TypeError(f"type {type(other)} not supported")


def _as_expr(value: AnyT) -> Expr:
    """A Relay expression from an Expr, a Python scalar or a NumPy array (a call argument)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, TupleWrapper):
        return value.astuple()
    if isinstance(value, list | tuple):
        return Tuple([_as_expr(v) for v in value])
    return const(value)


class Var(Expr):
    """``relay.Var(name_hint, type_annotation=None)``."""

    def __init__(self, name_hint: str, type_annotation: Type | None = None) -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"name_hint must be a str, got {name_hint!r}")
        if type_annotation is not None and not isinstance(type_annotation, Type):
            raise TypeError(f"type_annotation must be a relay Type, got {type_annotation!r}")
        self.name_hint = name_hint
        self.type_annotation = type_annotation

    def __repr__(self) -> str:
        return f"%{self.name_hint}"


def var(
    name_hint: str,
    type_annotation: Type | str | None = None,
    shape: Sequence[AnyT] | None = None,
    dtype: str = "float32",
) -> Var:
    """Create a variable (Relay's ``relay.var``).

    Parameters
    ----------
    name_hint : str
        The variable's name.
    type_annotation : relay Type or str, optional
        Its type; a str is a dtype of a scalar (as in Relay).
    shape : sequence of int or PrimExpr, optional
        Shorthand for ``TensorType(shape, dtype)``.
    dtype : str
        The dtype used with ``shape``.

    Returns
    -------
    Var
        The variable.
    """
    if type_annotation is not None and shape is not None:
        raise ValueError("Can't specify both type_annotation and shape")
    if shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return Var(name_hint, type_annotation)


class Constant(Expr):
    """``relay.Constant(data)``: ``data`` is a ``tvm.runtime.Tensor``."""

    def __init__(self, data: AnyT) -> None:
        self.data = data

    def __repr__(self) -> str:
        return f"Constant({self.data.numpy()!r})"


def const(value: AnyT, dtype: str | None = None) -> Constant:
    """Create a constant (Relay's ``relay.const``).

    Parameters
    ----------
    value : scalar, NumPy array or tvm.runtime.Tensor
        The value. With no ``dtype``, int64 and float64 values (Python ints and floats
        included) become int32 and float32, as in Relay.
    dtype : str, optional
        The dtype.

    Returns
    -------
    Constant
        The constant.
    """
    if isinstance(value, tvm.runtime.Tensor):
        array = value.numpy()
    else:
        array = np.asarray(value, dtype=dtype)
        if dtype is None:
            # Relay's rule: with no dtype, 64-bit ints and floats (Python's, or NumPy's) become
            # int32 and float32.
            narrow = {np.dtype("int64"): "int32", np.dtype("float64"): "float32"}
            if array.dtype in narrow:
                array = array.astype(narrow[array.dtype])
    if array.dtype == object:
        raise TypeError(f"relay.const takes a number or an array, got {value!r}")
    # np.require keeps a 0-d array 0-d (np.ascontiguousarray would make it 1-d).
    return Constant(tvm.runtime.tensor(np.require(array, requirements="C")))


class Tuple(Expr):
    """``relay.Tuple(fields)``."""

    def __init__(self, fields: Sequence[AnyT], span: AnyT = None) -> None:
        self.fields = [_as_expr(f) for f in fields]
        self.span = span

    def __getitem__(self, index: int) -> Expr:
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields)

    def astuple(self) -> Tuple:
        """Return self (as Relay's ``Tuple.astuple``)."""
        return self


class TupleGetItem(Expr):
    """``relay.TupleGetItem(tuple_value, index)``."""

    def __init__(self, tuple_value: AnyT, index: int) -> None:
        if not isinstance(index, int):
            raise TypeError(f"TupleGetItem index must be an int, got {index!r}")
        self.tuple_value = _as_expr(tuple_value)
        self.index = index


class TupleWrapper:
    """A multi-output op call (``split``, ``batch_norm``, ``topk``), indexed as a tuple.

    Parameters
    ----------
    tuple_value : Expr
        The call producing the tuple.
    size : int
        Its number of fields.
    """

    def __init__(self, tuple_value: Expr, size: int) -> None:
        self.tuple_value = tuple_value
        self.size = size

    def astuple(self) -> Expr:
        """The underlying tuple-valued expression."""
        return self.tuple_value

    def astext(self) -> str:
        """The Relax text of the tuple expression."""
        return self.tuple_value.astext()

    def __getitem__(self, index: int) -> TupleGetItem:
        if not -self.size <= index < self.size:
            raise IndexError("Tuple index out of range")
        return TupleGetItem(self.tuple_value, index % self.size)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[TupleGetItem]:
        return (self[i] for i in range(self.size))

    def __repr__(self) -> str:
        return f"TupleWrapper({self.tuple_value!r}, {self.size})"


class Call(Expr):
    """``relay.Call(op, args, attrs=None, type_args=None, span=None)``.

    ``op`` is a Relay op (``relay.op.get(name)``) or a :class:`Function`. With ``attrs=None`` the
    op's default attributes are used.
    """

    def __init__(
        self,
        op: AnyT,
        args: Sequence[AnyT],
        attrs: Attrs | None = None,
        type_args: Sequence[Type] | None = None,
        span: AnyT = None,
    ) -> None:
        if not isinstance(op, _late.relay_op | Function):
            raise TypeError(f"Call takes a relay op (relay.op.get(name)) or a Function, got {op!r}")
        self.op = op
        self.args = [_as_expr(a) for a in args]
        if attrs is None and isinstance(op, _late.relay_op):
            attrs = op.row.default_attrs()
        self.attrs = attrs
        self.type_args = list(type_args or [])
        self.span = span

    def __repr__(self) -> str:
        name = self.op.name if hasattr(self.op, "name") else "fn"
        return f"Call({name}, {self.args!r})"


class Let(Expr):
    """``relay.Let(variable, value, body)``."""

    def __init__(self, variable: Var, value: AnyT, body: AnyT) -> None:
        if not isinstance(variable, Var):
            raise TypeError(f"Let binds a relay.Var, got {variable!r}")
        self.var = variable
        self.value = _as_expr(value)
        self.body = _as_expr(body)


class Function(Expr):
    """``relay.Function(params, body, ret_type=None, type_params=None, attrs=None)``.

    The engine takes it anywhere it takes a Relax function (``__relax_function__``), and TVM
    itself converts it to its Relax function (``__tvm_ffi_object__``), so
    ``tvm.IRModule.from_expr(func)`` holds that Relax function as ``"main"``.
    """

    def __init__(
        self,
        params: Sequence[Var],
        body: AnyT,
        ret_type: Type | None = None,
        type_params: Sequence[AnyT] | None = None,
        attrs: Mapping[str, AnyT] | None = None,
        span: AnyT = None,
    ) -> None:
        params = list(params)
        for p in params:
            if not isinstance(p, Var):
                raise TypeError(f"Function parameters must be relay.Var, got {p!r}")
        self.params = params
        self.body = _as_expr(body)
        self.ret_type = ret_type
        self.type_params = list(type_params or [])
        self.attrs = dict(attrs or {})
        self.span = span
        self._relax: AnyT = None

    def with_attr(self, attr_key: str, attr_value: AnyT) -> Function:
        """A copy with one more attribute (Relay's ``Function.with_attr``).

        Attributes stay on the Relay function; the Relax function (and so the engine's cache
        key) does not see them.
        """
        return Function(
            self.params,
            self.body,
            self.ret_type,
            self.type_params,
            {**self.attrs, attr_key: attr_value},
        )

    def __call__(self, *args: AnyT) -> Call:
        return Call(self, list(args))

    def __relax_function__(self) -> relax.Function:
        """The Relax function of the same graph (built once; nodes are immutable)."""
        if self._relax is None:
            self._relax = _late.function_to_relax(self)
        return self._relax

    def __tvm_ffi_object__(self) -> relax.Function:
        """What TVM receives for this function: its Relax function."""
        return self.__relax_function__()

    def __repr__(self) -> str:
        return f"fn ({', '.join(map(repr, self.params))})"
