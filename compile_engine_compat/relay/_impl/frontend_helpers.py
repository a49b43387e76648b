"""The helpers of TVM 0.19's ``relay.frontend.common`` that Relay-era converters and tests use,
over the front end's Relay graph (re-exported by :mod:`.common`).

Types come from the front end's inference (``infer_type(x).checked_type``), values from running
the expression on the CPU (``infer_value``), ops from the front end's table (``get_relay_op``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL
from compile_engine_compat.relay._impl.to_relax import infer

from .. import op as _op
from ..analysis import free_vars
from ..expr import Constant, Expr, Tuple, TupleWrapper, Var, const, var
from ..function import Function
from ..ty import TensorType

__all__ = [
    "AttrCvt",
    "DuplicateFilter",
    "ExprTable",
    "Renamer",
    "RequiredAttr",
    "StrAttrsDict",
    "autopad",
    "ensure_scalar_shape",
    "fold_constant",
    "get_name",
    "get_relay_op",
    "infer_channels",
    "infer_shape",
    "infer_type",
    "infer_value",
    "infer_value_simulated",
    "logger",
    "new_var",
    "set_span",
    "shape_of",
    "to_int_list",
    "try_infer_value",
    "try_resolve_var_to_const",
    "unbind",
]


class DuplicateFilter(logging.Filter):
    """A logging filter that lets each message through once."""

    def __init__(self) -> None:
        super().__init__()
        self.msgs: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if message in self.msgs:
            return False
        self.msgs.add(message)
        return True


#: The frontends' logger (TVM 0.19's ``logging.getLogger("Frontend")``, duplicates dropped).
logger = logging.getLogger("Frontend")
logger.addFilter(DuplicateFilter())


class RequiredAttr:
    """The marker of an attribute :class:`StrAttrsDict` must find (a default of ``required``)."""


#: The default of :class:`StrAttrsDict`'s getters: the attribute must be given.
_REQUIRED = RequiredAttr()


class StrAttrsDict:
    """Attributes given as strings (MXNet, ONNX-style), read as typed values.

    Parameters
    ----------
    attrs : dict of str to str
        The attributes.
    """

    def __init__(self, attrs: Mapping[str, Any]) -> None:
        self.attrs = dict(attrs)

    def has_attr(self, key: str) -> bool:
        """Whether ``key`` is given."""
        return key in self.attrs

    def _get(self, key: str, default: Any, parse: Callable[[Any], Any]) -> Any:
        if key in self.attrs:
            return parse(self.attrs[key])
        if isinstance(default, RequiredAttr):
            raise AttributeError(f"Required attribute {key} not found.")
        return default

    def get_str(self, key: str, default: Any = _REQUIRED) -> Any:
        """The attribute as a string."""
        return self._get(key, default, str)

    def get_int(self, key: str, default: Any = _REQUIRED) -> Any:
        """The attribute as an int (``"None"`` is None)."""
        return self._get(key, default, lambda v: None if str(v) == "None" else int(v))

    def get_float(self, key: str, default: Any = _REQUIRED) -> Any:
        """The attribute as a float."""
        return self._get(key, default, float)

    def get_bool(self, key: str, default: Any = _REQUIRED) -> Any:
        """The attribute as a bool (``"True"``, ``"1"``, ``"true"`` are true)."""
        return self._get(key, default, lambda v: str(v).strip().lower() in ("true", "1"))

    def get_int_tuple(self, key: str, default: Any = _REQUIRED) -> Any:
        """``"(1, 2)"`` as ``(1, 2)`` (``"None"`` entries as None)."""
        return self._get(key, default, lambda v: tuple(_ints(_items(v))))

    def get_int_list(self, key: str, default: Any = _REQUIRED) -> Any:
        """``"[1, 2]"`` as ``[1, 2]``."""
        return self._get(key, default, lambda v: list(_ints(_items(v))))

    def get_float_tuple(self, key: str, default: Any = _REQUIRED) -> Any:
        """``"(0.5, 1)"`` as ``(0.5, 1.0)``."""
        return self._get(key, default, lambda v: tuple(float(x) for x in _items(v)))

    def get_tuple_tuple_int(self, key: str, default: Any = _REQUIRED) -> Any:
        """``"((1, 2), (3, 4))"`` as ``((1, 2), (3, 4))``."""

        def parse(value: Any) -> Any:
            text = str(value).strip()[1:-1]
            groups = [g for g in text.replace(" ", "").split("),") if g]
            return tuple(tuple(_ints(_items(g + ")"))) for g in groups)

        return self._get(key, default, parse)


def _items(value: Any) -> list[str]:
    text = str(value).strip().strip("()[]")
    return [item.strip() for item in text.split(",") if item.strip()]


def _ints(items: Iterable[str]) -> Iterable[int | None]:
    return (None if item in ("None", "L") else int(item.rstrip("L")) for item in items)


def get_relay_op(op_name: str) -> Callable[..., Any]:
    """The builder of Relay op ``op_name`` (``"nn.conv2d"``, ``"conv2d"``, ``"add"``).

    Raises
    ------
    tvm.error.OpNotImplemented
        If the front end's table has no such op.
    """
    if "." in op_name:
        module: Any = _op
        for part in op_name.split("."):
            module = getattr(module, part, None)
            if module is None:
                break
        if module is not None:
            return module
    else:
        for candidate in (_op, _op.nn, _op.image, _op.vision):
            found = getattr(candidate, op_name, None)
            if callable(found):
                return found
    raise tvm.error.OpNotImplemented(f"Unable to map op_name {op_name} to relay")


class ExprTable:
    """Relay expressions by name, as a converter builds them (constants named ``_param_N``)."""

    def __init__(self) -> None:
        self.exprs: dict[str, Expr] = {}
        self.params: dict[str, Any] = {}
        self.const_ctr = 1
        self.in_padding = False
        self.paddings: tuple[Any, ...] = ()

    def new_const(
        self, value: Any, shape: Any = None, dtype: str = "float32", source_name: Any = None
    ) -> Var:
        """A new parameter variable holding ``value`` (kept in :attr:`params`)."""
        name = f"_param_{self.const_ctr}"
        self.const_ctr += 1
        array = np.asarray(value, dtype=dtype)
        self.params[name] = tvm.runtime.tensor(array)
        shape = array.shape if shape is None else shape
        return var(name, shape=shape, dtype=dtype)

    def get_expr(self, name: str) -> Expr:
        """The expression named ``name``."""
        return self.exprs[name]

    def set_expr(self, name: str, expr: Expr, force_override: bool = False) -> None:
        """Name ``expr`` (a name already set is kept unless ``force_override``)."""
        if not isinstance(name, str):
            raise TypeError(f"an expression's name is a str, got {name!r}")
        if force_override or name not in self.exprs:
            self.exprs[name] = expr

    def has_expr(self, name: str) -> bool:
        """Whether ``name`` is set."""
        return name in self.exprs

    def set_padding(self, paddings: Any) -> None:
        """Remember a padding for the next op."""
        self.paddings = paddings
        self.in_padding = True

    def clear_padding(self) -> None:
        """Forget the padding."""
        self.in_padding = False


class AttrCvt:
    """Convert an op's attributes to a Relay op's and build it (TVM 0.19's converter helper).

    Parameters
    ----------
    op_name : str or callable
        The Relay op (or a function of the attributes naming it).
    transforms : dict
        Old name -> new name, or -> (new name, default) or (new name, default, function).
    excludes : list
        Attributes that must not be given (one raises ``tvm.error.OpAttributeUnImplemented``).
    disables : list
        Attributes dropped with a warning.
    ignores : list
        Attributes dropped silently.
    extras : dict
        Attributes added.
    custom_check : callable
        ``custom_check(attrs) -> (ok, message)``.
    """

    def __init__(
        self,
        op_name: Any,
        transforms: Mapping[str, Any] | None = None,
        excludes: Iterable[str] | None = None,
        disables: Iterable[str] | None = None,
        ignores: Iterable[str] | None = None,
        extras: Mapping[str, Any] | None = None,
        custom_check: Callable[[Any], Any] | None = None,
    ) -> None:
        self._op_name = op_name
        self._transforms = dict(transforms or {})
        self._excludes = list(excludes or [])
        self._disables = list(disables or [])
        self._ignores = list(ignores or [])
        self._extras = dict(extras or {})
        self._custom_check = custom_check

    def __call__(self, inputs: Any, attrs: Mapping[str, Any], *args: Any) -> Any:
        ignored = {"tvm_custom", "_output_shapes", "_input_shapes", "T", "use_cudnn_on_gpu"}
        ignored.update({"_model_parameter", "_node_name", "is_training", "_target_layout"})
        if self._custom_check is not None:
            ok, message = self._custom_check(attrs)
            if not ok:
                raise RuntimeError(f"Check failed: {message}")
        op_name = self._op_name(attrs) if callable(self._op_name) else self._op_name
        converted: dict[str, Any] = {}
        for key, value in attrs.items():
            if key in self._excludes:
                raise tvm.error.OpAttributeUnImplemented(
                    f"Attribute {key} in operator {op_name} is not supported."
                )
            if key in self._disables:
                logger.debug("Attribute %s is disabled in relay.sym.%s", key, op_name)
            elif key in self._ignores or key in ignored:
                continue
            elif key in self._transforms:
                new_name, _, function = self._transform(key)
                converted[new_name] = function(value) if function is not None else value
            else:
                converted[key] = value
        for key in self._transforms:
            new_name, default, _ = self._transform(key)
            if key not in attrs and default is not None:
                converted.setdefault(new_name, default)
        converted.update(self._extras)
        return get_relay_op(op_name)(*list(inputs), **converted)

    def _transform(self, key: str) -> tuple[str, Any, Any]:
        rule = self._transforms[key]
        if isinstance(rule, str):
            return rule, None, None
        rule = list(rule) + [None] * (3 - len(rule))
        return rule[0], rule[1], rule[2]


class Renamer:
    """Build the Relay op ``new_name`` with the attributes as given (an op renamed)."""

    def __init__(self, new_name: str) -> None:
        self._new_name = new_name

    def __call__(self, inputs: Any, attrs: Mapping[str, Any], *args: Any) -> Any:
        attrs = {k: v for k, v in attrs.items() if k != "tvm_custom"}
        return get_relay_op(self._new_name)(*list(inputs), **attrs)


def get_name(node: Any) -> str:
    """A variable's name, or ``""``."""
    return str(node.name_hint) if hasattr(node, "name_hint") else ""


def infer_type(node: Any, mod: Any = None) -> Any:
    """``node`` with its type inferred: read it as ``infer_type(node).checked_type``."""
    return infer(node)


def infer_shape(inputs: Any, mod: Any = None) -> tuple[Any, ...]:
    """The inferred shape of ``inputs`` as ints (a symbolic dimension stays symbolic)."""
    ty = infer_type(inputs).checked_type
    return tuple(_as_int(d) for d in getattr(ty, "shape", ()))


def _as_int(dim: Any) -> Any:
    value = getattr(dim, "value", dim)
    return int(value) if isinstance(value, int | np.integer) else dim


def infer_channels(inputs: Any, transpose: bool = False) -> int:
    """The channel count of a weight: its first dimension (its second when ``transpose``)."""
    shape = infer_shape(inputs)
    return int(shape[1] if transpose else shape[0])


def infer_value(input_val: Any, params: Mapping[str, Any], mod: Any = None) -> Any:
    """The value of ``input_val``, run on the CPU with its free variables taken from
    ``params`` (a ``tvm.runtime.Tensor``).

    Raises
    ------
    ValueError
        If a free variable of the expression is not in ``params``.
    """
    from ..build_module import create_executor  # the build imports the frontends' package

    if isinstance(input_val, Constant):
        return tvm.runtime.tensor(input_val.data.numpy())
    inputs = free_vars(input_val)
    missing = [v.name_hint for v in inputs if v.name_hint not in params]
    if missing:
        raise ValueError(f"infer_value: no value for the free variable(s) {missing}")
    args = [_tensor(params[v.name_hint]) for v in inputs]
    mod = tvm.IRModule.from_expr(Function(inputs, input_val))
    run = create_executor("vm", mod=mod, **INTERNAL)  # the helper's own build: no warning
    return run.evaluate()(*args)


def infer_value_simulated(input_val: Any, params: dict[str, Any]) -> Any:
    """:func:`infer_value` with each free variable missing from ``params`` given random values
    of its annotated shape and dtype (uniform in [0, 1), as TVM 0.19's); ``params`` is left as
    it was.

    Raises
    ------
    ValueError
        If a missing variable has no static ``TensorType`` annotation to draw values for.
    """
    filled = dict(params)
    for free in free_vars(input_val):
        if free.name_hint in filled:
            continue
        ty = free.type_annotation
        shape = _static_shape(ty)
        if shape is None:
            raise ValueError(
                f"infer_value_simulated: %{free.name_hint} needs a static TensorType annotation "
                f"to simulate its value, got {ty!r}"
            )
        data = np.random.rand(*shape).astype(str(ty.dtype))
        filled[free.name_hint] = tvm.runtime.tensor(data)
    return infer_value(input_val, filled)


def _static_shape(ty: Any) -> tuple[int, ...] | None:
    """The shape of a ``TensorType`` of static dimensions, else None."""
    try:
        return ty.concrete_shape if isinstance(ty, TensorType) else None
    except TypeError:  # a symbolic dimension
        return None


def _tensor(value: Any) -> Any:
    if isinstance(value, tvm.runtime.Tensor):
        return value
    return tvm.runtime.tensor(np.asarray(getattr(value, "numpy", lambda: value)()))


def try_infer_value(
    val: Any,
    on_success: Callable[[Any], Any] | None = None,
    on_failure: Callable[[], Any] | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[Any, bool]:
    """``(value as NumPy, True)`` when :func:`infer_value` can compute ``val`` (through
    ``on_success`` if given), else ``(on_failure() or val, False)``."""
    try:
        value = infer_value(val, dict(parameters or {})).numpy()
    except Exception:  # TVM 0.19 caught everything here too
        return (on_failure() if on_failure is not None else val), False
    return (on_success(value) if on_success is not None else value), True


def fold_constant(node: Any, mod: Any = None) -> Any:
    """``node`` folded: an expression of no free variables becomes its constant value."""
    if isinstance(node, Expr) and not isinstance(node, Constant | Var) and not free_vars(node):
        try:
            return const(infer_value(node, {}).numpy())
        except (TypeError, ValueError):
            return node  # a tuple or a function: left as it is
    return node


def shape_of(x: Any, dtype: str = "int64", start: Any = None, end: Any = None) -> Any:
    """The shape of ``x`` (a constant where it is static, as TVM 0.19 returned), sliced to
    ``[start:end]``."""
    shape = infer_shape(x)
    if all(isinstance(d, int) for d in shape):
        return const(np.array(shape[start:end], dtype=dtype))
    out = _op.shape_of(x, dtype)
    if start is None and end is None:
        return out
    return _op.strided_slice(out, [start or 0], [len(shape) if end is None else end])


def new_var(
    name_hint: str, type_annotation: Any = None, shape: Any = None, dtype: str = "float32"
) -> Var:
    """``relay.var(name_hint, type_annotation, shape, dtype)``."""
    return var(name_hint, type_annotation, shape, dtype)


def to_int_list(np_array: Any) -> list[int]:
    """A NumPy array (or sequence) as a list of Python ints."""
    return [int(x) for x in np.asarray(np_array).reshape(-1).tolist()]


def unbind(data: Any, axis: int = 0) -> TupleWrapper:
    """``data`` split into its slices along ``axis``, each without that axis."""
    shape = infer_shape(data)
    if not isinstance(shape[axis], int):
        raise ValueError("unbind takes an axis of static length")
    parts = _op.split(data, shape[axis], axis)
    fields = [_op.squeeze(parts[i], axis=[axis]) for i in range(shape[axis])]
    return TupleWrapper(Tuple(fields), len(fields))


def ensure_scalar_shape(x: Any) -> Any:
    """``x`` as a scalar when it holds one element of shape ``(1,)``; otherwise unchanged."""
    shape = infer_shape(x)
    if len(shape) == 1 and shape[0] == 1:
        return _op.squeeze(x, axis=[0])
    return x


def try_resolve_var_to_const(x: Any, graph_params: Mapping[str, Any]) -> Any:
    """A variable named in ``graph_params`` as a constant of its value; anything else as is."""
    if isinstance(x, Var) and x.name_hint in graph_params:
        value = graph_params[x.name_hint]
        return const(np.asarray(getattr(value, "numpy", lambda: value)()))
    return x


def set_span(sym: Any, span: Any) -> Any:
    """``sym`` unchanged: the Relax form the front end builds carries no source spans, so the
    span TVM 0.19 attached is dropped (a frontend's names stay in the variables)."""
    return sym


def autopad(
    data: Any,
    strides: Any,
    kernel_shape: Any,
    dilations: Any = (1, 1),
    pad_type: str = "constant",
    deconv: bool = False,
    mode: str = "SAME_UPPER",
    pad_value: float = 0.0,
) -> Any:
    """``data`` padded for a ``SAME`` convolution (ONNX's ``auto_pad``), on its spatial axes.

    Per axis the total padding is ``max(k - s, 0)`` when the size divides by the stride ``s``,
    else ``max(k - size % s, 0)`` (``k`` the dilated kernel); for a transposed convolution
    (``deconv``) it is ``kernel - 1 - that``. ``SAME_UPPER`` puts the odd unit after,
    ``SAME_LOWER`` before. TVM 0.19 computed this at run time; the front end's shapes are known
    here, so it is computed now (a symbolic spatial size is refused).
    """
    shape = infer_shape(data)
    spatial = shape[2:]
    if not all(isinstance(d, int) for d in spatial):
        raise ValueError(f"autopad needs known spatial sizes, got {list(spatial)}")
    pads = [(0, 0), (0, 0)]
    for size, stride, kernel, dilation in zip(
        spatial, strides, kernel_shape, dilations, strict=True
    ):
        dilated = (int(kernel) - 1) * int(dilation) + 1
        rest = size % int(stride)
        total = max(dilated - (int(stride) if rest == 0 else rest), 0)
        if deconv:
            total = int(kernel) - 1 - total
        before, after = total // 2, total - total // 2
        pads.append((after, before) if "LOWER" in mode else (before, after))
    return _op.nn.pad(data, pads, pad_value, pad_type)
