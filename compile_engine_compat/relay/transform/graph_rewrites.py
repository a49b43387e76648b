"""Relay passes that rewrite the Relay graph itself: ``DivToMul``, ``SimplifyExpr``,
``ChangeBatch``, ``SimplifyFCTranspose``, ``EliminateCommonSubexpr``.

Each is a module pass with Relay's name and opt level. For every function of the module the front
end built (:mod:`..origin`), it rewrites the Relay function with a ``relay.ExprMutator`` and puts
its Relax form back (the module then reads back as the rewritten Relay function). A Relax
function with no Relay origin (one a Relax pass rewrote) is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.pass_infra import through_relay
from compile_engine_compat.relay._impl.passes import relay_pass
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.structural import attr_value

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem, Var, const
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from ..ty import TensorType

__all__ = [
    "GRAPH_REWRITE_KINDS",
    "ChangeBatch",
    "DivToMul",
    "EliminateCommonSubexpr",
    "SimplifyExpr",
    "SimplifyFCTranspose",
    "graph_pass",
]

#: Relay pass -> "real: <what it rewrites on the Relay graph>".
GRAPH_REWRITE_KINDS: dict[str, str] = {
    "DivToMul": "real: a division by a float constant becomes a multiplication by its "
    "reciprocal, on the Relay graph",
    "SimplifyExpr": "real: on the Relay graph, consecutive reshapes become one, consecutive "
    "transposes one (none when they cancel), a cast to the same dtype, x + 0, x - 0, x * 1 and "
    "x / 1 are dropped (Relay's other rules, such as full-elementwise folding, are not applied)",
    "ChangeBatch": "real: the named parameters get the new batch size on the Relay graph, "
    "and the ops' types follow",
    "SimplifyFCTranspose": "real: nn.dense(x, transpose(w, [1, 0])) becomes nn.dense(x, w.T) "
    "with a new parameter named w + '.T', on the Relay graph",
    "ToANormalForm": "real: on the Relay graph (normal_forms.py), every compound node bound by "
    "a let in the scope of its uses",
    "ToBasicBlockNormalForm": "real: on the Relay graph (normal_forms.py), the nodes used from "
    "several scopes (If branches, functions) bound by a let in their common scope",
    "ToGraphNormalForm": "real: on the Relay graph (normal_forms.py), every let dropped, its "
    "variable replaced by its value",
    "EliminateCommonSubexpr": "real: on the Relay graph, a call of the same op with the same "
    "attributes and arguments as an earlier one, and a second TupleGetItem of one tuple and "
    "index, become the earlier node; fskip(call) keeps a call apart, as in Relay",
    "FlattenAtrousConv": "real: on the Relay graph (flatten_atrous_conv.py), space_to_batch_nd "
    "-> conv2d/qnn.conv2d (NHWC) -> batch_to_space_nd becomes one conv2d with dilation = "
    "block_shape and padding = paddings - crops",
    "SplitArgs": "real: on the Relay graph (split_args.py), a concatenate whose inputs need more "
    "kernel arguments than the limit becomes a chain of concatenates over stop_fusion",
    "AlterOpLayout": "real: on the Relay graph (alter_op_layout.py), each call of an op with an "
    "FTVMAlterOpLayout function becomes what it returns; a replacement of another type (a new "
    "layout) is refused, TVM 0.19's layout propagation is not served",
    "FlexibleShapeDispatch": "real: on the Relay graph (flexible_shape.py), the chosen inputs "
    "take any size on the axis (relay.Any), TVM 0.19's fallback for every size; the buckets "
    "and padding only chose kernels and are not used",
}


def graph_pass(name: str, opt_level: int, rewrite: Callable[[Function], Function]) -> Any:
    """A module pass applying ``rewrite`` to the Relay function behind each front-end function.

    Parameters
    ----------
    name : str
        Relay's pass name.
    opt_level : int
        Relay's opt level.
    rewrite : callable
        ``relay.Function -> relay.Function``; returning its argument means no change.

    Returns
    -------
    tvm.transform.Pass
    """

    def run(mod: tvm.IRModule) -> tvm.IRModule:
        changed = {}
        for gvar, func in mod.functions.items():
            relay_func = origin.relay_of(func)
            if relay_func is None:
                continue
            new = rewrite(relay_func)
            if new is not relay_func:
                changed[gvar] = through_relay(lambda f, m, c, new=new: new, func, mod, None)
        if not changed:
            return mod
        return tvm.IRModule({**dict(mod.functions.items()), **changed}, attrs=mod.attrs)

    return relay_pass(name, opt_level, run)


def _op_name(node: Any) -> str | None:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return None


def _constant_value(node: Expr) -> np.ndarray | None:
    return node.data.numpy() if isinstance(node, Constant) else None


class _Rewriter(ExprMutator):
    """An ExprMutator whose ``rule(call)`` rewrites each call after its arguments."""

    def __init__(self, rule: Callable[[Call], Expr]) -> None:
        super().__init__(**INTERNAL)
        self.rule = rule

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        return self.rule(new) if isinstance(new, Call) else new


def _rewrite_with(rule: Callable[[Call], Expr]) -> Callable[[Function], Function]:
    def rewrite(func: Function) -> Function:
        out: Function = _Rewriter(rule).visit(func)
        return out

    return rewrite


def _div_to_mul(call: Call) -> Expr:
    value = _constant_value(call.args[1]) if _op_name(call) == "divide" else None
    if value is None or value.dtype.kind != "f" or not np.all(value != 0):
        return call
    return builder("multiply")(call.args[0], const(np.reciprocal(value), str(value.dtype)))


@legacy_api("relay.transform.more_passes")
def DivToMul() -> Any:
    """``relay.transform.DivToMul()``: division by a float constant -> multiplication (opt
    level 0), on the Relay graph."""
    return graph_pass("DivToMul", 0, _rewrite_with(_div_to_mul))


def _is_identity_operand(node: Expr, identity: float) -> bool:
    """Whether ``node`` is a 0-d constant equal to ``identity`` (broadcasting a 0-d operand
    changes neither the other operand's shape nor, in a well-typed call, its dtype)."""
    value = _constant_value(node)
    return value is not None and value.ndim == 0 and bool(value == identity)


def _simplify(call: Call) -> Expr:
    name = _op_name(call)
    attrs: Any = call.attrs
    inner = call.args[0] if call.args else None
    if name == "reshape" and _op_name(inner) == "reshape":
        return builder("reshape")(inner.args[0], attrs.newshape)  # type: ignore[union-attr]
    if name == "transpose" and _op_name(inner) == "transpose" and attrs.axes is not None:
        first: Any = inner.attrs  # type: ignore[union-attr]
        if first.axes is not None:
            axes = [int(first.axes[int(a)]) for a in attrs.axes]
            if axes == list(range(len(axes))):
                return inner.args[0]  # type: ignore[union-attr]
            return builder("transpose")(inner.args[0], axes)  # type: ignore[union-attr]
    if name == "cast" and inner is not None and inner._checked_type is not None:
        if isinstance(inner._checked_type, TensorType) and inner._checked_type.dtype == attrs.dtype:
            return inner
    if name in ("add", "subtract") and _is_identity_operand(call.args[1], 0):
        return call.args[0]
    if name in ("multiply", "divide") and _is_identity_operand(call.args[1], 1):
        return call.args[0]
    if name in ("add", "multiply") and _is_identity_operand(
        call.args[0], 0 if name == "add" else 1
    ):
        return call.args[1]
    return call


@legacy_api("relay.transform.more_passes")
def SimplifyExpr(allow_rewrite_to_dynamic: bool = True) -> Any:
    """``relay.transform.SimplifyExpr()``: Relay's simplest rewrites (opt level 0), on the
    Relay graph (see :data:`GRAPH_REWRITE_KINDS`)."""
    return graph_pass("SimplifyExpr", 0, _rewrite_with(_simplify))


class _Substitute(ExprMutator):
    """Replaces variables by others (and keeps everything else)."""

    def __init__(self, mapping: Mapping[int, Var]) -> None:
        super().__init__(**INTERNAL)
        self.mapping = mapping

    def visit_var(self, var: Var) -> Var:
        return self.mapping.get(id(var), var)


def _change_batch(data: Mapping[Any, int], batch_dims: int) -> Callable[[Function], Function]:
    def rewrite(func: Function) -> Function:
        by_name = {(k if isinstance(k, str) else k.name_hint): int(v) for k, v in data.items()}
        mapping: dict[int, Var] = {}
        for param in func.params:
            ty = param.type_annotation
            if param.name_hint in by_name and isinstance(ty, TensorType):
                shape = list(ty.shape)
                shape[batch_dims] = by_name[param.name_hint]
                mapping[id(param)] = Var(param.name_hint, TensorType(shape, ty.dtype))
        if not mapping:
            return func
        out: Function = _Substitute(mapping).visit(func)
        return Function(out.params, out.body, None, out.type_params, out.attrs)

    return rewrite


@legacy_api("relay.transform.more_passes")
def ChangeBatch(data: Mapping[Any, int], batch_dims: int = 0) -> Any:
    """``relay.transform.ChangeBatch(data, batch_dims=0)``: the named parameters (a ``Var`` or
    a name -> the new batch size) get that size on axis ``batch_dims`` (opt level 1)."""
    if not isinstance(data, Mapping):
        raise TypeError(f"ChangeBatch(data) takes a dict of parameter -> batch size, got {data!r}")
    return graph_pass("ChangeBatch", 1, _change_batch(data, batch_dims))


def _fc_transpose(names: Sequence[str]) -> Callable[[Function], Function]:
    def rewrite(func: Function) -> Function:
        new_params: dict[str, Var] = {}

        def rule(call: Call) -> Expr:
            weight = call.args[1] if _op_name(call) == "nn.dense" else None
            if _op_name(weight) != "transpose":
                return call
            w = weight.args[0]  # type: ignore[union-attr]
            axes: Any = weight.attrs.axes  # type: ignore[union-attr]
            if not (isinstance(w, Var) and w.name_hint in names and axes is not None):
                return call
            if [int(a) for a in axes] != [1, 0] or not isinstance(w.type_annotation, TensorType):
                return call
            ty = w.type_annotation
            name = f"{w.name_hint}.T"
            new_w = new_params.setdefault(name, Var(name, TensorType(ty.shape[::-1], ty.dtype)))
            return builder("nn.dense")(call.args[0], new_w, units=call.attrs.units)  # type: ignore[union-attr]

        body = _Rewriter(rule).visit(func.body)
        if not new_params:
            return func
        kept = [p for p in func.params if p.name_hint not in names]
        return Function([*kept, *new_params.values()], body, None, func.type_params, func.attrs)

    return rewrite


@legacy_api("relay.transform.more_passes")
def SimplifyFCTranspose(target_weight_name: Sequence[str]) -> Any:
    """``relay.transform.SimplifyFCTranspose(names)``: ``nn.dense(x, transpose(w, [1, 0]))``
    becomes ``nn.dense(x, w.T)``, ``w.T`` a new parameter (opt level 0); bind it to
    ``w``'s transpose, as Relay's ``data_dep_optimization`` did."""
    return graph_pass("SimplifyFCTranspose", 0, _fc_transpose([str(n) for n in target_weight_name]))


def _attrs_key(attrs: Any) -> str:
    """A call's attributes as a comparable string (plain values; TVM objects by their print)."""
    if attrs is None or not hasattr(attrs, "keys"):
        return ""
    return repr([(str(k), attr_value(attrs[k])) for k in sorted(str(k) for k in attrs.keys())])


def _arg_key(arg: Expr) -> Any:
    """What makes two arguments the same for Relay's CSE: the same node, a scalar constant of
    the same dtype and value, or a tuple of such fields."""
    if isinstance(arg, Constant) and arg.data.numpy().ndim == 0:
        value = arg.data.numpy()
        return ("scalar", str(value.dtype), value.item())
    if isinstance(arg, Tuple):
        return ("tuple", tuple(map(_arg_key, arg.fields)))
    return id(arg)


class _CommonSubexpr(ExprMutator):
    """Relay's EliminateCommonSubexpr: after its arguments are rewritten, a call equal to an
    earlier one (op, attributes, the same argument nodes) is replaced by the earlier one."""

    def __init__(self, fskip: Callable[[Expr], bool] | None) -> None:
        super().__init__(**INTERNAL)
        self.fskip = fskip
        self.seen: dict[Any, Expr] = {}

    def visit_call(self, call: Call) -> Any:
        new = super().visit_call(call)
        if not isinstance(new, Call) or not isinstance(new.op, RelayOp):
            return new
        if self.fskip is not None and self.fskip(new):
            return new
        key = ("call", str(new.op.name), tuple(map(_arg_key, new.args)), _attrs_key(new.attrs))
        return self.seen.setdefault(key, new)

    def visit_tuple_getitem(self, op: TupleGetItem) -> Any:
        new = super().visit_tuple_getitem(op)
        if not isinstance(new, TupleGetItem):
            return new
        return self.seen.setdefault(("item", id(new.tuple_value), int(new.index)), new)


def _eliminate_common_subexpr(fskip: Callable[[Expr], bool] | None) -> Callable[..., Function]:
    def rewrite(func: Function) -> Function:
        out: Function = _CommonSubexpr(fskip).visit(func)
        return out

    return rewrite


@legacy_api("relay.transform")
def EliminateCommonSubexpr(fskip: Callable[[Expr], bool] | None = None) -> Any:
    """``relay.transform.EliminateCommonSubexpr(fskip=None)`` (opt level 3), on the Relay graph.

    A call of the same op, attributes and argument nodes as an earlier call becomes that call;
    so does a repeated ``TupleGetItem`` of one tuple and index. ``fskip(call)`` returning True
    keeps that call apart. Functions with no Relay graph (made by a Relax pass) are left as
    they are; run ``relax.transform.EliminateCommonSubexpr`` on those.
    """
    if fskip is not None and not callable(fskip):
        raise TypeError(f"EliminateCommonSubexpr(fskip) takes a callable or None, got {fskip!r}")
    return graph_pass("EliminateCommonSubexpr", 3, _eliminate_common_subexpr(fskip))


#: For the passes kept in modules of their own (``flatten_atrous_conv``, ...): the op name of
#: a call (None for anything else), and a rewrite applying a rule to each call after its args.
op_name = _op_name
rewrite_calls = _rewrite_with
__all__ += ["op_name", "rewrite_calls"]
