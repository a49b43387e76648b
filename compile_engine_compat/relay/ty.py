"""``relay.ty``: Relay's types, as plain Python objects that know their Relax form.

The bottom of the Relay wing: the expressions (:mod:`.expr`) carry these types, and the emitter
(:mod:`.to_relax`) reads them back from the Relax function it builds (:func:`from_struct_info`).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any as AnyT

import numpy as np
import tvm
import tvm_ffi
from tvm import relax, tirx

from compile_engine_compat.boundary import handle_of
from compile_engine_compat.relay._impl.origin import relay_origin

__all__ = [
    "Any",
    "FuncType",
    "GlobalTypeVar",
    "IncompleteType",
    "RefType",
    "ShapeVar",
    "TensorType",
    "TupleType",
    "Type",
    "TypeCall",
    "TypeConstraint",
    "TypeKind",
    "TypeRelation",
    "TypeVar",
    "is_dynamic",
    "relax_checked_type",
    "scalar_type",
]


class RelayTypeError(TypeError, RuntimeError):
    """A Relay graph that Relax rejects (wrong shapes or dtypes), named by its Relay op.

    Also a ``RuntimeError``: Relay raised a ``tvm.error.TVMError`` (a ``RuntimeError``) here,
    so ``except tvm.error.TVMError`` in legacy code still catches it.
    """


class Type:
    """Base of the Relay types (``relay.ty``)."""

    def __ne__(self, other: object) -> bool:
        return not self == other


def _unconnected_equal(lhs: object, rhs: object) -> bool:
    raise RuntimeError("compile_engine_compat.relay is not assembled: import it first")


#: Relay's structural equality of types, ``(lhs, rhs) -> bool``: the wing's comparison
#: (``relay/_impl/type_equal.py``, which reads these classes), set by :func:`connect_equality`.
_TYPE_EQUAL: list[Callable[[object, object], bool]] = [_unconnected_equal]


def connect_equality(types_equal: Callable[[object, object], bool]) -> None:
    """Give the composite types their ``==`` (called by ``relay/__init__`` only)."""
    _TYPE_EQUAL[0] = types_equal


def _structurally_equal(self: Type, other: object) -> bool:
    """``==`` of the composite types: Relay's structural equality (``tvm.ir.structural_equal``:
    a function type's type parameters pair by position, a free type variable only itself)."""
    return _TYPE_EQUAL[0](self, other)


#: Relay's ``Any`` dimensions are int64 shape variables named with this prefix.
_ANY_PREFIX = "any_dim"
#: An integer shape variable of another dtype -> its int64 twin: (variable, twin) by address.
_int64_twins: dict[int, tuple[AnyT, AnyT]] = {}
_twins_lock = threading.Lock()


def _is_any(value: AnyT) -> bool:
    return isinstance(value, tirx.Var) and str(value.name).startswith(_ANY_PREFIX)


def _int64_var(var: AnyT) -> AnyT:
    """The int64 variable standing for integer shape variable ``var`` (one per variable, so
    ``n`` in two shapes is still one dimension), as Relay cast shape variables to int64."""
    with _twins_lock:
        key = handle_of(var)
        if key not in _int64_twins:
            _int64_twins[key] = (var, tirx.Var(str(var.name), "int64"))
        return _int64_twins[key][1]


def _int64_expr(expr: AnyT) -> AnyT:
    """An integer shape expression of another dtype (``d3 // 4`` of int32 ``te.var``s) rebuilt
    in int64, each variable by its twin, as Relay cast shapes."""
    if isinstance(expr, tirx.IntImm):
        return tirx.IntImm("int64", int(expr.value))
    if isinstance(expr, tirx.Var) and str(expr.ty.dtype).startswith(("int", "uint")):
        return expr if str(expr.ty.dtype) == "int64" else _int64_var(expr)
    if hasattr(expr, "a") and hasattr(expr, "b"):  # Add, Sub, Mul, FloorDiv, FloorMod, Min, Max
        try:
            return type(expr)(_int64_expr(expr.a), _int64_expr(expr.b))
        except TypeError:
            pass  # a node whose constructor takes more: refused below
    raise TypeError(
        f"the shape expression {expr} is {expr.ty.dtype}: Relax shapes are int64; build it "
        "from int64 variables (te.var(name, 'int64')), or from integer shape variables and "
        "+ - * // % min max"
    )


