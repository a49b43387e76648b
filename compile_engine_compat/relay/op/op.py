"""``relay.op.op``: the whole op table, ``get(name)`` and Relay's strategy registration.

The table is the rows of every op family (:mod:`.tensor`, :mod:`.transform`, :mod:`.reduce`,
:mod:`.algorithm`, :mod:`.nn`, :mod:`.image`), each family its own module of data; a new family
is one module and one entry of :data:`FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from compile_engine_compat.relay._impl import custom, dyn_twins
from compile_engine_compat.relay._impl.registry import (
    OpRow,
    RelayOp,
    UnsupportedRelayError,
    connect_dynamic,
    dialect_row,
    refused_message,
    relay_op,
)
from compile_engine_compat.relay._impl.relay_strategies import (
    OpImplementation,
    OpSpecialization,
    OpStrategy,
    RelayAttrsView,
    SpecializedCondition,
    strategy_function,
)

from . import algorithm, annotation, image, nn, random, reduce, tensor, transform, vision

__all__ = [
    "MIXED_PRECISION_ATTR",
    "OpImplementation",
    "OpPattern",
    "OpSpecialization",
    "OpStrategy",
    "RelayAttrsView",
    "SpecializedCondition",
    "get",
    "register",
    "register_compute",
    "register_mixed_precision_conversion",
    "register_pattern",
    "register_stateful",
    "register_strategy",
    "strategy_function",
]

#: The op families, each a module of ``ROWS``, ``REFUSED`` and the ``BUILDERS`` made of them.
FAMILIES: tuple[ModuleType, ...] = (
    tensor,
    transform,
    reduce,
    algorithm,
    nn,
    image,
    vision,
    annotation,
    random,
)

connect_dynamic(dyn_twins.twin_emit)  # the dyn.* twins of rows with tensor-valued shapes

#: Relay op name -> row. The single source of the Relay front end's ops.
OP_TABLE: dict[str, OpRow] = {row.name: row for family in FAMILIES for row in family.ROWS}

#: Relay ops with no Relax equivalent in this front end -> what to write instead.
REFUSED_OPS: dict[str, str] = {
    name: why for family in FAMILIES for name, why in family.REFUSED.items()
}


def _builders_by_op_name(family: ModuleType) -> dict[str, Callable[..., Any]]:
    names = [*(row.name for row in family.ROWS), *family.REFUSED]
    return {name: family.BUILDERS[name.rpartition(".")[2]] for name in names}


#: Relay op name -> its builder (``"nn.conv2d"`` -> ``relay.nn.conv2d``).
_BUILDERS: dict[str, Callable[..., Any]] = {
    name: fn for family in FAMILIES for name, fn in _builders_by_op_name(family).items()
}


def get(op_name: str) -> RelayOp:
    """``relay.op.get(op_name)``: the Relay op of that name (one object per name).

    Parameters
    ----------
    op_name : str
        A Relay op name such as ``"nn.conv2d"``.

    Returns
    -------
    RelayOp
        The op; ``.name`` is ``op_name``.

    Raises
    ------
    UnsupportedRelayError
        For a Relay op with no Relax equivalent (the message names the replacement).
    ValueError
        For an unknown name.
    """
    if custom.custom_op(op_name) is not None:  # registered by the program (relay.op.register)
        return custom.custom_op(op_name)  # type: ignore[return-value]
    if op_name in OP_TABLE:
        return relay_op(OP_TABLE[op_name])
    row = dialect_row(op_name)  # relay.qnn.op's ops
    if row is not None:
        return relay_op(row)
    if op_name in REFUSED_OPS:
        raise UnsupportedRelayError(refused_message(op_name, REFUSED_OPS[op_name]))
    raise ValueError(f"Relay op {op_name!r} is not known to the compile-engine-compat front end")


def builder(op_name: str) -> Callable[..., Any]:
    """The Relay builder function of an op (``relay.nn.conv2d`` for ``"nn.conv2d"``).

    Parameters
    ----------
    op_name : str
        A Relay op name, a key of :data:`OP_TABLE` or :data:`REFUSED_OPS`.

    Returns
    -------
    callable
        The builder, with Relay's signature; it returns a ``Call`` (a ``TupleWrapper`` for
        multi-output ops).
    """
    return _BUILDERS[op_name]


def namespace(prefix: str) -> dict[str, Callable[..., Any]]:
    """The builders under ``relay.<prefix>`` (``""`` for the top level, ``"nn"``, ``"image"``).

    Parameters
    ----------
    prefix : str
        The dotted namespace.

    Returns
    -------
    dict of str to callable
        Short name -> builder.
    """
    out = {}
    for name, fn in _BUILDERS.items():
        head, _, short = name.rpartition(".")
        if head == prefix:
            out[short] = fn
    return out


def register_strategy(
    op_name: str, fstrategy: Callable[..., OpStrategy] | None = None, level: int = 10
) -> Any:
    """``relay.op.register_strategy(op_name, fstrategy)``: the op's strategy from now on.

    Usable as a decorator when ``fstrategy`` is omitted.
    """

    def register(fn: Callable[..., OpStrategy]) -> Callable[..., OpStrategy]:
        get(op_name).set_attr("FTVMStrategy", fn, level)
        return fn

    return register(fstrategy) if fstrategy is not None else register


#: The op attribute of a mixed precision conversion function (read by ToMixedPrecision).
MIXED_PRECISION_ATTR = "FTVMMixedPrecisionConversionType"


def register_mixed_precision_conversion(
    op_name: str, func: Callable[[Any, str], list[Any]] | None = None, level: int = 10
) -> Any:
    """``relay.op.register_mixed_precision_conversion(op_name, func=None, level=10)``.

    ``func(call, mixed_precision_type)`` returns ``[category, accumulation dtype, output
    dtype]`` (:mod:`compile_engine_compat.relay.transform.mixed_precision`); it replaces the
    op's default list in ``relay.transform.ToMixedPrecision``. Usable as a decorator.
    """
    if not isinstance(op_name, str):
        raise TypeError(f"the op name must be a str, got {op_name!r}")

    def register(fn: Callable[[Any, str], list[Any]]) -> Callable[[Any, str], list[Any]]:
        if not callable(fn):
            raise TypeError(f"a mixed precision conversion function must be callable, got {fn!r}")
        get(op_name).set_attr(MIXED_PRECISION_ATTR, fn, level)
        return fn

    return register(func) if func is not None else register


def register_legalize(
    op_name: str, legal_op: Callable[..., Any] | None = None, level: int = 10
) -> Any:
    """``relay.op.register_legalize(op_name, legal_op=None, level=10)``: the op's legalization
    function (``FTVMLegalize``), read by ``relay.transform.Legalize``; usable as a decorator.

    ``legal_op(attrs, inputs, types)`` returns the call's replacement, or None to keep it.
    """
    if not isinstance(op_name, str):
        raise TypeError(f"the op name must be a str, got {op_name!r}")

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(fn):
            raise TypeError(f"a legalization function must be callable, got {fn!r}")
        get(op_name).set_attr("FTVMLegalize", fn, level)
        return fn

    return register(legal_op) if legal_op is not None else register


# -- upstream Relay test files (test_type_infer): ops a program registers itself -----------------
OpPattern = custom.OpPattern
register_pattern = custom.register_pattern
register_stateful = custom.register_stateful


def register_compute(
    op_name: str, compute: Callable[..., Any] | None = None, level: int = 10
) -> Any:
    """``relay.op.register_compute(op_name, compute)``: a custom op's TE compute
    (``compute(attrs, inputs, out_type) -> [te.Tensor]``); usable as a decorator.

    Raises
    ------
    UnsupportedRelayError
        For an op of the table: its Relax form computes it (give the Relax op an implementation
        with ``compile_engine_compat.register_implementation`` instead).
    """

    def register_fn(fn: Callable[..., Any]) -> Callable[..., Any]:
        if custom.custom_op(op_name) is None and (op_name in OP_TABLE or op_name in REFUSED_OPS):
            get(op_name).set_attr("FTVMCompute", fn, level)  # refused there, naming the route
        custom.register_compute(op_name, fn, level)
        return fn

    return register_fn(compute) if compute is not None else register_fn


def register(op_name: str, describe: str = "") -> custom.CustomOp:
    """``relay.op.op.register(op_name, describe="")``: an op the program defines itself (see
    :mod:`.custom`: its type relation types its calls; in Relax it is a ``call_dps_packed`` of
    the packed function of its name).

    Raises
    ------
    RuntimeError
        (``tvm.error.TVMError`` under ``install()``) if the name is taken, as Relay's did.
    """
    if op_name in OP_TABLE or op_name in REFUSED_OPS or dialect_row(op_name) is not None:
        raise RuntimeError(f"Operator {op_name} is registered before")
    return custom.register(op_name, describe)
