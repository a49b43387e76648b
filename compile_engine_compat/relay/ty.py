"""``relay.ty``: Relay's types, as plain Python objects that know their Relax form.

The bottom of the Relay wing: the expressions (:mod:`.expr`) carry these types, and the emitter
(:mod:`.to_relax`) reads them back from the Relax function it builds (:func:`from_struct_info`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any as AnyT

import numpy as np
import tvm
from tvm import relax, tirx

__all__ = ["Any", "FuncType", "TensorType", "TupleType", "Type"]


class RelayTypeError(TypeError):
    """A Relay graph that Relax rejects (wrong shapes or dtypes), named by its Relay op."""


class Type:
    """Base of the Relay types (``relay.ty``)."""

    def __ne__(self, other: object) -> bool:
        return not self == other


def _dim(value: AnyT) -> AnyT:
    """A shape entry as Relay kept it: Python ints become int64 ``IntImm``."""
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
