"""``ForwardFoldScaleAxis``, ``BackwardFoldScaleAxis`` and ``FoldScaleAxis`` on the Relay
graph, as TVM 0.19 folded scales into weights.

Forward: a ``multiply`` by a per-channel constant, followed (through ``relu``, ``add`` and
``subtract``) by a ``conv2d``/``conv3d``/``dense`` that reads those channels, is dropped; the
convolution's weight is multiplied instead, and the biases added on the way are divided by the
scale. Backward: a ``multiply`` of a convolution's (or dense's) output channels, through
``relu``, ``add``, ``subtract`` and ``bias_add``, moves into the weight and the biases. Each
direction first works out which values may carry a scale (the "messages", on whole axes, and
whether the scale must be positive to pass a ``relu``), then rewrites; a graph where no scale
can be folded is returned as it is. ``FoldScaleAxis`` is the two and ``FoldConstant``, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.layouts import axis_names
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer

from ..expr import Call, Constant, Expr, If, Let, Tuple, TupleGetItem
from ..expr_functor import ExprMutator, ExprVisitor
from ..function import Function
from ..op.op import builder
from .fold_constant import FoldConstant
from .graph_rewrites import graph_pass

__all__ = ["BackwardFoldScaleAxis", "FoldScaleAxis", "ForwardFoldScaleAxis"]


@dataclass(frozen=True)
class Message:
    """The axes a value may be scaled on, and whether the scale must be positive."""

    axes: tuple[int, ...]
    positive: bool


def _intersect(a: Message | None, b: Message | None) -> Message | None:
    if a is None or b is None:
        return None
    return Message(tuple(x for x in a.axes if x in b.axes), a.positive or b.positive)


def _name(node: Any) -> str:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return ""


def _shape(node: Expr) -> list[int]:
    ty: Any = node.checked_type
    return [int(d) for d in ty.shape]


def _index(layout: str, axis: str) -> int:
    axes = axis_names(layout)
    return axes.index(axis) if axis in axes else -1


def _match_broadcast(
    lhs_shape: Sequence[int], rhs_shape: Sequence[int], axes: Sequence[int], rhs: Expr | None
) -> tuple[bool, Expr | None]:
    """Relay's MatchBroadcastToLeftAxes: whether ``rhs`` broadcast onto ``lhs`` varies only
    along ``axes``; with ``rhs`` given, also ``rhs`` reduced to those axes (squeezed, or a
    scalar expanded and repeated)."""
    if len(lhs_shape) < len(rhs_shape):
        return False, rhs
    if not rhs_shape and rhs is not None and axes:
        rhs = builder("expand_dims")(rhs, 0, len(axes))
        for i in range(len(axes)):
            rhs = builder("repeat")(rhs, lhs_shape[axes[0]], i)
        return True, rhs
    base = len(lhs_shape) - len(rhs_shape)
    squeeze: list[int] = []
    j = 0
    for i, dim in enumerate(lhs_shape):
        if j < len(axes) and i == axes[j]:
            if i < base or dim != rhs_shape[i - base]:
                return False, rhs
            j += 1
        elif i >= base:
            if rhs_shape[i - base] != 1:
                return False, rhs
            squeeze.append(i - base)
    if rhs is not None and squeeze:
        rhs = builder("squeeze")(rhs, squeeze)
    return True, rhs


def _expand_to_axes(bias: Expr, ndim: int, axes: Sequence[int]) -> Expr:
    """Relay's ExpandBiasToMatchAxis: ``bias`` (one dimension per axis) given the dimensions
    between and after ``axes``."""
    for i in range(len(axes), 0, -1):
        if i == len(axes):
            count = ndim - axes[i - 1] - 1
        else:
            count = axes[i] - axes[i - 1]
        if count > 0:
            bias = builder("expand_dims")(bias, i, count)
    return bias


def _reshape_to_axes(scale: Expr, shape: Sequence[int], axes: Sequence[int]) -> Expr:
    return builder("reshape")(scale, [d if i in axes else 1 for i, d in enumerate(shape)])


def _reshape_or_expand(scale: Expr, shape: Sequence[int], axes: Sequence[int]) -> Expr:
    if len(axes) > 1:
        return _reshape_to_axes(scale, shape, axes)
    return _expand_to_axes(scale, len(shape), axes)


def _all_positive_constant(expr: Expr) -> bool:
    if isinstance(expr, Constant):
        value = expr.data.numpy()
        return value.dtype.kind in "fiu" and bool(np.all(value > 0))
    if _name(expr) in ("expand_dims", "reshape", "transpose", "squeeze", "repeat"):
        return _all_positive_constant(expr.args[0])  # type: ignore[attr-defined]
    return False


def _multiply(a: Expr, b: Expr) -> Expr:
    out: Expr = builder("multiply")(a, b)
    return out


def _remake(call: Call, args: list[Expr]) -> Call:
    return Call(call.op, args, call.attrs, call.type_args)


@dataclass(frozen=True)
class _ConvLayout:
    """What the folding reads of a convolution's layouts."""

    c_big: int
    c_small: int
    big_ki: int
    big_ko: int
    small_ki: int
    small_ko: int
    kernel_ndim: int
    depthwise: bool
    groups: int

    @classmethod
    def of(cls, call: Call, data_side: str) -> _ConvLayout:
        attrs: Any = call.attrs
        kernel = str(attrs.kernel_layout)
        data = str(attrs.data_layout)
        if data_side == "out" and str(attrs.out_layout):
            data = str(attrs.out_layout)
        wshape = _shape(call.args[1])
        big_ko, small_ko = _index(kernel, "O"), _index(kernel, "o")
        big_ki, small_ki = _index(kernel, "I"), _index(kernel, "i")
        o_total = wshape[big_ko] * (wshape[small_ko] if small_ko >= 0 else 1)
        i_total = wshape[big_ki] * (wshape[small_ki] if small_ki >= 0 else 1)
        groups = int(attrs.groups)
        return cls(
            _index(data, "C"),
            _index(data, "c"),
            big_ki,
            big_ko,
            small_ki,
            small_ko,
            len(axis_names(kernel)),
            o_total == groups and i_total == 1,
            groups,
        )

    def message(self) -> Message | None:
        """The axes a full or depthwise convolution can fold (Relay's Conv*Prep)."""
        if self.groups != 1 and not self.depthwise:
            return None
        simple = self.small_ko < 0 and self.small_ki < 0 and self.c_small < 0
        blocked = self.small_ko >= 0 and self.small_ki >= 0 and self.c_small >= 0
        if not (simple or blocked):
            return None
        return Message((self.c_big, *([self.c_small] if self.c_small >= 0 else [])), False)

    @property
    def simple(self) -> bool:
        return self.small_ko < 0 and self.small_ki < 0 and self.big_ki >= 0

    def weight_scale(self, scale: Expr, weight_shape: Sequence[int], output: bool) -> Expr:
        """``scale`` shaped for the weight: on its output channels (backward, depthwise) or
        its input channels (forward)."""
        big, small = (self.big_ko, self.small_ko) if output else (self.big_ki, self.small_ki)
        if self.simple:
            return _expand_to_axes(scale, self.kernel_ndim, [big])
        return _reshape_to_axes(scale, weight_shape, sorted([big, small]))