def _dim(value: AnyT) -> AnyT:
    """A shape entry as Relay kept it: Python ints become int64 ``IntImm``; an integer shape
    variable of another dtype (``te.var("n")`` is int32) its int64 twin; each ``Any`` a fresh
    variable (two positions holding one ``relay.Any()`` object are two unknowns, as in Relay)."""
    if isinstance(value, bool):
        raise TypeError(f"a shape entry must be an int or a PrimExpr, got {value!r}")
    if isinstance(value, int | np.integer):
        if value < 0:
            # Relay accepted it here and failed later, deep in type inference or the build.
            raise ValueError(
                f"a shape entry must be >= 0, got {int(value)}: use relay.Any() for a dimension "
                "known only at run time"
            )
        return tirx.IntImm("int64", int(value))
    if isinstance(value, tirx.IntImm):
        return _dim(int(value.value))
    if _is_any(value):
        return Any()
    ty = getattr(value, "ty", None)
    if isinstance(value, tirx.Var) and isinstance(ty, tvm.ir.PrimType):
        dtype = str(ty.dtype)
        if dtype == "int64":
            return value
        if dtype.startswith(("int", "uint")):
            return _int64_var(value)
        raise TypeError(f"a shape variable must be an integer, got {value.name}: {dtype}")
    # A symbolic dimension: any expression whose type is a PrimType (n * 2).
    if isinstance(ty, tvm.ir.PrimType):
        return value if str(ty.dtype) == "int64" else _int64_expr(value)
    raise TypeError(f"a shape entry must be an int or a PrimExpr, got {value!r}")


def _same_dim(a: AnyT, b: AnyT) -> bool:
    if isinstance(a, tirx.IntImm) and isinstance(b, tirx.IntImm):
        return int(a.value) == int(b.value)
    if _is_any(a) and _is_any(b):
        return True  # Relay: Any equals Any (both unknown)
    # d2 * d3 built twice is one dimension: compared by structure (variables by identity).
    if bool(a.same_as(b)) or bool(tvm_ffi.structural_equal(a, b)):
        return True
    return _provably_equal(a, b)


