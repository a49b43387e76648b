"""How a row of the op table becomes a Relay op and its builder function.

Each :class:`OpRow` says, for one Relay op: its Relay inputs and attributes (names and defaults
as in TVM 0.7-0.19, which are also the names ``call.attrs`` answers to), the Relax op it becomes,
and how the attributes convert. The rows are data, kept by op family (:mod:`.tensor`,
:mod:`.nn`, ...); this module turns each into the op object (``relay.op.get(name)``,
:class:`RelayOp`) and the builder (``relay.nn.conv2d(...)``, :func:`builders`). Nothing else is
written per op: the conversions a row names live in :mod:`.convert`, Relay's attribute rules in
:mod:`.normalize` and its type relations in :mod:`.type_relations`.

An attribute value with no Relax equivalent is refused when the builder is called
(:class:`UnsupportedRelayError`, naming the op, the attribute and what to write instead), and so
is every op a family lists as refused.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import tvm
from tvm import relax

from compile_engine_compat.pipeline.trace import TRACE_LOCK
from compile_engine_compat.relay._impl.relay_strategies import strategy_function
from compile_engine_compat.relay._impl.support_levels import support_level
from compile_engine_compat.relay.expr import Attrs, BaseOp, Call, Expr, Tuple, TupleWrapper, as_expr

__all__ = [
    "REQUIRED",
    "Emit",
    "MissingRelayOpError",
    "OpRow",
    "Refusal",
    "RelayOp",
    "UnsupportedRelayError",
    "builders",
    "connect_dynamic",
    "dialect_row",
    "dynamic_row",
    "missing_op",
    "refused_message",
    "register_dialect",
    "relay_op",
    "static_row",
]


class UnsupportedRelayError(NotImplementedError):
    """A Relay op or attribute value with no Relax equivalent; the message names the way out."""


class MissingRelayOpError(UnsupportedRelayError, AttributeError):
    """A Relay op name this front end does not serve, asked for as a module attribute.

    Also an ``AttributeError``, so ``hasattr(relay.nn, name)`` and ``getattr(..., default)``
    keep working; the message names the op and what to do instead.
    """


#: The default of a required attribute.
REQUIRED = inspect.Parameter.empty

#: ``emit(bb, args, attrs) -> relax.Expr`` (not yet bound): args are the Relax values of the inputs.
Emit = Callable[[relax.BlockBuilder, list[Any], Attrs], Any]


@dataclass(frozen=True)
class Refusal:
    """An attribute whose value must satisfy ``allowed``; otherwise ``replacement`` says why."""

    attr: str
    allowed: Callable[[Any], bool]
    replacement: str


@dataclass(frozen=True)
class OpRow:
    """One Relay op and its Relax form.

    Attributes
    ----------
    name : str
        The Relay op name (``"nn.conv2d"``), which is also the builder's path under ``relay``.
    inputs : tuple of str
        Relay's tensor arguments, in order.
    attrs : tuple of (str, default)
        Relay's attributes and their defaults (:data:`REQUIRED`: required).
    relax_op : str
        The Relax op it becomes (``"relax.nn.conv2d"``), for docs and strategies.
    emit : callable
        ``emit(bb, relax_args, attrs) -> relax.Expr``.
    attrs_type : str
        Relay's attribute type name, shown by ``repr(call.attrs)``.
    normalize : mapping
        Attribute name -> function applied to the value at the builder call (Relay's own
        normalization: an int stride becomes a tuple).
    refusals : tuple of Refusal
        Attribute values with no Relax equivalent.
    outputs : callable, optional
        ``outputs(attrs) -> int``: the call returns a tuple of that many tensors (a
        ``TupleWrapper``), as Relay's did.
    tuple_input : bool
        The first input is a list of tensors (``concatenate``, ``stack``).
    order : tuple of str
        Relay's parameter order, where an attribute comes before an input
        (``gather(data, axis, indices)``); empty: inputs, then attributes.
    dynamic : tuple of str
        Shape-like attributes that may be given as a tensor (Relay's ``dyn.*`` ops): a call
        with a tensor there builds the row's ``dyn.`` twin (:func:`dynamic_row`), which takes
        that tensor as its last input and reads its values when the function runs.
    infer_inputs : callable, optional
        ``infer_inputs(input_types, attrs) -> input_types``: the types of untyped inputs
        (weights, biases) from the data's type and the attributes, as Relay's type relation
        inferred ``relay.var("w")`` from ``channels``/``kernel_size``.
    printed : tuple of str
        Attributes the text printer shows even at their default: Relay's C++ attributes
        declared them without one (a pool's ``pool_size``), so Relay printed them always.
    """

    name: str
    inputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...]
    relax_op: str
    emit: Emit
    attrs_type: str = "relay.attrs.Attrs"
    normalize: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    refusals: tuple[Refusal, ...] = ()
    outputs: Callable[[Attrs], int] | None = None
    tuple_input: bool = False
    infer_inputs: Callable[[list[Any], Attrs], list[Any]] | None = None
    order: tuple[str, ...] = ()
    dynamic: tuple[str, ...] = ()
    printed: tuple[str, ...] = ()

    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """Relay's signature of the builder (inputs first, unless ``order`` says otherwise)."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        defaults = dict(self.attrs)
        names = self.order or (*self.inputs, *defaults)
        return inspect.Signature(
            [
                inspect.Parameter(n, kind, default=defaults.get(n, inspect.Parameter.empty))
                for n in names
            ]
        )

    def default_attrs(self) -> Attrs:
        """The attributes of a call that gave none (``relay.Call(op, args)``)."""
        missing = [n for n, d in self.attrs if d is REQUIRED]
        if missing:
            raise TypeError(
                f"relay op {self.name!r} needs attributes {missing}: use relay.{self.name}"
            )
        return Attrs(self.attrs_type, dict(self.attrs))

    def make_attrs(self, values: Mapping[str, Any]) -> Attrs:
        """Normalize and check attribute values, refusing those Relax cannot express."""
        fields = {}
        for name, _ in self.attrs:
            value = values[name]
            if name in self.normalize:
                try:
                    value = self.normalize[name](value)
                except UnsupportedRelayError as err:
                    raise UnsupportedRelayError(f"relay.{self.name}, {name}: {err}") from None
            fields[name] = value
        for refusal in self.refusals:
            if not refusal.allowed(fields[refusal.attr]):
                raise UnsupportedRelayError(
                    f"relay.{self.name}({refusal.attr}={fields[refusal.attr]!r}) has no Relax "
                    f"equivalent: {refusal.replacement}"
                )
        return Attrs(self.attrs_type, fields)


#: Op attributes that only described Relay's own passes; setting them changes nothing here.
_INERT_ATTRS = frozenset(
    {
        "TOpPattern",
        "TOpIsStateful",
        "TNonComputational",
        "TOpPatternGroup",
        # read by relay.transform.FakeQuantizationToInteger
        "FTVMFakeQuantizationToInteger",
        "FTVMOptionalFakeQuantizationToInteger",
        # read by relay.transform.ToMixedPrecision
        "FTVMMixedPrecisionConversionType",
        # read by relay.transform.Legalize
        "FTVMLegalize",
        # read by relay.transform.AlterOpLayout (relay.build picks its own layouts)
        "FTVMAlterOpLayout",
    }
)


#: A QNN op's target legalization and canonicalization functions: kept (``get_attr`` answers
#: them), and never needed, the shim lowers QNN ops one way on every target.
_QNN_LOWERING_ATTRS = frozenset({"FTVMQnnLegalize", "FTVMQnnCanonicalize"})


#: The prefixes of the op attributes TVM 0.19's builds read (``FTVMCompute``,
#: ``FInferCorrectLayout``, ...): one not served above is refused rather than stored and ignored.
#: Any other attribute (a program's own, ``"ftest"``) is stored and answered by ``get_attr``, as
#: TVM 0.19 stored it; no build reads it.
_BUILD_ATTR_PREFIXES = ("FTVM", "FInfer", "FQuantize", "FPrimalGradient")


class RelayOp(BaseOp):
    """``relay.op.get(name)``: ``.name`` is the Relay name, ``.relax_op`` the Relax op.

    It answers ``tvm.ir.Op``'s fields as TVM 0.19's did: ``num_inputs``, ``support_level``,
    ``description``, ``arguments``, ``attrs_type_key``.
    """

    def __init__(self, row: OpRow) -> None:
        self.row = row
        self.name = row.name
        self._attrs: dict[str, Any] = {}
        self.num_inputs = len(row.inputs)
        self.support_level = support_level(row.name)
        self.description = ""
        self.arguments: list[Any] = []
        self.attrs_type_key = row.attrs_type

    @property
    def relax_op_name(self) -> str:
        """The Relax op this Relay op becomes (the engine's strategies are keyed by it)."""
        return self.row.relax_op

    def __tvm_ffi_object__(self) -> Any:
        """What TVM receives for this op: the ``tvm.ir.Op`` of the Relax op it becomes (so
        ``tvm.ir.save_json(relay.op.get("add"))`` round-trips, as Relay's ``Op`` did)."""
        return tvm.ir.Op.get(self.row.relax_op)

    def relax_attrs(self, attrs: Any, inputs: Any) -> Any:
        """The Relax attributes of a front-end call of this op with ``attrs`` on ``inputs``.

        What ``compile_engine.select_implementation(relay.op.get(name), call.attrs, ...)``
        hands the implementations: the front-end call becomes its Relax call (on parameters
        shaped as the TE ``inputs``), whose attributes are TVM's.

        Raises
        ------
        UnsupportedRelayError
            When the Relay op is not one call of its Relax op (``nn.dense`` is a transpose and
            a ``relax.matmul``): select the Relax op's implementation on the Relax call instead.
        """
        with TRACE_LOCK:  # BlockBuilder keeps one process-wide scope stack
            bb = relax.BlockBuilder()
            params = [
                relax.Var(f"arg{i}", relax.TensorType(list(t.shape), t.dtype))
                for i, t in enumerate(inputs)
            ]
            with bb.function("probe", params):
                call = bb.normalize(self.row.emit(bb, list(params), attrs))
                bb.emit_func_output(call)
        if (
            not isinstance(call, relax.Call)
            or not isinstance(call.op, tvm.ir.Op)
            or call.op.name != self.row.relax_op
            or len(call.args) != len(params)
            or not all(a.same_as(p) for a, p in zip(call.args, params))
        ):
            raise UnsupportedRelayError(
                f"relay op {self.name!r} is not one {self.row.relax_op} call on its inputs: "
                f"select {self.row.relax_op}'s implementation with the attributes of its Relax "
                "call (tvm.IRModule.from_expr(expr) shows it)"
            )
        return call.attrs

    def default_attrs(self) -> Attrs:
        """The attributes of a call that gave none (``relay.Call(op, args)``)."""
        return self.row.default_attrs()

    def get_attr(self, attr_name: str) -> Any:
        """An attribute set with ``TempOpAttr``/``set_attr`` (None when unset)."""
        return self._attrs.get(attr_name)

    def set_attr(self, attr_name: str, value: Any, plevel: int = 10) -> None:
        """Set an op attribute; ``FTVMStrategy`` becomes the Relax op's strategy in the engine.

        Several Relay ops can become one Relax op (``nn.dense`` and ``nn.matmul`` are both
        ``relax.matmul``): a strategy applies to every call of that Relax op.
        """
        if attr_name == "FTVMStrategy":
            from compile_engine_compat.pipeline import implementations as _implementations

            if self.row.relax_op != f"relax.{self.name}":
                # The Relax form is another op, or more than one (nn.dense is relax.matmul of
                # a transposed weight): a Relay compute would see other inputs. Refuse, rather
                # than compute something else.
                raise UnsupportedRelayError(
                    f"an FTVMStrategy for relay op {self.name!r} cannot apply: it becomes "
                    f"{self.row.relax_op}, whose calls have other inputs or attributes. Register "
                    f"an implementation of {self.row.relax_op} with "
                    "compile_engine_compat.register_implementation (or temp_strategy)"
                )
            _implementations.set_strategy_function(
                self.row.relax_op, strategy_function(value, self.row)
            )
        elif (
            attr_name not in _INERT_ATTRS
            and attr_name.startswith(_BUILD_ATTR_PREFIXES)
            and not (self.name.startswith("qnn.") and attr_name in _QNN_LOWERING_ATTRS)
        ):
            raise UnsupportedRelayError(
                f"op attribute {attr_name!r} of relay op {self.name!r} has no effect on modern "
                "TVM, and ignoring it would change results silently: give the Relax op "
                f"{self.row.relax_op} a legalization (tvm.ir.register_op_attr(name, "
                "'FLegalize', fn)) or an implementation (compile_engine_compat."
                "register_implementation)"
            )
        self._attrs[attr_name] = value

    def reset_attr(self, attr_name: str) -> None:
        """Remove an op attribute (and the engine strategy it set)."""
        if self._attrs.pop(attr_name, None) is not None and attr_name == "FTVMStrategy":
            from compile_engine_compat.pipeline import implementations as _implementations

            _implementations.set_strategy_function(self.row.relax_op, None)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Op({self.name})"


#: Relay op name -> its one op object (``relay.op.get(name) is call.op``).
_ops: dict[str, RelayOp] = {}


def relay_op(row: OpRow) -> RelayOp:
    """The op object of ``row`` (one per op name: attributes set on it are seen by every call)."""
    op = _ops.get(row.name)
    if op is None:
        op = _ops.setdefault(row.name, RelayOp(row))
    return op


#: Rows of the ops of a dialect outside ``relay.op``'s families (``qnn.*``), registered by the
#: dialect's package when it is imported (``relay.qnn.op``): name -> row.
_dialect_rows: dict[str, OpRow] = {}


def register_dialect(rows: tuple[OpRow, ...]) -> None:
    """Make a dialect's rows known to ``relay.op.get`` (one row per name)."""
    for row in rows:
        _dialect_rows.setdefault(row.name, row)


def dialect_row(op_name: str) -> OpRow | None:
    """The row of a dialect op (``"qnn.conv2d"``), or None."""
    return _dialect_rows.get(op_name)


def refused_message(op_name: str, replacement: str) -> str:
    """The error of a Relay op with no Relax equivalent, naming ``replacement``."""
    return f"Relay op {op_name!r} has no Relax equivalent: {replacement}"


#: ``twin_emit(op name, emit, attrs)``: the emitter of a ``dyn.`` twin (``.dynamic``'s), set by
#: :func:`connect_dynamic` when ``relay.op`` is assembled.
_twin_emit: Callable[[str, Emit, tuple[str, ...]], Emit] | None = None


def connect_dynamic(twin_emit: Callable[[str, Emit, tuple[str, ...]], Emit]) -> None:
    """Set how a ``dyn.`` twin emits (``relay.op.op`` connects :mod:`.dynamic`'s, which
    imports what imports this module)."""
    global _twin_emit
    _twin_emit = twin_emit


def dynamic_row(row: OpRow) -> OpRow:
    """The ``dyn.`` twin of ``row``, whose :attr:`OpRow.dynamic` attributes are tensor inputs
    after its own (Relay's ``dyn.broadcast_to(data, shape)`` beside ``broadcast_to(data,
    shape=...)``, ``dyn.strided_slice(data, begin, end, strides)``), made once and known to
    ``relay.op.get``."""
    name = f"dyn.{row.name}"
    found = _dialect_rows.get(name)
    if found is not None:
        return found
    if _twin_emit is None:
        raise UnsupportedRelayError(f"relay.{name}: the dyn.* emitters are not connected")
    twin = OpRow(
        name,
        (*row.inputs, *row.dynamic),
        tuple((n, d) for n, d in row.attrs if n not in row.dynamic),
        row.relax_op,
        _twin_emit(row.name, row.emit, row.dynamic),
        row.attrs_type,
        normalize={k: v for k, v in row.normalize.items() if k not in row.dynamic},
        refusals=tuple(r for r in row.refusals if r.attr not in row.dynamic),
        outputs=row.outputs,
    )
    return _dialect_rows.setdefault(name, twin)


def static_row(twin: OpRow) -> OpRow | None:
    """The row whose ``dyn.`` twin ``twin`` is (``dyn.tile`` -> ``tile``), or None."""
    if not twin.name.startswith("dyn."):
        return None
    op = _ops.get(twin.name[len("dyn.") :])
    return op.row if op is not None and op.row.dynamic else None


def _tensor_value(value: Any) -> Any:
    """A :attr:`OpRow.dynamic` attribute's value as it is (a tensor expression), or None."""
    if hasattr(value, "astuple") and not isinstance(value, Expr):
        value = value.astuple()
    return value if isinstance(value, Expr) else None


def _dynamic_call(row: OpRow, inputs: list[Expr], values: Mapping[str, Any]) -> Call | None:
    """The call of ``row``'s ``dyn.`` twin when one of its :attr:`OpRow.dynamic` attributes is
    given as a (non-constant) tensor expression, else None; the others become constants, as
    Relay's builders made them (an unset ``strides`` is ``[1]``)."""
    from compile_engine_compat.relay.expr import Constant, const

    given = [_tensor_value(values[attr]) for attr in row.dynamic]
    if not any(v is not None and not isinstance(v, Constant) for v in given):
        return None
    twin = dynamic_row(row)
    tensors = [
        v if v is not None else const([1] if values[a] is None else values[a])
        for a, v in zip(row.dynamic, given)
    ]
    return Call(relay_op(twin), [*inputs, *tensors], twin.make_attrs(values))


def _builder(row: OpRow) -> Callable[..., Any]:
    """The Relay builder function of ``row`` (``relay.nn.conv2d``), with Relay's signature."""
    op = relay_op(row)
    sig = row.signature

    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"relay.{row.name}{sig}: {err}") from None
        bound.apply_defaults()
        values = bound.arguments
        inputs: list[Expr] = []
        for name in row.inputs:
            value = values[name]
            if row.tuple_input and isinstance(value, list | tuple):
                inputs.append(Tuple(list(value)))
            else:
                inputs.append(as_expr(value))
        call = _dynamic_call(row, inputs, values) if row.dynamic else None
        attrs = row.make_attrs(values) if call is None else call.attrs
        if call is None:
            call = Call(op, inputs, attrs)
        if row.outputs is not None and attrs is not None:
            size = row.outputs(attrs)
            if size:
                return TupleWrapper(call, size)
        return call

    build.__name__ = row.name.rsplit(".", 1)[-1]
    build.__qualname__ = build.__name__
    build.__signature__ = sig  # type: ignore[attr-defined]
    build.__doc__ = (
        f"Relay's ``{row.name}``, built as ``{row.relax_op}``.\n\n"
        f"Signature as in TVM 0.7-0.19: ``{row.name}{sig}``."
    )
    return build


def _refused_builder(op_name: str, replacement: str) -> Callable[..., Any]:
    """A builder that refuses at the call, naming ``replacement``."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise UnsupportedRelayError(refused_message(op_name, replacement))

    refused.__name__ = op_name.rsplit(".", 1)[-1]
    refused.__qualname__ = refused.__name__
    refused.__doc__ = f"Relay's ``{op_name}``: refused (no Relax equivalent). {replacement}."
    return refused


def builders(
    rows: tuple[OpRow, ...], refused: Mapping[str, str] | None = None
) -> dict[str, Callable[..., Any]]:
    """The builders of a family's rows and refused ops, by short name (``"conv2d"``).

    Parameters
    ----------
    rows : tuple of OpRow
        The family's ops.
    refused : mapping, optional
        The family's ops with no Relax equivalent -> what to write instead.

    Returns
    -------
    dict of str to callable
        Short name -> builder (a refused op's builder raises :class:`UnsupportedRelayError`).
    """
    out = {row.name.rsplit(".", 1)[-1]: _builder(row) for row in rows}
    for name, replacement in (refused or {}).items():
        out[name.rsplit(".", 1)[-1]] = _refused_builder(name, replacement)
    return out


def missing_op(prefix: str, module: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of an op family: an unknown op name is refused, naming it.

    Parameters
    ----------
    prefix : str
        The family's namespace under ``relay`` (``"nn"``, ``"image"``; ``""`` for the top).
    module : str
        The module's name, for the message of underscore names (a plain ``AttributeError``).
    """

    def getattr_(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        op_name = f"{prefix}.{name}" if prefix else name
        raise MissingRelayOpError(
            f"Relay op {op_name!r} is not served by the compile-engine-compat front end (TVM "
            f"0.27 has no Relax or TOPI form of it that it maps): write it with relax.op or "
            f"BlockBuilder.call_te, or register it in {module}"
        )

    return getattr_