# -- forward ------------------------------------------------------------------------------------


def _relu_forward_prep(call: Call, out: Message | None) -> list[Message | None]:
    return [Message(out.axes, True) if out is not None else None]


def _add_forward_prep(call: Call, out: Message | None) -> list[Message | None]:
    lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
    if out is not None:
        if _match_broadcast(lhs, rhs, out.axes, None)[0]:
            return [out, None]
        if _match_broadcast(rhs, lhs, out.axes, None)[0]:
            return [None, out]
    return [None, None]


def _conv_forward_prep(call: Call, out: Message | None) -> list[Message | None]:
    return [_ConvLayout.of(call, "data").message(), None]


def _dense_forward_prep(call: Call, out: Message | None) -> list[Message | None]:
    return [Message((1,), False), None]


_FORWARD_PREP: dict[str, Callable[[Call, Message | None], list[Message | None]]] = {
    "nn.relu": _relu_forward_prep,
    "nn.leaky_relu": _relu_forward_prep,
    "add": _add_forward_prep,
    "subtract": _add_forward_prep,
    "nn.conv2d": _conv_forward_prep,
    "nn.conv3d": _conv_forward_prep,
    "nn.dense": _dense_forward_prep,
}


class _ForwardPrep(ExprVisitor):
    """Relay's ForwardPrep: the messages, sent backward from the consumers (post-order walk,
    then each node's step run in reverse)."""

    def __init__(self) -> None:
        super().__init__(**INTERNAL)
        self.steps: list[Callable[[], None]] = []
        self.messages: dict[Any, Message | None] = {}

    def prepare(self, func: Function) -> dict[Any, Message | None]:
        self.update(func, None)
        self.visit(func)
        for step in reversed(self.steps):
            step()
        return self.messages

    def update(self, node: Any, message: Message | None) -> None:
        if node in self.messages:
            self.messages[node] = _intersect(self.messages[node], message)
        else:
            self.messages[node] = message

    def _nothing_through(self, nodes: Sequence[Any]) -> None:
        def step() -> None:
            for node in nodes:
                self.update(node, None)

        self.steps.append(step)

    def visit_call(self, call: Call) -> None:
        super().visit_call(call)

        def step() -> None:
            prep = _FORWARD_PREP.get(_name(call))
            if prep is None:
                for arg in call.args:
                    self.update(arg, None)
                return
            for arg, message in zip(call.args, prep(call, self.messages.get(call))):
                self.update(arg, message)

        self.steps.append(step)

    def visit_function(self, fn: Function) -> None:
        super().visit_function(fn)
        self._nothing_through([fn.body])

    def visit_let(self, let: Let) -> None:
        super().visit_let(let)
        self._nothing_through([let.value, let.body])

    def visit_tuple(self, tup: Tuple) -> None:
        super().visit_tuple(tup)
        self._nothing_through(list(tup.fields))

    def visit_if(self, ite: If) -> None:
        super().visit_if(ite)
        self._nothing_through([ite.cond, ite.true_branch, ite.false_branch])


