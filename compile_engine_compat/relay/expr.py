"""``relay.expr``: Relay's expression nodes, as plain Python objects that know their Relax form.

A Relay program built with these classes is a DAG of immutable nodes. Nothing is checked or
inferred while building (as in Relay); :func:`._impl.to_relax.infer` turns
the graph into one Relax function and fills in ``checked_type`` on every node it visits.

The expressions sit below the op table (:mod:`.op`) and the emitter (:mod:`.to_relax`), which
both build on them, so this module imports neither. The few methods that need them (the
operators ``x + y``, ``astext``, TVM's view of an expression and of a ``Function``) reach them
through :data:`UPPER`, which the namespace assembly (``relay/__init__``) fills once with
:func:`connect`, before any expression can exist: importing any module of the Relay wing runs
that assembly first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any as AnyT

import numpy as np
import tvm

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.deprecations import LegacyObject

from .ty import IncompleteType, TensorType, Type

__all__ = ["Call", "Constant", "Expr", "Let", "Tuple", "TupleGetItem", "TupleWrapper", "Var"]
__all__ += ["ExprWithOp", "bind", "const", "var"]
__all__ += [f"{kind}WithFields" for kind in ("Call", "Constant", "If", "Let", "Tuple", "Var")]
__all__ += ["GlobalRef", "NoRelaxForm", "RefCreate", "RefRead", "RefWrite"]
__all__ += ["TupleGetItemWithFields"]
__all__ += [f"Ref{kind}WithFields" for kind in ("Create", "Read", "Write")]
__all__ += ["StaticMemoryPlan", "StorageInfo", "TempExpr"]


def _unconnected(*args: AnyT) -> AnyT:
    raise RuntimeError("compile_engine_compat.relay is not assembled: import it first")


class Upper:
    """What the expressions use from the modules built on top of them (see the docstring).

    Attributes
    ----------
    builder : callable
        ``builder(op_name)``: the builder of a table op (``relay.add``), for the operators.
    to_relax : callable
        ``to_relax(expr, stand_in=False)``: the Relax function of an expression's free variables.
    function_to_relax : callable
        ``function_to_relax(func)``: the Relax function of a ``relay.Function``.
    astext : callable
        ``astext(node, show_meta_data)``: Relay's text of an expression (the printer).
    bind : callable
        ``bind(expr, binds)``: ``expr`` with variables replaced (the graph walk).
    """

    def __init__(self) -> None:
        self.builder: Callable[[str], Callable[..., AnyT]] = _unconnected
        self.to_relax: Callable[..., AnyT] = _unconnected
        self.function_to_relax: Callable[[AnyT], AnyT] = _unconnected
        self.astext: Callable[..., str] = _unconnected
        self.bind: Callable[[AnyT, AnyT], AnyT] = _unconnected


#: The one connection from the expressions up to the op table and the emitter.
UPPER = Upper()


def connect(
    builder: Callable[[str], Callable[..., AnyT]],
    to_relax: Callable[..., AnyT],
    function_to_relax: Callable[[AnyT], AnyT],
    astext: Callable[..., str] | None = None,
    bind: Callable[[AnyT, AnyT], AnyT] | None = None,
) -> None:
    """Give the expressions the op table's builders, the emitter and the printer.

    Called by ``relay/__init__`` only.
    """
    UPPER.builder = builder
    UPPER.to_relax = to_relax
    UPPER.function_to_relax = function_to_relax
    if astext is not None:
        UPPER.astext = astext
    if bind is not None:
        UPPER.bind = bind


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

    def with_fields(self, **changes: AnyT) -> Attrs:
        """A copy with the given attributes replaced (the same type)."""
        return Attrs(self._type_key, {**self._fields, **changes})

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


class Expr(LegacyObject):
    """Base of the Relay expressions, with Relay's operator overloads."""

    _checked_type: Type | None = None
    #: Where the node came from (a ``relay.Span``); None unless the builder was given one.
    span: AnyT = None

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
        return UPPER.builder("cast")(self, dtype)

    def astext(self, show_meta_data: bool = True, annotate: AnyT = None) -> str:
        """Relay's text of this expression (``#[version = "0.0.5"]``, ``%x``, attributes).

        ``annotate`` (Relay's per-node comment hook) is not supported and ignored.
        :meth:`script` prints the Relax function that runs.
        """
        return UPPER.astext(self, show_meta_data)

    def script(self) -> str:
        """The Relax TVMScript of this expression, as a function of its free variables."""
        return str(UPPER.to_relax(self).script())

    def __str__(self) -> str:
        return self.astext()

    def __add__(self, other: AnyT) -> Call:
        return UPPER.builder("add")(self, _operand(other))

    def __radd__(self, other: AnyT) -> Call:
        return UPPER.builder("add")(_operand(other), self)

    def __sub__(self, other: AnyT) -> Call:
        return UPPER.builder("subtract")(self, _operand(other))

    def __rsub__(self, other: AnyT) -> Call:
        return UPPER.builder("subtract")(_operand(other), self)

    def __mul__(self, other: AnyT) -> Call:
        return UPPER.builder("multiply")(self, _operand(other))

    def __rmul__(self, other: AnyT) -> Call:
        return UPPER.builder("multiply")(_operand(other), self)

    def __truediv__(self, other: AnyT) -> Call:
        return UPPER.builder("divide")(self, _operand(other))

    def __rtruediv__(self, other: AnyT) -> Call:
        return UPPER.builder("divide")(_operand(other), self)

    def __neg__(self) -> Call:
        return UPPER.builder("negative")(self)

    def __lt__(self, other: AnyT) -> Call:
        return UPPER.builder("less")(self, _operand(other))

    def __gt__(self, other: AnyT) -> Call:
        return UPPER.builder("greater")(self, _operand(other))

    def __le__(self, other: AnyT) -> Call:
        return UPPER.builder("less_equal")(self, _operand(other))

    def __ge__(self, other: AnyT) -> Call:
        return UPPER.builder("greater_equal")(self, _operand(other))

    def __call__(self, *args: AnyT) -> Call:
        """``relay.Call(self, args)``: applying an expression (a closure, ``f(a)(b)``), as
        Relay's expressions could be applied."""
        return Call(self, list(args))

    def __tvm_ffi_object__(self) -> AnyT:
        """What TVM receives for this expression: the Relax function of its free variables.

        So ``tvm.IRModule.from_expr(expr)`` holds it as ``main``, as Relay's did. The form is
        built once and remembered, so that :func:`as_expr` maps it back: a list of expressions
        through ``tvm.runtime.convert`` still makes a ``relay.Tuple`` of them (Relay's tests
        write ``relay.Tuple(tvm.runtime.convert([call]))``).
        """
        converted = self.__dict__.get("_ffi_object")
        if converted is None:
            converted = UPPER.to_relax(self, stand_in=True)
            self.__dict__["_ffi_object"] = converted
            # Held strongly: after tvm.runtime.convert([...]) only the FFI form is left.
            _CONVERTED_VARS[handle_of(converted)] = (converted, self)
        return converted

    # Relay nodes compare by identity (structural equality is tvm.ir.structural_equal's job).
    __eq__ = object.__eq__
    __hash__ = object.__hash__


