"""The one table from Relay op to Relax op, and the Relay builder functions made from it.

Each :class:`OpRow` says, for one Relay op: its Relay inputs and attributes (names and defaults
as in TVM 0.7-0.19, which are also the names ``call.attrs`` answers to), the Relax op it becomes,
and how the attributes convert. The builder ``relay.nn.conv2d(...)`` and ``relay.op.get(name)``
are generated from the row; nothing else is written per op. Rows whose conversion is not a
renaming of keywords name a small emit function (Relay's reshape codes, ``exclude`` reductions,
``bias_add``...); those functions are shared by every row that needs them.

An attribute value with no Relax equivalent is refused when the builder is called
(:class:`UnsupportedRelayError`, naming the op, the attribute and what to write instead), and so
is every op of :data:`REFUSED_OPS`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tvm
from tvm import relax, tirx

from ._expr import Attrs, Call, Constant, Expr, Tuple, TupleWrapper, _as_expr

__all__ = [
    "OP_TABLE",
    "REFUSED_OPS",
    "OpRow",
    "RelayOp",
    "UnsupportedRelayError",
    "builder",
    "get",
]


class UnsupportedRelayError(NotImplementedError):
    """A Relay op or attribute value with no Relax equivalent; the message names the way out."""


_REQUIRED = inspect.Parameter.empty

# emit(bb, args, attrs) -> relax.Expr (not yet bound): args are the Relax values of the inputs.
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
        Relay's attributes and their defaults (``inspect.Parameter.empty``: required).
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
    infer_inputs : callable, optional
        ``infer_inputs(input_types, attrs) -> input_types``: the types of untyped inputs
        (weights, biases) from the data's type and the attributes, as Relay's type relation
        inferred ``relay.var("w")`` from ``channels``/``kernel_size``.
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
        missing = [n for n, d in self.attrs if d is _REQUIRED]
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
                value = self.normalize[name](value)
            fields[name] = value
        for refusal in self.refusals:
            if not refusal.allowed(fields[refusal.attr]):
                raise UnsupportedRelayError(
                    f"relay.{self.name}({refusal.attr}={fields[refusal.attr]!r}) has no Relax "
                    f"equivalent: {refusal.replacement}"
                )
        return Attrs(self.attrs_type, fields)


#: Op attributes that only described Relay's own passes; setting them changes nothing here.
_INERT_ATTRS = frozenset({"TOpPattern", "TOpIsStateful", "TNonComputational", "TOpPatternGroup"})


class RelayOp:
    """``relay.op.get(name)``: ``.name`` is the Relay name, ``.relax_op`` the Relax op."""

    def __init__(self, row: OpRow) -> None:
        self.row = row
        self.name = row.name
        self._attrs: dict[str, Any] = {}

    @property
    def relax_op_name(self) -> str:
        """The Relax op this Relay op becomes (the engine's strategies are keyed by it)."""
        return self.row.relax_op

    def get_attr(self, attr_name: str) -> Any:
        """An attribute set with ``TempOpAttr``/``set_attr`` (None when unset)."""
        return self._attrs.get(attr_name)

    def set_attr(self, attr_name: str, value: Any, plevel: int = 10) -> None:
        """Set an op attribute; ``FTVMStrategy`` becomes the Relax op's strategy in the engine.

        Several Relay ops can become one Relax op (``nn.dense`` and ``nn.matmul`` are both
        ``relax.matmul``): a strategy applies to every call of that Relax op.
        """
        if attr_name == "FTVMStrategy":
            from compile_engine_compat.pipeline import strategy as _strategy

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
            _strategy.set_strategy_function(self.row.relax_op, _strategy_adapter(value, self.row))
        elif attr_name not in _INERT_ATTRS:
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
            from compile_engine_compat.pipeline import strategy as _strategy

            _strategy.set_strategy_function(self.row.relax_op, None)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Op({self.name})"


# -- shared conversions -------------------------------------------------------------------------


def _relax_fn(name: str) -> Callable[..., Any]:
    fn: Any = relax.op
    for part in name.removeprefix("relax.").split("."):
        fn = getattr(fn, part)
    return fn


def _shape(value: Any) -> list[Any]:
    """The static shape of a Relax value (ints where known)."""
    ty = value.ty if hasattr(value, "ty") else None
    if not isinstance(ty, relax.TensorType) or ty.shape is None:
        raise UnsupportedRelayError(f"the value {value} has no known shape, which Relay required")
    return [int(d) if isinstance(d, tirx.IntImm) else d for d in ty.shape.values]


def _axes(value: Any, axis: Any) -> list[int] | None:
    if axis is None:
        return None
    ndim = len(_shape(value))
    axes = [int(axis)] if isinstance(axis, int | np.integer) else [int(a) for a in axis]
    return [a + ndim if a < 0 else a for a in axes]


def _opt(value: Any) -> Any:
    """Relay's "unset" spellings ("" and None) as Relax's None."""
    return None if value in ("", None) else value


def _scalar(value: Any) -> Any:
    """A Relay scalar attribute or constant input as a Python number."""
    if isinstance(value, tvm.ir.expr.Constant):
        return value.data.numpy().item()
    return value


def direct(relax_op: str, **kwargs: str | Callable[[Attrs, list[Any]], Any]) -> Emit:
    """Emit ``relax_op(*args, **kw)``; each ``kw`` is a Relay attribute name or a function.

    A function receives ``(attrs, relax_args)``.
    """
    fn = _relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        kw = {k: (attrs[v] if isinstance(v, str) else v(attrs, args)) for k, v in kwargs.items()}
        return fn(*args, **kw)

    return emit


def _reduce(relax_op: str) -> Emit:
    """Reductions: Relay's ``exclude`` picks the complement of ``axis``."""
    fn = _relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        axes = _axes(args[0], attrs.axis)
        if attrs.exclude:
            ndim = len(_shape(args[0]))
            axes = [a for a in range(ndim) if a not in (axes or [])]
        return fn(args[0], axes, bool(attrs.keepdims))

    return emit


def _argreduce(relax_op: str) -> Emit:
    fn = _relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        axes = _axes(args[0], attrs.axis)
        if axes is not None and len(axes) != 1:
            raise UnsupportedRelayError(
                f"relax.op.{relax_op} takes one axis, got {attrs.axis!r}: reshape first"
            )
        return fn(args[0], None if axes is None else axes[0], bool(attrs.keepdims))

    return emit


def _reshape_shape(in_shape: list[Any], newshape: Sequence[int], allowzero: bool) -> list[Any]:
    """Resolve Relay's reshape codes (0 copy, -2 copy rest, -3 merge two, -4 split one).

    One -1 is left for Relax to infer.
    """
    out: list[Any] = []
    src = 0
    codes = [int(c) for c in newshape]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code > 0 or (code == 0 and allowzero):
            out.append(code)
            src += 1
        elif code == 0:
            out.append(in_shape[src])
            src += 1
        elif code == -1:
            out.append(-1)
            src += 1
        elif code == -2:
            out.extend(in_shape[src:])
            src = len(in_shape)
        elif code == -3:
            out.append(in_shape[src] * in_shape[src + 1])
            src += 2
        elif code == -4:
            whole, first, second = in_shape[src], codes[i + 1], codes[i + 2]
            if first == -1:
                first = whole // second
            if second == -1:
                second = whole // first
            out.extend([first, second])
            src += 1
            i += 2
        else:
            raise UnsupportedRelayError(f"relay.reshape: unknown shape code {code}")
        i += 1
    return out


def _reshape(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    newshape = attrs.newshape
    codes = [newshape] if isinstance(newshape, int) else list(newshape)
    return relax.op.reshape(args[0], _reshape_shape(_shape(args[0]), codes, attrs.allowzero))


def _expand_dims(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    ndim = len(_shape(args[0]))
    axis = int(attrs.axis)
    axis = axis + ndim + 1 if axis < 0 else axis
    if attrs.num_newaxis == 0:
        return args[0]
    return relax.op.expand_dims(args[0], [axis + k for k in range(int(attrs.num_newaxis))])


def _take(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    data, indices = args
    axis = attrs.axis
    if axis is None and len(_shape(data)) != 1:
        # Relay flattened the data when no axis was given; Relax requires 1-D data then.
        data = bb.emit(relax.op.reshape(data, [-1]))
        axis = 0
    return relax.op.take(data, indices, axis, attrs.mode)


def _strided_slice(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    shape = _shape(args[0])
    begin = [int(b) for b in attrs.begin]
    axes = list(range(len(begin))) if attrs.axes is None else [int(a) for a in attrs.axes]
    end = [int(e) for e in attrs.end]
    strides = [1] * len(begin) if attrs.strides is None else [int(s) for s in attrs.strides]
    if len(strides) == 1 and len(begin) > 1:
        strides = strides * len(begin)
    if attrs.slice_mode == "size":
        end = [shape[a] if e < 0 else b + e for a, b, e in zip(axes, begin, end)]
        strides = [1] * len(begin)
    return relax.op.strided_slice(args[0], axes, begin, end, strides)


def _dense(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    weight_t = bb.emit(relax.op.permute_dims(args[1]))
    return relax.op.matmul(args[0], weight_t, _opt(attrs.out_dtype))


def _matmul(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    a, b = args
    if attrs.transpose_a:
        a = bb.emit(relax.op.permute_dims(a))
    if attrs.transpose_b:
        b = bb.emit(relax.op.permute_dims(b))
    return relax.op.matmul(a, b, _opt(attrs.out_dtype))


def _batch_matmul(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    a, b = args
    if attrs.transpose_a:
        a = bb.emit(relax.op.permute_dims(a, [0, 2, 1]))
    if attrs.transpose_b:
        b = bb.emit(relax.op.permute_dims(b, [0, 2, 1]))
    return relax.op.matmul(a, b, _opt(attrs.out_dtype))


def _bias_add(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    data, bias = args
    ndim = len(_shape(data))
    axis = int(attrs.axis) % ndim
    if axis != ndim - 1:
        # Relay broadcast the bias along `axis`; Relax broadcasts trailing dimensions only.
        shape = [1] * ndim
        shape[axis] = _shape(bias)[0]
        bias = bb.emit(relax.op.reshape(bias, shape))
    return relax.op.add(data, bias)


def _spatial_axes(layout: str) -> list[int]:
    return [i for i, c in enumerate(layout) if c in "DHW"]


def _global_pool(relax_op: str) -> Emit:
    fn = _relax_fn(relax_op)

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        return fn(args[0], _spatial_axes(attrs.layout), True)

    return emit


def _norm_axes(args: list[Any], channel: int) -> list[int]:
    ndim = len(_shape(args[0]))
    channel %= ndim
    return [a for a in range(1, ndim) if a != channel]


def _group_norm(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    return relax.op.nn.group_norm(
        *args,
        num_groups=int(attrs.num_groups),
        channel_axis=int(attrs.axis),
        axes=_norm_axes(args, int(attrs.axis)),
        epsilon=float(attrs.epsilon),
        center=bool(attrs.center),
        scale=bool(attrs.scale),
    )


def _instance_norm(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    return relax.op.nn.instance_norm(
        *args,
        channel_axis=int(attrs.axis),
        axes=_norm_axes(args, int(attrs.axis)),
        epsilon=float(attrs.epsilon),
        center=bool(attrs.center),
        scale=bool(attrs.scale),
    )


def _pad(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    flat = [int(v) for pair in attrs.pad_width for v in pair]
    value = float(_scalar(args[1])) if len(args) > 1 else float(attrs.pad_value)
    return relax.op.nn.pad(args[0], flat, attrs.pad_mode, value)


#: Relay's upsampling method names -> Relax resize2d's.
_UPSAMPLING_METHODS = {
    "nearest_neighbor": "nearest_neighbor",
    "bilinear": "linear",
    "bicubic": "cubic",
}


def _upsampling(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    shape = _shape(args[0])
    h, w = attrs.layout.index("H"), attrs.layout.index("W")
    size = (int(shape[h] * attrs.scale_h), int(shape[w] * attrs.scale_w))
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    # Nearest upsampling by an integer factor repeats each pixel: floor, not round.
    rounding = "floor" if attrs.method == "nearest_neighbor" else "round"
    return relax.op.image.resize2d(
        args[0],
        size,
        layout=attrs.layout,
        method=_UPSAMPLING_METHODS[attrs.method],
        coordinate_transformation_mode=mode,
        rounding_method=rounding,
    )


def _resize2d(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    size = attrs.size
    return relax.op.image.resize2d(
        args[0],
        tuple(int(s) for s in size),
        roi=None if attrs.roi is None else tuple(float(r) for r in attrs.roi),
        layout=attrs.layout,
        method=attrs.method,
        coordinate_transformation_mode=attrs.coordinate_transformation_mode,
        rounding_method=attrs.rounding_method or "round",
        cubic_alpha=float(attrs.cubic_alpha),
        cubic_exclude=int(attrs.cubic_exclude),
        extrapolation_value=float(attrs.extrapolation_value),
        out_dtype=_opt(attrs.out_dtype),
    )


def _identity(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    return args[0]


def _full(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    shape = [int(d) for d in attrs.shape]
    return relax.op.full(shape, args[0], _opt(attrs.dtype) or args[0].ty.dtype)


def _clip(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    dtype = args[0].ty.dtype
    low = relax.prim_value(tirx.const(attrs.a_min, dtype))
    high = relax.prim_value(tirx.const(attrs.a_max, dtype))
    return relax.op.clip(args[0], low, high)


def _split_outputs(attrs: Attrs) -> int:
    ios = attrs.indices_or_sections
    return int(ios) if isinstance(ios, int | np.integer) else len(ios) + 1


def _split(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    ios = attrs.indices_or_sections
    ios = int(ios) if isinstance(ios, int | np.integer) else [int(i) for i in ios]
    return relax.op.split(args[0], ios, int(attrs.axis))


def _log_base(base: float) -> Emit:
    """Relax has no log2/log10: log(x) / log(base), in the input's dtype."""

    def emit(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
        dtype = args[0].ty.dtype
        lv = bb.emit(relax.op.log(args[0]))
        return relax.op.divide(lv, relax.const(np.log(base), dtype))

    return emit


def _one_hot(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    dtype = attrs.dtype
    on = relax.prim_value(tirx.const(attrs.on_value, dtype))
    off = relax.prim_value(tirx.const(attrs.off_value, dtype))
    return relax.op.one_hot(args[0], on, off, int(attrs.depth), int(attrs.axis))


def _arange(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    start, stop, step = attrs.start, attrs.stop, attrs.step
    if stop is None:
        start, stop = 0, start
    return relax.op.arange(start, stop, 1 if step is None else step, attrs.dtype)


def _gather_nd(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    data, indices = args
    # Relay indexes with indices[:, y...] (the index tuple first); Relax, like ONNX, with
    # indices[y..., :] (the index tuple last).
    rank = len(_shape(indices))
    if rank > 1:
        indices = bb.emit(relax.op.permute_dims(indices, [*range(1, rank), 0]))
    if indices.ty.dtype != "int64":  # Relax's gather_nd takes int64 indices only
        indices = bb.emit(relax.op.astype(indices, "int64"))
    return relax.op.gather_nd(data, indices, int(attrs.batch_dims))


def _reshape_like(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    return relax.op.reshape(args[0], _shape(args[1]))


def _layout_transform(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    src, dst = attrs.src_layout, attrs.dst_layout
    return relax.op.permute_dims(args[0], [src.index(c) for c in dst])


def _equals(default: Any) -> Callable[[Any], bool]:
    return lambda value: bool(value == default)


def _plain_layout_pair(value: Any) -> bool:
    return isinstance(value, str) and value.isalpha() and value.isupper()


# -- input types Relay inferred for untyped weights ---------------------------------------------


def _need(attrs: Attrs, *names: str) -> list[Any]:
    values = [attrs[n] for n in names]
    if any(v is None for v in values):
        raise TypeError(f"an untyped weight needs {' and '.join(names)} to infer its shape")
    return values


def _infer_conv(transpose: bool) -> Callable[[list[Any], Attrs], list[Any]]:
    def infer(types: list[Any], attrs: Attrs) -> list[Any]:
        from ._expr import TensorType

        data = types[0]
        channels, kernel = _need(attrs, "channels", "kernel_size")
        in_channels = int(data.shape[attrs.data_layout.index("C")])
        groups = int(attrs.groups)
        sizes = {"O": int(channels) // groups if transpose else int(channels)}
        sizes["I"] = in_channels if transpose else in_channels // groups
        spatial = iter(int(k) for k in kernel)
        shape = [sizes[c] if c in sizes else next(spatial) for c in attrs.kernel_layout]
        return [data, TensorType(shape, data.dtype)]

    return infer


def _infer_dense(types: list[Any], attrs: Attrs) -> list[Any]:
    from ._expr import TensorType

    (units,) = _need(attrs, "units")
    data = types[0]
    return [data, TensorType((int(units), data.shape[-1]), data.dtype)]


def _infer_per_channel(types: list[Any], attrs: Attrs) -> list[Any]:
    """Every input after the data is one value per channel (``attrs.axis``)."""
    from ._expr import TensorType

    data = types[0]
    channel = data.shape[int(attrs.axis)]
    return [data] + [TensorType((channel,), data.dtype) for _ in types[1:]]


# -- normalizers (Relay's own, applied at the builder call) -------------------------------------


def _ntuple(n: int) -> Callable[[Any], Any]:
    def norm(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, int | np.integer):
            return (int(value),) * n
        return tuple(int(v) for v in value)

    return norm


def _padding(n: int) -> Callable[[Any], tuple[int, ...]]:
    """Relay's padding forms: one value, one per spatial dim, or begin and end per dim."""

    def norm(value: Any) -> tuple[int, ...]:
        values = [int(value)] if isinstance(value, int | np.integer) else [int(v) for v in value]
        if len(values) == 1:
            return tuple(values * 2 * n)
        if len(values) == n:
            return tuple(values * 2)
        if len(values) == 2 * n:
            return tuple(values)
        raise ValueError(f"padding must have 1, {n} or {2 * n} values, got {value!r}")

    return norm


def _dtype(value: Any) -> str:
    return "" if value in ("", None) else str(tvm.DataType(str(value)))


def _int_list(value: Any) -> Any:
    return None if value is None else [int(v) for v in value]


# -- the table ----------------------------------------------------------------------------------

_BINARY = (
    "add subtract multiply divide floor_divide power maximum minimum mod floor_mod equal "
    "not_equal less less_equal greater greater_equal logical_and logical_or logical_xor "
    "bitwise_and bitwise_or bitwise_xor left_shift right_shift"
).split()
_UNARY = (
    "exp log sqrt rsqrt sigmoid tanh sin cos tan asin acos atan sinh cosh asinh acosh atanh abs "
    "negative sign floor ceil round trunc erf isnan isinf isfinite logical_not bitwise_not"
).split()
# Relay's approximations; Relax has the exact op.
_FAST = {"fast_exp": "exp", "fast_tanh": "tanh", "fast_erf": "erf"}


def _conv_normalize(nd: int) -> dict[str, Callable[[Any], Any]]:
    """Relay's normalization of a ``nd``-d convolution's attributes (ints become tuples)."""
    return {
        "strides": _ntuple(nd),
        "dilation": _ntuple(nd),
        "kernel_size": _ntuple(nd),
        "padding": _padding(nd),
        "out_dtype": _dtype,
    }


def _rows() -> list[OpRow]:
    rows = [
        OpRow(n, ("lhs", "rhs"), (), f"relax.{n}", direct(f"relax.{n}"), "relay.attrs.Attrs")
        for n in _BINARY
    ]
    rows += [OpRow(n, ("data",), (), f"relax.{n}", direct(f"relax.{n}")) for n in _UNARY]
    rows += [OpRow(n, ("data",), (), f"relax.{r}", direct(f"relax.{r}")) for n, r in _FAST.items()]

    reduce_attrs = (("axis", None), ("keepdims", False), ("exclude", False))
    for n in ("sum", "mean", "max", "min", "prod", "variance", "std"):
        refuse: tuple[Refusal, ...] = ()
        extra: tuple[tuple[str, Any], ...] = ()
        if n in ("variance", "std"):
            extra = (("unbiased", False),)
            refuse = (Refusal("unbiased", lambda v: not v, "relax variance/std are biased"),)
        rows.append(
            OpRow(
                n,
                ("data",),
                reduce_attrs + extra,
                f"relax.{n}",
                _reduce(f"relax.{n}"),
                "relay.attrs.ReduceAttrs",
                refusals=refuse,
            )
        )
    for n in ("argmax", "argmin"):
        rows.append(
            OpRow(
                n,
                ("data",),
                (*reduce_attrs, ("select_last_index", False)),
                f"relax.{n}",
                _argreduce(f"relax.{n}"),
                "relay.attrs.ArgReduceAttrs",
                refusals=(
                    Refusal(
                        "exclude",
                        lambda v: not v,
                        "relax.op.argmax/argmin take one axis: pass it directly",
                    ),
                    Refusal(
                        "select_last_index",
                        lambda v: not v,
                        "relax.op.argmax/argmin return the first index; flip the axis "
                        "(relax.op.flip) to find the last",
                    ),
                ),
            )
        )

    conv_common = (
        ("groups", 1),
        ("channels", None),
        ("kernel_size", None),
    )
    for nd, data_layout, kernel_layout in (
        (1, "NCW", "OIW"),
        (2, "NCHW", "OIHW"),
        (3, "NCDHW", "OIDHW"),
    ):
        one = (1,) * nd if nd > 1 else 1
        zero = (0,) * nd if nd > 1 else 0
        rows.append(
            OpRow(
                f"nn.conv{nd}d",
                ("data", "weight"),
                (
                    ("strides", one),
                    ("padding", zero),
                    ("dilation", one),
                    *conv_common,
                    ("data_layout", data_layout),
                    ("kernel_layout", kernel_layout),
                    ("out_layout", ""),
                    ("out_dtype", ""),
                ),
                f"relax.nn.conv{nd}d",
                direct(
                    f"relax.nn.conv{nd}d",
                    strides="strides",
                    padding="padding",
                    dilation="dilation",
                    groups="groups",
                    data_layout="data_layout",
                    kernel_layout="kernel_layout",
                    out_layout=lambda a, _: _opt(a.out_layout),
                    out_dtype=lambda a, _: _opt(a.out_dtype),
                ),
                f"relay.attrs.Conv{nd}DAttrs",
                infer_inputs=_infer_conv(False),
                normalize=_conv_normalize(nd),
            )
        )
    for nd, layout, kernel_layout in ((1, "NCW", "IOW"), (2, "NCHW", "IOHW")):
        rows.append(
            OpRow(
                f"nn.conv{nd}d_transpose",
                ("data", "weight"),
                (
                    ("strides", (1,) * nd),
                    ("padding", (0,) * nd),
                    ("dilation", (1,) * nd),
                    *conv_common,
                    ("data_layout", layout),
                    ("kernel_layout", kernel_layout),
                    ("out_layout", ""),
                    ("output_padding", (0,) * nd),
                    ("out_dtype", ""),
                ),
                f"relax.nn.conv{nd}d_transpose",
                direct(
                    f"relax.nn.conv{nd}d_transpose",
                    strides="strides",
                    padding="padding",
                    output_padding="output_padding",
                    dilation="dilation",
                    groups="groups",
                    data_layout="data_layout",
                    kernel_layout="kernel_layout",
                    out_layout=lambda a, _: _opt(a.out_layout),
                    out_dtype=lambda a, _: _opt(a.out_dtype),
                ),
                f"relay.attrs.Conv{nd}DTransposeAttrs",
                infer_inputs=_infer_conv(True),
                normalize={**_conv_normalize(nd), "output_padding": _ntuple(nd)},
            )
        )
    for nd, layout in ((1, "NCW"), (2, "NCHW"), (3, "NCDHW")):
        pool_attrs = (
            ("pool_size", (1,) * nd),
            ("strides", (1,) * nd),
            ("dilation", (1,) * nd),
            ("padding", (0,) * nd),
            ("layout", layout),
            ("out_layout", ""),
            ("ceil_mode", False),
        )
        norm = {
            "pool_size": _ntuple(nd),
            "strides": _ntuple(nd),
            "dilation": _ntuple(nd),
            "padding": _padding(nd),
        }
        common = {
            "pool_size": "pool_size",
            "strides": "strides",
            "padding": "padding",
            "dilation": "dilation",
            "ceil_mode": "ceil_mode",
            "layout": "layout",
            "out_layout": lambda a, _: _opt(a.out_layout),
        }
        rows.append(
            OpRow(
                f"nn.max_pool{nd}d",
                ("data",),
                pool_attrs,
                f"relax.nn.max_pool{nd}d",
                direct(f"relax.nn.max_pool{nd}d", **common),  # type: ignore[arg-type]
                f"relay.attrs.MaxPool{nd}DAttrs",
                normalize=norm,
            )
        )
        rows.append(
            OpRow(
                f"nn.avg_pool{nd}d",
                ("data",),
                (*pool_attrs, ("count_include_pad", False)),
                f"relax.nn.avg_pool{nd}d",
                direct(
                    f"relax.nn.avg_pool{nd}d",
                    count_include_pad="count_include_pad",
                    **common,  # type: ignore[arg-type]
                ),
                f"relay.attrs.AvgPool{nd}DAttrs",
                normalize=norm,
            )
        )
    for kind, relax_op in (("max", "relax.max"), ("avg", "relax.mean")):
        rows.append(
            OpRow(
                f"nn.global_{kind}_pool2d",
                ("data",),
                (("layout", "NCHW"), ("out_layout", "")),
                relax_op,
                _global_pool(relax_op),
                "relay.attrs.GlobalPool2DAttrs",
                refusals=(
                    Refusal("out_layout", lambda v: v in ("", None), "transpose the result"),
                ),
            )
        )
    for nd, layout in ((1, "NCW"), (2, "NCHW")):
        rows.append(
            OpRow(
                f"nn.adaptive_avg_pool{nd}d",
                ("data",),
                (("output_size", None), ("layout", layout), ("out_layout", "")),
                f"relax.nn.adaptive_avg_pool{nd}d",
                direct(
                    f"relax.nn.adaptive_avg_pool{nd}d",
                    output_size="output_size",
                    layout="layout",
                    out_layout=lambda a, _: _opt(a.out_layout),
                ),
                f"relay.attrs.AdaptivePool{nd}DAttrs",
                normalize={"output_size": _ntuple(nd)},
            )
        )

    rows += [
        OpRow(
            "nn.dense",
            ("data", "weight"),
            (("units", None), ("out_dtype", "")),
            "relax.matmul",
            _dense,
            "relay.attrs.DenseAttrs",
            normalize={"out_dtype": _dtype},
            infer_inputs=_infer_dense,
        ),
        OpRow(
            "nn.matmul",
            ("tensor_a", "tensor_b"),
            (("units", None), ("out_dtype", ""), ("transpose_a", False), ("transpose_b", False)),
            "relax.matmul",
            _matmul,
            "relay.attrs.MatmulAttrs",
            normalize={"out_dtype": _dtype},
        ),
        OpRow(
            "nn.batch_matmul",
            ("tensor_a", "tensor_b"),
            (("out_dtype", ""), ("transpose_a", False), ("transpose_b", True)),
            "relax.matmul",
            _batch_matmul,
            "relay.attrs.BatchMatmulAttrs",
            normalize={"out_dtype": _dtype},
        ),
        OpRow(
            "nn.bias_add",
            ("data", "bias"),
            (("axis", 1),),
            "relax.add",
            _bias_add,
            "relay.attrs.BiasAddAttrs",
            infer_inputs=_infer_per_channel,
        ),
        OpRow("nn.relu", ("data",), (), "relax.nn.relu", direct("relax.nn.relu")),
        OpRow(
            "nn.leaky_relu",
            ("data",),
            (("alpha", 0.01),),
            "relax.nn.leakyrelu",
            direct("relax.nn.leakyrelu", alpha="alpha"),
            "relay.attrs.LeakyReluAttrs",
        ),
        OpRow(
            "nn.prelu",
            ("data", "alpha"),
            (("axis", 1),),
            "relax.nn.prelu",
            direct("relax.nn.prelu", axis="axis"),
            "relay.attrs.PReluAttrs",
            infer_inputs=_infer_per_channel,
        ),
        OpRow(
            "nn.softmax",
            ("data",),
            (("axis", -1),),
            "relax.nn.softmax",
            direct("relax.nn.softmax", axis="axis"),
            "relay.attrs.SoftmaxAttrs",
        ),
        OpRow(
            "nn.log_softmax",
            ("data",),
            (("axis", -1),),
            "relax.nn.log_softmax",
            direct("relax.nn.log_softmax", axis="axis"),
            "relay.attrs.SoftmaxAttrs",
        ),
        OpRow(
            "nn.batch_flatten",
            ("data",),
            (),
            "relax.nn.batch_flatten",
            direct("relax.nn.batch_flatten"),
        ),
        OpRow(
            "nn.batch_norm",
            ("data", "gamma", "beta", "moving_mean", "moving_var"),
            (("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
            "relax.nn.batch_norm",
            direct(
                "relax.nn.batch_norm",
                axis="axis",
                epsilon="epsilon",
                center="center",
                scale="scale",
                training=lambda a, _: False,
            ),
            "relay.attrs.BatchNormAttrs",
            infer_inputs=_infer_per_channel,
            outputs=lambda a: 3,
        ),
        OpRow(
            "nn.layer_norm",
            ("data", "gamma", "beta"),
            (("axis", -1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
            "relax.nn.layer_norm",
            direct(
                "relax.nn.layer_norm",
                axes="axis",
                epsilon="epsilon",
                center="center",
                scale="scale",
            ),
            "relay.attrs.LayerNormAttrs",
            infer_inputs=_infer_per_channel,
        ),
        OpRow(
            "nn.group_norm",
            ("data", "gamma", "beta"),
            (
                ("num_groups", _REQUIRED),
                ("axis", 1),
                ("epsilon", 1e-5),
                ("center", True),
                ("scale", True),
            ),
            "relax.nn.group_norm",
            _group_norm,
            "relay.attrs.GroupNormAttrs",
            infer_inputs=_infer_per_channel,
        ),
        OpRow(
            "nn.instance_norm",
            ("data", "gamma", "beta"),
            (("axis", 1), ("epsilon", 1e-5), ("center", True), ("scale", True)),
            "relax.nn.instance_norm",
            _instance_norm,
            "relay.attrs.InstanceNormAttrs",
            infer_inputs=_infer_per_channel,
        ),
        OpRow(
            "nn.pad",
            ("data",),
            (("pad_width", _REQUIRED), ("pad_value", 0), ("pad_mode", "constant")),
            "relax.nn.pad",
            _pad,
            "relay.attrs.PadAttrs",
            normalize={"pad_value": _scalar_value},
            refusals=(
                Refusal(
                    "pad_mode",
                    lambda v: v in ("constant", "reflect", "edge"),
                    "Relax pads with constant, reflect or edge",
                ),
            ),
        ),
        OpRow(
            "nn.upsampling",
            ("data",),
            (
                ("scale_h", 1),
                ("scale_w", 1),
                ("layout", "NCHW"),
                ("method", "nearest_neighbor"),
                ("align_corners", False),
            ),
            "relax.image.resize2d",
            _upsampling,
            "relay.attrs.UpSamplingAttrs",
            refusals=(
                Refusal(
                    "method",
                    lambda v: v in _UPSAMPLING_METHODS,
                    "use nearest_neighbor, bilinear or bicubic",
                ),
            ),
        ),
        OpRow(
            "nn.dropout",
            ("data",),
            (("rate", 0.5),),
            "(none: the identity at inference)",
            _identity,
            "relay.attrs.DropoutAttrs",
        ),
        OpRow(
            "image.resize2d",
            ("data",),
            (
                ("size", _REQUIRED),
                ("roi", None),
                ("layout", "NCHW"),
                ("method", "linear"),
                ("coordinate_transformation_mode", "half_pixel"),
                ("rounding_method", ""),
                ("cubic_alpha", -0.5),
                ("cubic_exclude", 0),
                ("extrapolation_value", 0.0),
                ("out_dtype", None),
            ),
            "relax.image.resize2d",
            _resize2d,
            "relay.attrs.Resize2DAttrs",
            normalize={"size": _ntuple(2)},
        ),
    ]

    rows += [
        OpRow(
            "reshape",
            ("data",),
            (("newshape", _REQUIRED), ("allowzero", False)),
            "relax.reshape",
            _reshape,
            "relay.attrs.ReshapeAttrs",
        ),
        OpRow(
            "transpose",
            ("data",),
            (("axes", None),),
            "relax.permute_dims",
            direct("relax.permute_dims", axes="axes"),
            "relay.attrs.TransposeAttrs",
            normalize={"axes": _int_list},
        ),
        OpRow(
            "squeeze",
            ("data",),
            (("axis", None),),
            "relax.squeeze",
            direct("relax.squeeze", axis="axis"),
            "relay.attrs.SqueezeAttrs",
            normalize={"axis": lambda v: [v] if isinstance(v, int) else _int_list(v)},
        ),
        OpRow(
            "expand_dims",
            ("data",),
            (("axis", _REQUIRED), ("num_newaxis", 1)),
            "relax.expand_dims",
            _expand_dims,
            "relay.attrs.ExpandDimsAttrs",
        ),
        OpRow(
            "concatenate",
            ("data",),
            (("axis", _REQUIRED),),
            "relax.concat",
            direct("relax.concat", axis="axis"),
            "relay.attrs.ConcatenateAttrs",
            tuple_input=True,
        ),
        OpRow(
            "stack",
            ("data",),
            (("axis", _REQUIRED),),
            "relax.stack",
            direct("relax.stack", axis="axis"),
            "relay.attrs.StackAttrs",
            tuple_input=True,
        ),
        OpRow(
            "split",
            ("data",),
            (("indices_or_sections", _REQUIRED), ("axis", 0)),
            "relax.split",
            _split,
            "relay.attrs.SplitAttrs",
            outputs=_split_outputs,
        ),
        OpRow(
            "take",
            ("data", "indices"),
            (("axis", None), ("batch_dims", 0), ("mode", "clip")),
            "relax.take",
            _take,
            "relay.attrs.TakeAttrs",
            refusals=(
                Refusal("batch_dims", lambda v: v == 0, "use relax.op.gather_nd with batch_dims"),
                Refusal("mode", lambda v: v in ("clip", "wrap", "fast"), "use clip or wrap"),
            ),
        ),
        OpRow(
            "strided_slice",
            ("data",),
            (
                ("begin", _REQUIRED),
                ("end", _REQUIRED),
                ("strides", None),
                ("axes", None),
                ("slice_mode", "end"),
            ),
            "relax.strided_slice",
            _strided_slice,
            "relay.attrs.StridedSliceAttrs",
            normalize={
                "begin": _static_ints("begin"),
                "end": _static_ints("end"),
                "strides": _static_ints("strides"),
                "axes": _int_list,
            },
        ),
        OpRow("where", ("condition", "x", "y"), (), "relax.where", direct("relax.where")),
        OpRow(
            "clip",
            ("a",),
            (("a_min", _REQUIRED), ("a_max", _REQUIRED)),
            "relax.clip",
            _clip,
            "relay.attrs.ClipAttrs",
            normalize={"a_min": float, "a_max": float},
        ),
        OpRow(
            "cast",
            ("data",),
            (("dtype", _REQUIRED),),
            "relax.astype",
            direct("relax.astype", dtype="dtype"),
            "relay.attrs.CastAttrs",
            normalize={"dtype": _dtype},
        ),
        OpRow(
            "full",
            ("fill_value",),
            (("shape", ()), ("dtype", "")),
            "relax.full",
            _full,
            "relay.attrs.InitOpAttrs",
            normalize={"shape": _static_ints("shape"), "dtype": _dtype},
        ),
        OpRow(
            "zeros",
            (),
            (("shape", _REQUIRED), ("dtype", _REQUIRED)),
            "relax.zeros",
            direct("relax.zeros", shape="shape", dtype="dtype"),
            "relay.attrs.InitOpAttrs",
            normalize={"shape": _static_ints("shape"), "dtype": _dtype},
        ),
        OpRow(
            "ones",
            (),
            (("shape", _REQUIRED), ("dtype", _REQUIRED)),
            "relax.ones",
            direct("relax.ones", shape="shape", dtype="dtype"),
            "relay.attrs.InitOpAttrs",
            normalize={"shape": _static_ints("shape"), "dtype": _dtype},
        ),
        OpRow(
            "full_like",
            ("data", "fill_value"),
            (),
            "relax.full_like",
            direct("relax.full_like"),
        ),
        OpRow("zeros_like", ("data",), (), "relax.zeros_like", direct("relax.zeros_like")),
        OpRow("ones_like", ("data",), (), "relax.ones_like", direct("relax.ones_like")),
        OpRow(
            "broadcast_to",
            ("data",),
            (("shape", _REQUIRED),),
            "relax.broadcast_to",
            direct("relax.broadcast_to", shape="shape"),
            "relay.attrs.InitOpAttrs",
            normalize={"shape": _static_ints("shape")},
        ),
        OpRow(
            "tile",
            ("data",),
            (("reps", _REQUIRED),),
            "relax.tile",
            direct("relax.tile", repeats="reps"),
            "relay.attrs.TileAttrs",
            normalize={"reps": _static_ints("reps")},
        ),
        OpRow(
            "repeat",
            ("data",),
            (("repeats", _REQUIRED), ("axis", _REQUIRED)),
            "relax.repeat",
            direct("relax.repeat", repeats="repeats", axis="axis"),
            "relay.attrs.RepeatAttrs",
        ),
        OpRow(
            "reverse",
            ("data",),
            (("axis", _REQUIRED),),
            "relax.flip",
            direct("relax.flip", axis="axis"),
            "relay.attrs.ReverseAttrs",
        ),
        OpRow(
            "sort",
            ("data",),
            (("axis", -1), ("is_ascend", 1)),
            "relax.sort",
            direct("relax.sort", axis="axis", descending=lambda a, _: not a.is_ascend),
            "relay.attrs.ArgsortAttrs",
        ),
        OpRow(
            "argsort",
            ("data",),
            (("axis", -1), ("is_ascend", 1), ("dtype", "int32")),
            "relax.argsort",
            direct(
                "relax.argsort",
                axis="axis",
                descending=lambda a, _: not a.is_ascend,
                dtype="dtype",
            ),
            "relay.attrs.ArgsortAttrs",
        ),
        OpRow(
            "topk",
            ("data",),
            (
                ("k", 1),
                ("axis", -1),
                ("ret_type", "both"),
                ("is_ascend", False),
                ("dtype", "int32"),
            ),
            "relax.topk",
            direct(
                "relax.topk",
                k="k",
                axis="axis",
                ret_type="ret_type",
                largest=lambda a, _: not a.is_ascend,
                dtype="dtype",
            ),
            "relay.attrs.TopKAttrs",
            outputs=lambda a: 2 if a.ret_type == "both" else 0,
            refusals=(
                Refusal("k", lambda v: isinstance(v, int), "k must be a Python int in Relax"),
            ),
        ),
    ]
    for n in ("cumsum", "cumprod"):
        rows.append(
            OpRow(
                n,
                ("data",),
                (("axis", None), ("dtype", None), ("exclusive", None)),
                f"relax.{n}",
                direct(
                    f"relax.{n}",
                    axis="axis",
                    dtype=lambda a, _: _opt(a.dtype),
                    exclusive=lambda a, _: bool(a.exclusive),
                ),
                "relay.attrs.ScanopAttrs",
            )
        )
    rows += [
        OpRow("copy", ("data",), (), "(none: Relax values are immutable)", _identity),
        OpRow("log2", ("data",), (), "relax.log", _log_base(2.0)),
        OpRow("log10", ("data",), (), "relax.log", _log_base(10.0)),
        OpRow(
            "nn.fast_softmax",
            ("data",),
            (("axis", -1),),
            "relax.nn.softmax",
            direct("relax.nn.softmax", axis="axis"),
            "relay.attrs.SoftmaxAttrs",
        ),
        OpRow(
            "nn.adaptive_avg_pool3d",
            ("data",),
            (("output_size", None), ("layout", "NCDHW"), ("out_layout", "")),
            "relax.nn.adaptive_avg_pool3d",
            direct(
                "relax.nn.adaptive_avg_pool3d",
                output_size="output_size",
                layout="layout",
                out_layout=lambda a, _: _opt(a.out_layout),
            ),
            "relay.attrs.AdaptivePool3DAttrs",
            normalize={"output_size": _ntuple(3)},
        ),
        OpRow(
            "gather",
            ("data", "indices"),
            (("axis", _REQUIRED),),
            "relax.gather_elements",
            direct("relax.gather_elements", axis="axis"),
            "relay.attrs.GatherAttrs",
            order=("data", "axis", "indices"),
        ),
        OpRow(
            "gather_nd",
            ("data", "indices"),
            (("batch_dims", 0), ("index_rank", None)),
            "relax.gather_nd",
            _gather_nd,
            "relay.attrs.GatherNDAttrs",
        ),
        OpRow(
            "scatter_elements",
            ("data", "indices", "updates"),
            (("axis", 0), ("reduction", "update")),
            "relax.scatter_elements",
            direct("relax.scatter_elements", axis="axis", reduction="reduction"),
            "relay.attrs.ScatterElementsAttrs",
        ),
        OpRow(
            "one_hot",
            ("indices",),
            (
                ("on_value", _REQUIRED),
                ("off_value", _REQUIRED),
                ("depth", _REQUIRED),
                ("axis", _REQUIRED),
                ("dtype", _REQUIRED),
            ),
            "relax.one_hot",
            _one_hot,
            "relay.attrs.OneHotAttrs",
            normalize={"on_value": _scalar_value, "off_value": _scalar_value, "dtype": _dtype},
        ),
        OpRow(
            "arange",
            (),
            (("start", _REQUIRED), ("stop", None), ("step", None), ("dtype", "float32")),
            "relax.arange",
            _arange,
            "relay.attrs.ArangeAttrs",
            normalize={"start": _scalar_value, "stop": _scalar_value, "step": _scalar_value},
        ),
        OpRow(
            "reshape_like",
            ("data", "shape_like"),
            (
                ("lhs_begin", 0),
                ("lhs_end", None),
                ("rhs_begin", 0),
                ("rhs_end", None),
            ),
            "relax.reshape",
            _reshape_like,
            "relay.attrs.ReshapeLikeAttrs",
            refusals=tuple(
                Refusal(name, _equals(default), "reshape to a static shape with relay.reshape")
                for name, default in (
                    ("lhs_begin", 0),
                    ("lhs_end", None),
                    ("rhs_begin", 0),
                    ("rhs_end", None),
                )
            ),
        ),
        OpRow(
            "layout_transform",
            ("data",),
            (("src_layout", _REQUIRED), ("dst_layout", _REQUIRED)),
            "relax.permute_dims",
            _layout_transform,
            "relay.attrs.LayoutTransformAttrs",
            refusals=(
                Refusal(
                    "dst_layout",
                    _plain_layout_pair,
                    "only permutations of plain layouts (NCHW <-> NHWC) map to "
                    "relax.op.permute_dims; use relax.op.layout_transform with an index map",
                ),
                Refusal(
                    "src_layout",
                    _plain_layout_pair,
                    "only permutations of plain layouts (NCHW <-> NHWC) map to "
                    "relax.op.permute_dims; use relax.op.layout_transform with an index map",
                ),
            ),
        ),
        OpRow(
            "einsum",
            ("data",),
            (("equation", _REQUIRED),),
            "relax.einsum",
            lambda bb, args, attrs: relax.op.einsum(args[0], attrs.equation),
            "relay.attrs.EinsumAttrs",
            tuple_input=True,
        ),
    ]
    return rows


def _scalar_value(value: Any) -> Any:
    if isinstance(value, Constant):
        return value.data.numpy().item()
    if isinstance(value, Expr):
        raise UnsupportedRelayError(
            "a tensor-valued pad_value has no Relax equivalent: relax.op.nn.pad takes a number"
        )
    return value


def _static_ints(attr: str) -> Callable[[Any], Any]:
    """Shape-like attributes must be static in Relax's op (Relay's dyn.* ops are not mapped)."""

    def norm(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, Constant):
            value = value.data.numpy().tolist()
        if isinstance(value, Expr):
            raise UnsupportedRelayError(
                f"a tensor-valued {attr} (Relay's dyn.* ops) has no Relax equivalent here: "
                "pass Python ints, or build the Relax function with relax.op.* and a ShapeExpr"
            )
        if isinstance(value, int | np.integer | tirx.IntImm):
            return (int(value),)
        return tuple(int(v) for v in value)

    return norm


def _unconnected(fstrategy: Any, row: OpRow) -> Any:
    raise RuntimeError("compile_engine_compat.relay is not initialized: import it first")


#: Adapts a Relay ``FTVMStrategy`` function to the engine's registry
#: (:func:`.op.op.strategy_function`, which builds on this module): connected once by
#: ``relay/__init__`` (:func:`connect_strategy`).
_strategy_adapter: Callable[[Any, OpRow], Any] = _unconnected


def connect_strategy(adapter: Callable[[Any, OpRow], Any]) -> None:
    """Set how an ``FTVMStrategy`` op attribute reaches the engine's strategy registry."""
    global _strategy_adapter
    _strategy_adapter = adapter


#: Relay op name -> row. The single source of the Relay front end's ops.
OP_TABLE: dict[str, OpRow] = {row.name: row for row in _rows()}

#: Relay ops with no Relax equivalent in this front end -> what to write instead.
REFUSED_OPS: dict[str, str] = {
    "nn.adaptive_max_pool2d": "Relax has no adaptive max pool: use relax.op.nn.max_pool2d "
    "with computed windows, or relax.op.max over the spatial axes for output_size 1",
    "nn.conv3d_transpose": "use relax.op.nn.conv3d_transpose with a relax.BlockBuilder",
    "nn.lrn": "Relax has no lrn: compose it from relax.op.power, relax.op.sum and relax.op.divide",
    "nn.l2_normalize": "compose relax.op.sqrt(relax.op.sum(x * x, axis)) and relax.op.divide",
    "nn.fifo_buffer": "no Relax equivalent: keep the buffer in the host program",
    "nn.space_to_depth": "use relax.op.reshape and relax.op.permute_dims",
    "nn.depth_to_space": "use relax.op.reshape and relax.op.permute_dims",
    "nn.contrib_conv2d_winograd_without_weight_transform": "use relax.op.nn.conv2d",
}


@functools.cache
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
    if op_name in OP_TABLE:
        return RelayOp(OP_TABLE[op_name])
    if op_name in REFUSED_OPS:
        raise UnsupportedRelayError(
            f"Relay op {op_name!r} has no Relax equivalent: {REFUSED_OPS[op_name]}"
        )
    raise ValueError(f"Relay op {op_name!r} is not known to the compile-engine-compat front end")


@functools.cache
def builder(op_name: str) -> Callable[..., Any]:
    """The Relay builder function of an op (``relay.nn.conv2d``), made from its row.

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
    if op_name in REFUSED_OPS:

        def refused(*args: Any, **kwargs: Any) -> Any:
            get(op_name)  # raises, naming the replacement

        refused.__name__ = op_name.rsplit(".", 1)[-1]
        return refused
    row = OP_TABLE[op_name]
    op = get(op_name)
    sig = row.signature

    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"relay.{op_name}{sig}: {err}") from None
        bound.apply_defaults()
        values = bound.arguments
        inputs: list[Expr] = []
        for name in row.inputs:
            value = values[name]
            if row.tuple_input and isinstance(value, list | tuple):
                inputs.append(Tuple(list(value)))
            else:
                inputs.append(_as_expr(value))
        attrs = row.make_attrs(values)
        call = Call(op, inputs, attrs)
        if row.outputs is not None:
            size = row.outputs(attrs)
            if size:
                return TupleWrapper(call, size)
        return call

    build.__name__ = op_name.rsplit(".", 1)[-1]
    build.__qualname__ = build.__name__
    build.__signature__ = sig  # type: ignore[attr-defined]
    build.__doc__ = (
        f"Relay's ``{op_name}``, built as ``{row.relax_op}``.\n\n"
        f"Signature as in TVM 0.7-0.19: ``{op_name}{sig}``."
    )
    return build


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
    for name in (*OP_TABLE, *REFUSED_OPS):
        head, _, short = name.rpartition(".")
        if head == prefix:
            out[short] = builder(name)
    return out