@dataclass
class _Scaled:
    """Relay's ScaledExpr: ``value`` whose ``axes`` are still to be multiplied by ``scale``."""

    value: Expr
    axes: tuple[int, ...]
    scale: Expr


def _relu_forward(call: Call, args: list[Any], message: Message | None) -> Any:
    data = args[0]
    if not isinstance(data, _Scaled):
        return None
    return _Scaled(_remake(call, [data.value]), data.axes, data.scale)


def _add_forward(call: Call, args: list[Any], message: Message | None) -> Any:
    lhs, rhs = args
    if isinstance(lhs, _Scaled) == isinstance(rhs, _Scaled):
        return None
    scaled, other = (lhs, rhs) if isinstance(lhs, _Scaled) else (rhs, lhs)
    shape = _shape(call.args[0] if scaled is lhs else call.args[1])
    scale = _reshape_or_expand(scaled.scale, shape, scaled.axes)
    divided = builder("divide")(other, scale)
    new_args = [scaled.value, divided] if scaled is lhs else [divided, scaled.value]
    return _Scaled(_remake(call, new_args), scaled.axes, scaled.scale)


def _multiply_forward(call: Call, args: list[Any], message: Message | None) -> Any:
    if message is None or not message.axes or any(isinstance(a, _Scaled) for a in args):
        return None
    lhs_shape, rhs_shape = _shape(call.args[0]), _shape(call.args[1])
    for value, factor, first, second in (
        (args[0], args[1], lhs_shape, rhs_shape),
        (args[1], args[0], rhs_shape, lhs_shape),
    ):
        matched, scale = _match_broadcast(first, second, message.axes, factor)
        if matched and scale is not None:
            if not message.positive or _all_positive_constant(scale):
                return _Scaled(value, message.axes, scale)
    return None