def _operand(other: AnyT) -> Expr:
    """The other operand of ``x + other``: an Expr only, as in Relay (no implicit dtype)."""
    if isinstance(other, Expr):
        return other
    if isinstance(other, int | float | np.number):
        raise TypeError(f'convert "{other}" with `const` first')
    raise TypeError(f"type {type(other)} not supported")


def as_expr(value: AnyT) -> Expr:
    """A Relay expression from an Expr, a Python scalar or a NumPy array (a call argument)."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, TupleWrapper):
        return value.astuple()
    if isinstance(value, tvm.runtime.Object) and handle_of(value) in _CONVERTED_VARS:
        return _CONVERTED_VARS[handle_of(value)][1]  # an expression through tvm.runtime.convert
    if isinstance(value, list | tuple):
        return Tuple([as_expr(v) for v in value])
    if isinstance(value, tvm.ir.GlobalVar):
        return GlobalRef(value)
    return const(value)


class Var(Expr):
    """``relay.Var(name_hint, type_annotation=None, span=None)``."""

    def __init__(
        self, name_hint: str, type_annotation: Type | None = None, span: AnyT = None
    ) -> None:
        if not isinstance(name_hint, str):
            raise TypeError(f"name_hint must be a str, got {name_hint!r}")
        if type_annotation is not None and not isinstance(type_annotation, Type):
            raise TypeError(f"type_annotation must be a relay Type, got {type_annotation!r}")
        if isinstance(type_annotation, IncompleteType):
            type_annotation = None  # a type still to infer: no annotation
        self.name_hint = name_hint
        self.type_annotation = type_annotation
        self.span = span
        self._vid: Id | None = None

    @property
    def vid(self) -> Id:
        """The variable's identity (Relay's ``Var.vid``): one ``Id`` per variable."""
        if self._vid is None:
            self._vid = Id(self.name_hint)
        return self._vid

    def __repr__(self) -> str:
        return f"%{self.name_hint}"


class Id(LegacyObject):
    """``relay.Id``: a variable's identity (``var.vid``), holding its ``name_hint``; ``same_as``
    is identity."""

    __slots__ = ("name_hint",)

    def __init__(self, name_hint: str) -> None:
        self.name_hint = name_hint


#: The FFI form of a converted expression (its address) -> (that form, the expression).
_CONVERTED_VARS: dict[int, tuple[AnyT, Expr]] = {}


def as_var(value: AnyT) -> AnyT:
    """``value``, or the Relay Var whose FFI form it is (after ``tvm.runtime.convert``)."""
    if isinstance(value, Var) or not isinstance(value, tvm.runtime.Object):
        return value
    entry = _CONVERTED_VARS.get(handle_of(value))
    return entry[1] if entry is not None else value


def var(
    name_hint: str,
    type_annotation: Type | str | None = None,
    shape: Sequence[AnyT] | None = None,
    dtype: str = "float32",
    span: AnyT = None,
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
    span : relay.Span, optional
        Where the variable came from (a frontend's source name).

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
    return Var(name_hint, type_annotation, span)


class Constant(Expr):
    """``relay.Constant(data, span=None)``: ``data`` is a ``tvm.runtime.Tensor``."""

    def __init__(self, data: AnyT, span: AnyT = None) -> None:
        self.data = data
        self.span = span

    def __repr__(self) -> str:
        return f"Constant({self.data.numpy()!r})"


def const(value: AnyT, dtype: str | None = None, span: AnyT = None) -> Constant:
    """Create a constant (Relay's ``relay.const``).

    Parameters
    ----------
    value : scalar, NumPy array or tvm.runtime.Tensor
        The value. With no ``dtype``, int64 and float64 values (Python ints and floats
        included) become int32 and float32, as in Relay.
    dtype : str, optional
        The dtype.
    span : relay.Span, optional
        Where the constant came from (a frontend's source name).

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
    return Constant(tvm.runtime.tensor(np.require(array, requirements="C")), span)


class Tuple(Expr):
    """``relay.Tuple(fields)``."""

    def __init__(self, fields: Sequence[AnyT], span: AnyT = None) -> None:
        self.fields = [as_expr(f) for f in fields]
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
        self.tuple_value = as_expr(tuple_value)
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

    def astext(self, show_meta_data: bool = True) -> str:
        """Relay's text of the tuple expression."""
        return self.tuple_value.astext(show_meta_data)

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


class BaseOp:
    """What a :class:`Call` applies when it is not a function: an op of the table.

    ``relay.op.get(name)`` returns one (:class:`._impl.registry.RelayOp`),
    as Relay's ``tvm.ir.Op``.
    """

    name: str

    def default_attrs(self) -> Attrs:
        """The attributes of a call that gave none (``relay.Call(op, args)``)."""
        raise NotImplementedError("a BaseOp subclass (relay.op.registry.RelayOp) gives them")


class BaseFunc(Expr):
    """What a :class:`Call` applies when it is not an op: a ``relay.Function``."""


class _InferredTypeArgs(list):
    """The type arguments inference gave a call (its arguments' types, then its own)."""


class Call(Expr):
    """``relay.Call(op, args, attrs=None, type_args=None, span=None)``.

    ``op`` is a Relay op (``relay.op.get(name)``), a ``relay.Function``, the ``GlobalVar`` of
    a function of the module (``mod[gv] = func`` first), or a call returning a function (a
    closure). With ``attrs=None`` the op's default attributes are used.
    """

    def __init__(
        self,
        op: AnyT,
        args: Sequence[AnyT],
        attrs: Attrs | None = None,
        type_args: Sequence[Type] | None = None,
        span: AnyT = None,
    ) -> None:
        if not isinstance(op, BaseOp | Expr | tvm.ir.GlobalVar):
            raise TypeError(
                "Call takes a relay op (relay.op.get(name)), a Function, a GlobalVar of the "
                f"module or an expression giving a function, got {op!r}"
            )
        self.op: AnyT = op  # a BaseOp or a BaseFunc (checked above)
        self.args = [as_expr(a) for a in args]
        if attrs is None and isinstance(op, BaseOp):
            attrs = op.default_attrs()
        self.attrs = attrs
        self.type_args = type_args or []  # the setter keeps given ones only
        self.span = span

    @property
    def type_args(self) -> list[Type]:
        """The call's type arguments. Relay's inference gave an op call its arguments' types
        and then its own (the op's type parameters, instantiated): so do they read here, once
        the call is typed, unless the call was built with its own."""
        if self._type_args or not isinstance(self.op, BaseOp) or self._checked_type is None:
            return self._type_args
        types = _InferredTypeArgs()
        for arg in self.args:
            ty = getattr(arg, "_checked_type", None)
            if ty is None:
                return self._type_args
            types.append(ty)
        types.append(self._checked_type)
        return types

    @type_args.setter
    def type_args(self, value: Sequence[Type]) -> None:
        # Inferred ones handed to a new call (Call(op, args, attrs, call.type_args)) are not
        # given: the new call is typed by inference in turn.
        self._type_args = [] if isinstance(value, _InferredTypeArgs) else list(value)

    @property
    def given_type_args(self) -> list[Type]:
        """The type arguments the call was built with (what structural equality and hashing
        compare: a call's identity does not change when inference types it)."""
        return self._type_args

    def __repr__(self) -> str:
        name = self.op.name if hasattr(self.op, "name") else "fn"
        return f"Call({name}, {self.args!r})"


class If(Expr):
    """``relay.If(cond, true_branch, false_branch)``: lowered to ``relax.If``.

    ``cond`` is a boolean scalar (``relay.var("c", shape=(), dtype="bool")``); both branches
    have one type. The Relax function holding an ``If`` is built without a dataflow block
    (Relax keeps control flow out of them), each branch in its own scope.
    """

    def __init__(self, cond: AnyT, true_branch: AnyT, false_branch: AnyT) -> None:
        self.cond = as_expr(cond)
        self.true_branch = as_expr(true_branch)
        self.false_branch = as_expr(false_branch)

    def __repr__(self) -> str:
        return f"if ({self.cond!r}) {{ {self.true_branch!r} }} else {{ {self.false_branch!r} }}"


class Let(Expr):
    """``relay.Let(variable, value, body)``."""

    def __init__(self, variable: Var, value: AnyT, body: AnyT) -> None:
        if not isinstance(variable, Var):
            raise TypeError(f"Let binds a relay.Var, got {variable!r}")
        self.var = variable
        self.value = as_expr(value)
        self.body = as_expr(body)


class NoRelaxForm(Expr):
    """An expression the front end builds, prints and visits but cannot lower to Relax: the
    reference and ADT nodes. ``create_executor("debug")`` evaluates a program holding one with
    the Relay interpreter; ``relay.build`` and the other executors refuse it with
    :attr:`relax_refusal` (Relax values are immutable, and Relax has no ADTs)."""

    relax_refusal: str = ""


_REF_REFUSAL = (
    "Relay references (relay.RefCreate/RefRead/RefWrite) have no Relax form: Relax values are "
    "immutable; evaluate the program with relay.create_executor('debug') (the shim's Relay "
    "interpreter), or thread the value through the function (a parameter and a result)"
)


class RefCreate(NoRelaxForm):
    """``relay.RefCreate(value)``: a new mutable reference holding ``value``."""

    relax_refusal = _REF_REFUSAL

    def __init__(self, value: AnyT, span: AnyT = None) -> None:
        self.value = as_expr(value)
        self.span = span

    def __repr__(self) -> str:
        return f"ref({self.value!r})"


class RefRead(NoRelaxForm):
    """``relay.RefRead(ref)``: the value a reference holds."""

    relax_refusal = _REF_REFUSAL

    def __init__(self, ref: AnyT, span: AnyT = None) -> None:
        self.ref = as_expr(ref)
        self.span = span

    def __repr__(self) -> str:
        return f"ref_read({self.ref!r})"


class RefWrite(NoRelaxForm):
    """``relay.RefWrite(ref, value)``: store ``value`` in ``ref`` (an empty tuple as result)."""

    relax_refusal = _REF_REFUSAL

    def __init__(self, ref: AnyT, value: AnyT, span: AnyT = None) -> None:
        self.ref = as_expr(ref)
        self.value = as_expr(value)
        self.span = span

    def __repr__(self) -> str:
        return f"ref_write({self.ref!r}, {self.value!r})"


class GlobalRef(NoRelaxForm):
    """A function of the module used as a value (``relay.GlobalVar`` passed as an argument,
    ``@map(@hd, %xs)``): Relay's ``GlobalVar`` expression. The interpreter
    (``create_executor("debug")``) evaluates it to that function; Relax has no form of it."""

    relax_refusal = (
        "a module function passed as a value (relay.GlobalVar as an argument) has no Relax "
        "form here: evaluate the program with relay.create_executor('debug', mod=mod)"
    )

    def __init__(self, var: AnyT) -> None:
        if not isinstance(var, tvm.ir.GlobalVar):
            raise TypeError(f"GlobalRef takes a relay.GlobalVar, got {var!r}")
        self.var = var
        self.name_hint = str(var.name_hint)

    def __repr__(self) -> str:
        return f"@{self.name_hint}"


class TempExpr(NoRelaxForm):
    """``relay.TempExpr``: the base of a pass's intermediate expressions (a layout or type in
    the middle of a rewrite). A subclass defines :meth:`realize`; a graph still holding one is
    refused by ``relay.build``, as Relay's code generators refused it."""

    relax_refusal = "a TempExpr is a pass's intermediate value: realize() it before building"

    def realize(self) -> Expr:
        """The normal expression this one stands for (a subclass's to define)."""
        raise NotImplementedError(f"{type(self).__name__} defines no realize()")


class StorageInfo:
    """``relay.expr.StorageInfo(sids, dev_types, sizes)``: the storage ids, device types and
    sizes memory planning gave an expression, as TVM 0.19 recorded them (the shim plans
    memory in Relax: nothing it builds produces one; ``virtual_devices`` is not kept)."""

    def __init__(self, sids: Sequence[int], dev_types: Sequence[int], sizes: Sequence[int]) -> None:
        if not len(sids) == len(dev_types) == len(sizes):
            raise ValueError(
                f"StorageInfo takes one device type and size per storage id, got {len(sids)} "
                f"ids, {len(dev_types)} device types and {len(sizes)} sizes"
            )
        self.storage_ids = [int(s) for s in sids]
        self.device_types = [int(d) for d in dev_types]
        self.storage_sizes = [int(s) for s in sizes]

    def __repr__(self) -> str:
        return f"StorageInfo({self.storage_ids}, {self.device_types}, {self.storage_sizes})"


class StaticMemoryPlan:
    """``relay.expr.StaticMemoryPlan(expr_to_storage_info)``: a memory plan, each expression
    mapped to its :class:`StorageInfo` (a container only, as :class:`StorageInfo` is)."""

    def __init__(self, expr_to_storage_info: Mapping[AnyT, StorageInfo]) -> None:
        bad = [v for v in expr_to_storage_info.values() if not isinstance(v, StorageInfo)]
        if bad:
            raise TypeError(f"StaticMemoryPlan maps expressions to StorageInfo, got {bad[0]!r}")
        self.expr_to_storage_info = dict(expr_to_storage_info)


#: Relay's base of the expressions with operators (``+``, ``astype``): every expression here.
ExprWithOp = Expr


def bind(expr: AnyT, binds: AnyT) -> AnyT:
    """``relay.bind(expr, binds)``: ``expr`` with the variables of ``binds`` (``{Var: Expr}``)
    replaced; the bound parameters of a ``Function`` are dropped from its parameters."""
    return UPPER.bind(expr, binds)


def _with_fields(
    node: AnyT, kind: type[Expr], fields: tuple[str, ...], changes: dict[str, AnyT], build: AnyT
) -> AnyT:
    """``node`` itself when no field changes (None keeps a field), else ``build(**fields)``;
    a ``span`` given is set on the copy."""
    if not isinstance(node, kind):
        raise TypeError(f"{kind.__name__}WithFields takes a relay.{kind.__name__}, got {node!r}")
    values = {f: getattr(node, f) if changes.get(f) is None else changes[f] for f in fields}
    span = changes.get("span")
    if all(values[f] is getattr(node, f) for f in fields) and span is None:
        return node
    copy: AnyT = build(**values)
    copy.span = node.span if span is None else span
    return copy


def CallWithFields(
    call: Call,
    op: AnyT = None,
    args: AnyT = None,
    attrs: AnyT = None,
    type_args: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> Call:
    """``call`` with the given fields replaced (itself when none changes), as Relay's
    (``virtual_device``, before ``span`` as in TVM 0.19, is accepted and unused)."""
    changes = {"op": op, "args": args, "attrs": attrs, "type_args": type_args, "span": span}
    return _with_fields(call, Call, ("op", "args", "attrs", "type_args"), changes, Call)


def ConstantWithFields(
    constant: Constant, data: AnyT = None, virtual_device: AnyT = None, span: AnyT = None
) -> Constant:
    """``constant`` with its data replaced (itself when unchanged)."""
    return _with_fields(constant, Constant, ("data",), {"data": data, "span": span}, Constant)


def IfWithFields(
    if_expr: If,
    cond: AnyT = None,
    true_branch: AnyT = None,
    false_branch: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> If:
    """``if_expr`` with the given branches or condition replaced."""
    changes = {"cond": cond, "true_branch": true_branch, "false_branch": false_branch, "span": span}
    return _with_fields(if_expr, If, ("cond", "true_branch", "false_branch"), changes, If)


def LetWithFields(
    let: Let,
    var: AnyT = None,
    value: AnyT = None,
    body: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> Let:
    """``let`` with the given variable, value or body replaced."""
    changes = {"var": var, "value": value, "body": body, "span": span}
    return _with_fields(
        let, Let, ("var", "value", "body"), changes, lambda var, value, body: Let(var, value, body)
    )


def TupleWithFields(
    tup: Tuple, fields: AnyT = None, virtual_device: AnyT = None, span: AnyT = None
) -> Tuple:
    """``tup`` with its fields replaced."""
    return _with_fields(tup, Tuple, ("fields",), {"fields": fields, "span": span}, Tuple)


def TupleGetItemWithFields(
    tuple_get_item: TupleGetItem,
    tuple_value: AnyT = None,
    index: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> TupleGetItem:
    """``tuple_get_item`` with its tuple or index replaced."""
    changes = {"tuple_value": tuple_value, "index": index, "span": span}
    return _with_fields(
        tuple_get_item, TupleGetItem, ("tuple_value", "index"), changes, TupleGetItem
    )


def VarWithFields(
    variable: Var,
    vid: AnyT = None,
    type_annotation: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> Var:
    """``variable`` with its name (``vid``: the front end's variables are named by a ``str``)
    or type annotation replaced: a new variable, as Relay's."""
    changes = {"name_hint": vid, "type_annotation": type_annotation, "span": span}
    return _with_fields(variable, Var, ("name_hint", "type_annotation"), changes, Var)


def RefCreateWithFields(
    ref_create: RefCreate, value: AnyT = None, virtual_device: AnyT = None, span: AnyT = None
) -> RefCreate:
    """``ref_create`` with its value replaced (``virtual_device`` is accepted and unused)."""
    return _with_fields(
        ref_create, RefCreate, ("value",), {"value": value, "span": span}, RefCreate
    )


def RefReadWithFields(
    ref_read: RefRead, ref: AnyT = None, virtual_device: AnyT = None, span: AnyT = None
) -> RefRead:
    """``ref_read`` with its reference replaced (``virtual_device`` is accepted and unused)."""
    return _with_fields(ref_read, RefRead, ("ref",), {"ref": ref, "span": span}, RefRead)


def RefWriteWithFields(
    ref_write: RefWrite,
    ref: AnyT = None,
    value: AnyT = None,
    virtual_device: AnyT = None,
    span: AnyT = None,
) -> RefWrite:
    """``ref_write`` with its reference or value replaced (``virtual_device`` unused)."""
    changes = {"ref": ref, "value": value, "span": span}
    return _with_fields(ref_write, RefWrite, ("ref", "value"), changes, RefWrite)