def _provably_equal(a: AnyT, b: AnyT) -> bool:
    """Whether two symbolic dimensions (int64, as :func:`_dim` keeps them) are provably one:
    ``t + t`` as Relay's concatenate typed it, ``t * 2`` as Relax infers it."""
    if not all(isinstance(getattr(d, "ty", None), tvm.ir.PrimType) for d in (a, b)):
        return False
    try:
        return bool(tvm.sym.Analyzer().can_prove_equal(a, b))
    except tvm.error.TVMError:
        return False


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
        # TVM 0.19 spelled a bare "int"/"uint"/"float" with its bits (int32); 0.27 keeps it bare.
        spelled = str(tvm.DataType(dtype))
        self.dtype = f"{spelled}32" if spelled in ("int", "uint", "float") else spelled

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

    __eq__ = _structurally_equal

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

    __eq__ = _structurally_equal

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
        A ``TensorType`` gives each position holding an ``Any`` its own variable, so
        ``[relay.Any()] * 3`` is three independent dimensions, as in Relay.
    """
    return tirx.Var(f"any_dim{next(_any_ids)}", "int64")


def from_struct_info(info: AnyT) -> Type:
    """The Relay type of a Relax struct info (tensor or tuple of them)."""
    if isinstance(info, relax.TupleType):
        return TupleType([from_struct_info(f) for f in info.fields])
    if isinstance(info, relax.TensorType) and info.shape is not None:
        shape = info.shape.values if hasattr(info.shape, "values") else info.shape
        return TensorType(list(shape), info.dtype)
    if isinstance(info, relax.TensorType) and info.ndim >= 0:
        # Known rank, shape known only at run time (a data-dependent op on Any dimensions):
        # Relay's type has an Any in each position.
        return TensorType([Any() for _ in range(info.ndim)], info.dtype)
    if isinstance(info, relax.FuncType) and info.params is not None:
        return FuncType([from_struct_info(p) for p in info.params], from_struct_info(info.ret))
    raise RelayTypeError(f"the Relax value of type {info} has no Relay type")


# -- upstream Relay test files (test_type_infer): checked_type and scalar_type ------------------
def scalar_type(dtype: str) -> TensorType:
    """``relay.scalar_type(dtype)``: the type of a 0-d tensor, ``TensorType((), dtype)``."""
    return TensorType((), dtype)


@property  # type: ignore[misc]
def relax_checked_type(self: AnyT) -> Type:
    """``checked_type`` of a Relax function or variable (served on them by ``install()``).

    A front-end module holds Relax functions, so ``mod["main"].checked_type`` is asked of one:
    it is Relay's type of the Relax type, a ``relay.FuncType`` of ``relay.TensorType``s (as
    ``relay.Function.checked_type`` is after inference). Raises ``RelayTypeError`` for a Relax
    type Relay had no form of (shapes, objects, packed functions). A function the interpreter
    evaluates (one with ADTs, kept as an untyped stand-in) has the type its Relay function
    declares (its parameters' annotations and its return type), or else the type inferred from
    its constructors, matches and annotations as TVM 0.19's ``InferType`` found it.
    """
    try:
        return from_struct_info(self.ty)
    except RelayTypeError:
        origin = relay_origin(self) if isinstance(self, relax.Function) else None
        declared = _declared_type(origin) or _inferred_type(origin)
        if declared is None:
            raise
        return declared


#: How the type of an interpreted function is inferred where its annotations leave it open:
#: set by the interpreter's definitions when a module first stores such a function (its
#: inference, ``interpret.adt_types``, sits above this module).
INFER_INTERPRETED: list[Callable[[AnyT], FuncType | None]] = []


def _inferred_type(func: AnyT) -> FuncType | None:
    """The type inferred for an interpreted Relay function, or None."""
    if func is None or not hasattr(func, "type_params"):
        return None
    return next((found for infer in INFER_INTERPRETED if (found := infer(func))), None)


def _declared_type(func: AnyT) -> FuncType | None:
    """The type a Relay function's annotations declare, or None where one is missing."""
    params = getattr(func, "params", None)
    ret = getattr(func, "ret_type", None)
    if params is None or ret is None or any(p.type_annotation is None for p in params):
        return None
    return FuncType([p.type_annotation for p in params], ret, func.type_params)


def is_dynamic(tensor_type: Type) -> bool:
    """``relay.ty.is_dynamic(t)``: whether a dimension of the tensor type is ``relay.Any()``."""
    if not isinstance(tensor_type, TensorType):
        raise TypeError(f"is_dynamic takes a relay.TensorType, got {tensor_type!r}")
    return any(_is_any(d) for d in tensor_type.shape)


# -- type variables, relations and the other type nodes (relay.TypeVar, ...) --------------------
class TypeKind(IntEnum):
    """Relay's kinds of types (``relay.TypeKind``)."""

    Type = 0
    ShapeVar = 1
    BaseType = 2
    Constraint = 4
    AdtHandle = 5
    TypeData = 6


class _NoRelaxForm:
    """A type the emitter cannot build a value of: a type-level node (a variable, a relation,
    a call of a type constructor, a reference) has no Relax type."""

    def struct_info(self) -> AnyT:
        raise RelayTypeError(
            f"{self!r} has no Relax form: a value the front end builds has a TensorType, "
            "TupleType or FuncType of them (Relax has no type variables, relations or references)"
        )


class TypeVar(_NoRelaxForm, Type):
    """``relay.TypeVar(name_hint, kind=TypeKind.Type)``: a type variable (one object, compared
    by identity, as Relay's), for ``FuncType(type_params=...)`` and type-level code."""

    def __init__(self, name_hint: str, kind: TypeKind = TypeKind.Type) -> None:
        self.name_hint = str(name_hint)
        self.kind = TypeKind(kind)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return self.name_hint


def ShapeVar(name: str) -> TypeVar:
    """``relay.ShapeVar(name)``: a type variable of kind ``ShapeVar``."""
    return TypeVar(name, TypeKind.ShapeVar)


class GlobalTypeVar(TypeVar):
    """``relay.GlobalTypeVar(name_hint, kind=TypeKind.AdtHandle)``: a global type name."""

    def __init__(self, name_hint: str, kind: TypeKind = TypeKind.AdtHandle) -> None:
        super().__init__(name_hint, kind)

    def __call__(self, *args: Type) -> TypeCall:
        """``List(a)``: the ADT applied to type arguments (Relay's ``GlobalTypeVar.__call__``)."""
        return TypeCall(self, args)


class IncompleteType(Type):
    """``relay.IncompleteType(kind=TypeKind.Type)``: a type still to infer. As a variable's
    annotation it is no annotation (``relay.var("x", IncompleteType())`` is ``relay.var("x")``:
    the type comes from how the variable is used, where the front end infers it)."""

    def __init__(self, kind: TypeKind = TypeKind.Type) -> None:
        self.kind = TypeKind(kind)

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "?"


class TypeCall(_NoRelaxForm, Type):
    """``relay.TypeCall(func, args)``: a type constructor applied to types."""

    def __init__(self, func: Type, args: Sequence[Type]) -> None:
        self.func = func
        self.args = tuple(args)

    __eq__ = _structurally_equal

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{self.func!r}[{', '.join(map(repr, self.args))}]"


class TypeConstraint(_NoRelaxForm, Type):
    """``relay.TypeConstraint``: the base of the constraints of a ``FuncType``."""


class TypeRelation(TypeConstraint):
    """``relay.TypeRelation(func, args, num_inputs, attrs)``: ``func(args, num_inputs, attrs,
    reporter)`` relates the types ``args`` (the first ``num_inputs`` are the inputs)."""

    def __init__(
        self, func: AnyT, args: Sequence[Type], num_inputs: int, attrs: AnyT = None
    ) -> None:
        self.func = func
        self.args = tuple(args)
        self.num_inputs = int(num_inputs)
        self.attrs = attrs

    __eq__ = _structurally_equal
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TypeRelation({getattr(self.func, '__name__', self.func)}, {list(self.args)})"


class RefType(_NoRelaxForm, Type):
    """``relay.RefType(value)``: the type of a reference to a value of type ``value``."""

    def __init__(self, value: Type) -> None:
        self.value = value

    __eq__ = _structurally_equal

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Ref[{self.value!r}]"