def _conv_forward(call: Call, args: list[Any], message: Message | None) -> Any:
    data, weight = args
    if not isinstance(data, _Scaled) or isinstance(weight, _Scaled):
        return None
    layout = _ConvLayout.of(call, "data")
    scale = layout.weight_scale(data.scale, _shape(call.args[1]), output=layout.depthwise)
    return _remake(call, [data.value, _multiply(weight, scale)])


def _dense_forward(call: Call, args: list[Any], message: Message | None) -> Any:
    data, weight = args
    if not isinstance(data, _Scaled) or isinstance(weight, _Scaled):
        return None
    return _remake(call, [data.value, _multiply(weight, data.scale)])


_FORWARD_REWRITE: dict[str, Callable[[Call, list[Any], Message | None], Any]] = {
    "nn.relu": _relu_forward,
    "nn.leaky_relu": _relu_forward,
    "add": _add_forward,
    "subtract": _add_forward,
    "multiply": _multiply_forward,
    "nn.conv2d": _conv_forward,
    "nn.conv3d": _conv_forward,
    "nn.dense": _dense_forward,
}


class _ForwardRewriter(ExprMutator):
    """Relay's ForwardRewrite with the forward rules: a call's rule sees its arguments with
    their outstanding scales; anything else sees them applied."""

    def __init__(self, messages: dict[Any, Message | None]) -> None:
        super().__init__(**INTERNAL)
        self.messages = messages
        self.realized: dict[int, Expr] = {}

    def visit(self, expr: Any) -> Any:
        return self._realize(super().visit(expr))

    def _realize(self, value: Any) -> Any:
        if not isinstance(value, _Scaled):
            return value
        done = self.realized.get(id(value))
        if done is None:
            shape = _shape(value.value)
            done = _multiply(value.value, _reshape_or_expand(value.scale, shape, value.axes))
            self.realized[id(value)] = done
        return done

    def visit_call(self, call: Call) -> Any:
        if not isinstance(call.op, RelayOp):
            return super().visit_call(call)
        args = [ExprMutator.visit(self, arg) for arg in call.args]
        rule = _FORWARD_REWRITE.get(_name(call))
        if rule is not None:
            result = rule(call, args, self.messages.get(call))
            if result is not None:
                return result
        args = [self._realize(arg) for arg in args]
        if all(a is b for a, b in zip(args, call.args)):
            return call
        return _remake(call, args)


def _forward_fold(func: Function) -> Function:
    infer(func)
    messages = _ForwardPrep().prepare(func)
    if all(m is None for m in messages.values()):
        return func
    out: Function = _ForwardRewriter(messages).visit(func)
    return out


# -- backward -----------------------------------------------------------------------------------


def _relu_backward_prep(call: Call, ins: list[Message | None]) -> Message | None:
    return Message(ins[0].axes, True) if ins[0] is not None else None


def _add_backward_prep(call: Call, ins: list[Message | None]) -> Message | None:
    lhs, rhs = _shape(call.args[0]), _shape(call.args[1])
    if ins[0] is not None and _match_broadcast(lhs, rhs, ins[0].axes, None)[0]:
        return ins[0]
    if ins[1] is not None and _match_broadcast(rhs, lhs, ins[1].axes, None)[0]:
        return ins[1]
    if ins[0] is not None and ins[1] is not None:
        if ins[0].axes == ins[1].axes and lhs == rhs:
            return ins[0]
    return None


def _conv_backward_prep(call: Call, ins: list[Message | None]) -> Message | None:
    return _ConvLayout.of(call, "out").message()


def _bias_add_backward_prep(call: Call, ins: list[Message | None]) -> Message | None:
    axis = int(call.attrs.axis)  # type: ignore[union-attr]
    if ins[0] is not None and len(ins[0].axes) == 1 and ins[0].axes[0] == axis:
        return ins[0]
    return None


def _dense_backward_prep(call: Call, ins: list[Message | None]) -> Message | None:
    return Message((1,), False)


