"""``relay.op.tensor``: Relay's element-wise ops and tensor creation, as rows of the op table.

The rows are data (:class:`.registry.OpRow`); the builders (``relay.add``, ``relay.op.tensor.add``)
are made from them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import convert, normalize
from .registry import REQUIRED, OpRow, builders

#: Relay's binary element-wise ops, each the Relax op of the same name.
BINARY = (
    "add subtract multiply divide floor_divide power maximum minimum mod floor_mod equal "
    "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
    "bitwise_and bitwise_or bitwise_xor left_shift right_shift"
).split()
#: Relay's unary element-wise ops, each the Relax op of the same name.
UNARY = (
    "exp log sqrt rsqrt sigmoid tanh sin cos tan asin acos atan sinh cosh asinh acosh atanh abs "
    "negative sign floor ceil round trunc erf isnan isinf isfinite logical_not bitwise_not"
).split()
#: Relay's approximations -> the exact Relax op.
FAST = {"fast_exp": "exp", "fast_tanh": "tanh", "fast_erf": "erf"}

ROWS: tuple[OpRow, ...] = (
    *(
        OpRow(
            n, ("lhs", "rhs"), (), f"relax.{n}", convert.direct(f"relax.{n}"), "relay.attrs.Attrs"
        )
        for n in BINARY
    ),
    *(OpRow(n, ("data",), (), f"relax.{n}", convert.direct(f"relax.{n}")) for n in UNARY),
    *(OpRow(n, ("data",), (), f"relax.{r}", convert.direct(f"relax.{r}")) for n, r in FAST.items()),
    OpRow("log2", ("data",), (), "relax.log", convert.log_base(2.0)),
    OpRow("log10", ("data",), (), "relax.log", convert.log_base(10.0)),
    OpRow(
        "clip",
        ("a",),
        (("a_min", REQUIRED), ("a_max", REQUIRED)),
        "relax.clip",
        convert.clip,
        "relay.attrs.ClipAttrs",
        normalize={"a_min": float, "a_max": float},
    ),
    OpRow(
        "zeros",
        (),
        (("shape", REQUIRED), ("dtype", REQUIRED)),
        "relax.zeros",
        convert.direct("relax.zeros", shape="shape", dtype="dtype"),
        "relay.attrs.InitOpAttrs",
        normalize={"shape": normalize.static_ints("shape"), "dtype": normalize.dtype},
    ),
    OpRow(
        "ones",
        (),
        (("shape", REQUIRED), ("dtype", REQUIRED)),
        "relax.ones",
        convert.direct("relax.ones", shape="shape", dtype="dtype"),
        "relay.attrs.InitOpAttrs",
        normalize={"shape": normalize.static_ints("shape"), "dtype": normalize.dtype},
    ),
    OpRow("zeros_like", ("data",), (), "relax.zeros_like", convert.direct("relax.zeros_like")),
    OpRow("ones_like", ("data",), (), "relax.ones_like", convert.direct("relax.ones_like")),
    OpRow(
        "concatenate",
        ("data",),
        (("axis", REQUIRED),),
        "relax.concat",
        convert.direct("relax.concat", axis="axis"),
        "relay.attrs.ConcatenateAttrs",
        tuple_input=True,
    ),
    OpRow("copy", ("data",), (), "(none: Relax values are immutable)", convert.identity),
    OpRow(
        "einsum",
        ("data",),
        (("equation", REQUIRED),),
        "relax.einsum",
        convert.einsum,
        "relay.attrs.EinsumAttrs",
        tuple_input=True,
    ),
)


#: This family's ops with no Relax equivalent -> what to write instead.
REFUSED: dict[str, str] = {}

#: Short name -> builder (``relay.add`` here).
BUILDERS = builders(ROWS, REFUSED)
globals().update(BUILDERS)
__all__ = sorted(BUILDERS)

if TYPE_CHECKING:
    # The builders are made from the rows, so a type checker cannot see them: to it, every
    # other name here is a builder (at runtime an unknown name still raises AttributeError).
    def __getattr__(name: str) -> Callable[..., Any]: ...