_BACKWARD_PREP: dict[str, Callable[[Call, list[Message | None]], Message | None]] = {
    "nn.relu": _relu_backward_prep,
    "nn.leaky_relu": _relu_backward_prep,
    "add": _add_backward_prep,
    "subtract": _add_backward_prep,
    "nn.conv2d": _conv_backward_prep,
    "nn.conv3d": _conv_backward_prep,
    "nn.bias_add": _bias_add_backward_prep,
    "nn.dense": _dense_backward_prep,
}


def _reference_counts(func: Function) -> dict[Any, int]:
    """How many times each node is referred to (the function's body once)."""
    counts: dict[Any, int] = {}
    stack: list[Any] = [func]
    while stack:
        node = stack.pop()
        counts[node] = counts.get(node, 0) + 1
        if counts[node] > 1:
            continue
        if isinstance(node, Function):
            stack.extend([*node.params, node.body])
        elif isinstance(node, Call):
            stack.extend([node.op, *node.args])
        elif isinstance(node, Tuple):
            stack.extend(node.fields)
        elif isinstance(node, TupleGetItem):
            stack.append(node.tuple_value)
        elif isinstance(node, Let):
            stack.extend([node.var, node.value, node.body])
        elif isinstance(node, If):
            stack.extend([node.cond, node.true_branch, node.false_branch])
    return counts


class _BackwardPrep(ExprVisitor):
    """Relay's BackwardPrep: messages sent forward from the producers, through calls that only
    one node reads."""

    def __init__(self, counts: dict[Any, int]) -> None:
        super().__init__(**INTERNAL)
        self.counts = counts
        self.messages: dict[Any, Message] = {}

    def visit_call(self, call: Call) -> None:
        super().visit_call(call)
        prep = _BACKWARD_PREP.get(_name(call))
        if prep is None or self.counts.get(call) != 1:
            return
        message = prep(call, [self.messages.get(arg) for arg in call.args])
        if message is not None:
            self.messages[call] = message


class _BackwardTransformer(ExprMutator):
    """Relay's BackwardTransformer: each call through :meth:`transform`, with the scale it must
    absorb (none from the walk itself)."""

    def __init__(self, messages: dict[Any, Message]) -> None:
        super().__init__(**INTERNAL)
        self.messages = messages

    def visit_call(self, call: Call) -> Any:
        return self.transform(call, None, None)

    def normal(self, call: Call) -> Expr:
        out: Expr = super().visit_call(call)
        return out

    def transform(self, expr: Expr, message: Message | None, scale: Expr | None) -> Expr:
        if not isinstance(expr, Call):
            if message is not None:
                raise RuntimeError("relay.transform.BackwardFoldScaleAxis: outstanding scale")
            out: Expr = self.visit(expr)
            return out
        if message is None and expr in self.memo_map:
            done: Expr = self.memo_map[expr]
            return done
        rule = _BACKWARD_TRANSFORM.get(_name(expr))
        if rule is not None:
            new = rule(expr, message, scale, self)
        elif message is not None:
            raise RuntimeError("relay.transform.BackwardFoldScaleAxis: outstanding scale")
        else:
            new = self.normal(expr)
        self.memo_map[expr] = new
        return new


def _relu_backward(call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer) -> Expr:
    if msg is None:
        return t.normal(call)
    return _remake(call, [t.transform(call.args[0], msg, scale)])


def _add_backward(call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer) -> Expr:
    if msg is None:
        return t.normal(call)
    lhs_msg, rhs_msg = t.messages.get(call.args[0]), t.messages.get(call.args[1])
    if lhs_msg is not None and rhs_msg is not None:
        lhs = t.transform(call.args[0], msg, scale)
        return _remake(call, [lhs, t.transform(call.args[1], msg, scale)])
    if lhs_msg is None and rhs_msg is None:
        raise RuntimeError("relay.transform.BackwardFoldScaleAxis: outstanding scale")
    scaled = 0 if lhs_msg is not None else 1
    new_scaled = t.transform(call.args[scaled], msg, scale)
    other = t.transform(call.args[1 - scaled], None, None)
    other = _multiply(other, _reshape_or_expand(scale, _shape(call.args[scaled]), msg.axes))
    return _remake(call, [new_scaled, other] if scaled == 0 else [other, new_scaled])


def _multiply_backward(
    call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer
) -> Expr:
    lhs_shape, rhs_shape = _shape(call.args[0]), _shape(call.args[1])
    for i in (0, 1):
        arg_msg = t.messages.get(call.args[i])
        if arg_msg is None:
            continue
        shapes = (lhs_shape, rhs_shape) if i == 0 else (rhs_shape, lhs_shape)
        matched, factor = _match_broadcast(*shapes, arg_msg.axes, call.args[1 - i])
        if matched and factor is not None:
            if not arg_msg.positive or _all_positive_constant(factor):
                return t.transform(call.args[i], arg_msg, factor)
        break
    return t.normal(call)


def _conv_backward(call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer) -> Expr:
    if msg is None:
        return t.normal(call)
    data = t.transform(call.args[0], None, None)
    weight = t.transform(call.args[1], None, None)
    layout = _ConvLayout.of(call, "out")
    wscale = layout.weight_scale(scale, _shape(call.args[1]), output=True)
    return _remake(call, [data, _multiply(weight, wscale)])


def _bias_add_backward(
    call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer
) -> Expr:
    if msg is None:
        return t.normal(call)
    if t.messages.get(call.args[0]) is None:
        raise RuntimeError("relay.transform.BackwardFoldScaleAxis: outstanding scale")
    data = t.transform(call.args[0], msg, scale)
    bias = t.transform(call.args[1], None, None)
    return _remake(call, [data, _multiply(bias, scale)])


def _dense_backward(call: Call, msg: Message | None, scale: Any, t: _BackwardTransformer) -> Expr:
    if msg is None:
        return t.normal(call)
    data = t.transform(call.args[0], None, None)
    weight = t.transform(call.args[1], None, None)
    return _remake(call, [data, _multiply(weight, _expand_to_axes(scale, 2, [0]))])


_BACKWARD_TRANSFORM: dict[str, Callable[..., Expr]] = {
    "nn.relu": _relu_backward,
    "nn.leaky_relu": _relu_backward,
    "add": _add_backward,
    "subtract": _add_backward,
    "multiply": _multiply_backward,
    "nn.conv2d": _conv_backward,
    "nn.conv3d": _conv_backward,
    "nn.bias_add": _bias_add_backward,
    "nn.dense": _dense_backward,
}


def _backward_fold(func: Function) -> Function:
    infer(func)
    prep = _BackwardPrep(_reference_counts(func))
    prep.visit(func)
    if not prep.messages:
        return func
    out: Function = _BackwardTransformer(prep.messages).visit(func)
    return out


@legacy_api("relay.transform.more_passes")
def ForwardFoldScaleAxis() -> Any:
    """``relay.transform.ForwardFoldScaleAxis()`` (opt level 3), on the Relay graph: a
    per-channel ``multiply`` before a convolution or dense moves into its weight."""
    return graph_pass("ForwardFoldScaleAxis", 3, _forward_fold)


@legacy_api("relay.transform.more_passes")
def BackwardFoldScaleAxis() -> Any:
    """``relay.transform.BackwardFoldScaleAxis()`` (opt level 3), on the Relay graph: a
    per-channel ``multiply`` after a convolution or dense moves into its weight."""
    return graph_pass("BackwardFoldScaleAxis", 3, _backward_fold)


@legacy_api("relay.transform")
def FoldScaleAxis() -> Any:
    """``relay.transform.FoldScaleAxis()``: ``BackwardFoldScaleAxis``, ``ForwardFoldScaleAxis``
    and ``FoldConstant``, in a ``Sequential`` named ``FoldScaleAxis`` (as TVM 0.19)."""
    passes = [BackwardFoldScaleAxis(), ForwardFoldScaleAxis(), FoldConstant()]
    return tvm.transform.Sequential(passes, opt_level=0, name="FoldScaleAxis")
