"""Relay passes that rewrite the Relay graph itself (``ChangeBatch``, ``SimplifyFCTranspose``)
and :func:`graph_pass`, which the other Relay-graph passes are built on (each in its module).

Each is a module pass with Relay's name and opt level. For every function of the module the front
end built (:mod:`..origin`), it rewrites the Relay function with a ``relay.ExprMutator`` and puts
its Relax form back (the module then reads back as the rewritten Relay function). A Relax
function with no Relay origin (one a Relax pass rewrote) is left as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay._impl.pass_infra import through_relay
from compile_engine_compat.relay._impl.passes import relay_pass
from compile_engine_compat.relay._impl.registry import RelayOp

from ..expr import Call, Expr, Var
from ..expr_functor import ExprMutator
from ..function import Function
from ..op.op import builder
from ..ty import TensorType

__all__ = [
    "GRAPH_REWRITE_KINDS",
    "ChangeBatch",
    "SimplifyFCTranspose",
    "graph_pass",
]

#: Relay pass -> "real: <what it rewrites on the Relay graph>".
GRAPH_REWRITE_KINDS: dict[str, str] = {
    "DivToMul": "real: a division by a float constant becomes a multiplication by its "
    "reciprocal, on the Relay graph",
    "SimplifyExpr": "real: TVM 0.19's rules on the Relay graph (simplify_expr.py): *_like ops "
    "made concrete, identities dropped, reshape/transpose/layout-transform chains merged, "
    "redundant casts and clips dropped, constant add/multiply chains folded (not its binomial "
    "factoring)",
    "FastMath": "real: on the Relay graph (fast_math.py), exp, erf, tanh and nn.softmax become "
    "fast_exp, fast_erf, fast_tanh and nn.fast_softmax, as TVM 0.19 did",
    "FoldConstant": "real: on the Relay graph (fold_constant.py), TVM 0.19's folding: calls of "
    "constants evaluated by the package's build, shape_of/ndarray_size of static shapes, lets "
    "of constants inlined, ifs on constants; dropout, device_copy and QNN ops (unless fold_qnn) "
    "kept",
    "DynamicToStatic": "real: on the Relay graph (dynamic_to_static.py), constants folded, then "
    "each dyn.* call whose shape-like inputs are constants becomes its static op, as TVM 0.19 "
    "did",
    "CanonicalizeCast": "real: on the Relay graph (canonicalize_cast.py), an up-cast shared by "
    "several elementwise or broadcast ops is copied for each, as TVM 0.19 did",
    "FoldExplicitPadding": "real: on the Relay graph (fold_explicit_padding.py), an nn.pad of "
    "the spatial axes folded into the padding of the convolution or pooling it feeds, as TVM "
    "0.19 did",
    "SimplifyInference": "real: on the Relay graph (simplify_inference.py), batch_norm becomes "
    "TVM 0.19's multiply-add and dropout its input (layer/group/instance norms stay ops)",
    "ChangeBatch": "real: each parameter of `data` gets `batch_size` on the axis `data` maps "
    "it to, on the Relay graph, and the ops' types follow",
    "SimplifyFCTranspose": "real: nn.dense(x, transpose(w, [1, 0])) becomes nn.dense(x, w.T) "
    "with a new parameter named w + '.T', on the Relay graph",
    "ToANormalForm": "real: on the Relay graph (normal_forms.py), every compound node bound by "
    "a let in the scope of its uses",
    "ToBasicBlockNormalForm": "real: on the Relay graph (normal_forms.py), the nodes used from "
    "several scopes (If branches, functions) bound by a let in their common scope",
    "ToGraphNormalForm": "real: on the Relay graph (normal_forms.py), every let dropped, its "
    "variable replaced by its value",
    "CombineParallelConv2D": "real: on the Relay graph (combine_parallel.py), parallel conv2d "
    "calls of one input become one on the concatenated weights, sliced back, as TVM 0.19 did",
    "CombineParallelDense": "real: on the Relay graph (combine_parallel.py), parallel dense "
    "calls of one input become one batch_matmul (to_batch) or one dense, as TVM 0.19 did",
    "CombineParallelBatchMatmul": "real: on the Relay graph (combine_parallel.py), parallel "
    "batch_matmul calls of one input become one, as TVM 0.19 did",
    "BatchingOps": "real: CombineParallelConv2D, CombineParallelDense and "
    "CombineParallelBatchMatmul in a Sequential, as TVM 0.19 (combine_parallel.py)",
    "Legalize": "real: on the Relay graph (legalize.py), each call of an op with an "
    "FTVMLegalize function becomes what it returns, as TVM 0.19 did; relay.build legalizes "
    "every op for TVM itself (relax.transform.LegalizeOps)",
    "ForwardFoldScaleAxis": "real: on the Relay graph (fold_scale_axis.py), a per-channel "
    "multiply before conv2d/conv3d/dense (through relu, add, subtract) moves into the weight, "
    "as TVM 0.19 did",
    "BackwardFoldScaleAxis": "real: on the Relay graph (fold_scale_axis.py), a per-channel "
    "multiply after conv2d/conv3d/dense (through relu, add, subtract, bias_add) moves into the "
    "weight, as TVM 0.19 did",
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
    "FuseOps": "real: on the Relay graph (fuse_ops.py), TVM 0.19's fusion: ops grouped by "
    "TOpPattern into Primitive functions called in place (anchors with their elementwise "
    "consumers, injective chains, reductions, tuples); relay.FuseOps.max_depth honoured",
    "DefuseOps": "real: on the Relay graph (fuse_ops.py), each call of a Primitive function "
    "replaced by the function's body",
    "FlexibleShapeDispatch": "real: on the Relay graph (flexible_shape.py), the chosen inputs "
    "take any size on the axis (relay.Any), TVM 0.19's fallback for every size; the buckets "
    "and padding only chose kernels and are not used",
}


def graph_pass(
    name: str,
    opt_level: int,
    rewrite: Callable[[Function], Function],
    relax_fallback: Any = None,
) -> Any:
    """A module pass applying ``rewrite`` to the Relay function behind each front-end function.

    Parameters
    ----------
    name : str
        Relay's pass name.
    opt_level : int
        Relay's opt level.
    rewrite : callable
        ``relay.Function -> relay.Function``; returning its argument means no change.
    relax_fallback : tvm.transform.Pass, optional
        Run instead on a module none of whose functions has a Relay graph (one a Relax pass
        rewrote).

    Returns
    -------
    tvm.transform.Pass
    """

    def run(mod: tvm.IRModule) -> tvm.IRModule:
        changed = {}
        graphs = {gvar: origin.relay_of(func) for gvar, func in mod.functions.items()}
        if relax_fallback is not None and all(g is None for g in graphs.values()):
            out: tvm.IRModule = relax_fallback(mod)
            return out
        for gvar, func in mod.functions.items():
            relay_func = graphs[gvar]
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


class _Substitute(ExprMutator):
    """Replaces variables by others (and keeps everything else)."""

    def __init__(self, mapping: Mapping[int, Var]) -> None:
        super().__init__(**INTERNAL)
        self.mapping = mapping

    def visit_var(self, var: Var) -> Var:
        return self.mapping.get(id(var), var)


def _change_batch(data: Mapping[Any, int], batch_size: int) -> Callable[[Function], Function]:
    def rewrite(func: Function) -> Function:
        axes = {(k if isinstance(k, str) else k.name_hint): int(v) for k, v in data.items()}
        mapping: dict[int, Var] = {}
        for param in func.params:
            ty = param.type_annotation
            if param.name_hint in axes and isinstance(ty, TensorType):
                shape = list(ty.shape)
                shape[axes[param.name_hint]] = batch_size
                mapping[id(param)] = Var(param.name_hint, TensorType(shape, ty.dtype))
        if not mapping:
            return func
        out: Function = _Substitute(mapping).visit(func)
        return Function(out.params, out.body, None, out.type_params, out.attrs)

    return rewrite


@legacy_api("relay.transform.more_passes")
def ChangeBatch(data: Mapping[Any, int], batch_size: int = 16) -> Any:
    """``relay.transform.ChangeBatch(data, batch_size=16)``: each parameter of ``data`` (a
    ``Var``, or its name) -> the axis holding its batch, which becomes ``batch_size`` long
    (opt level 1), as TVM 0.19's pass did."""
    if not isinstance(data, Mapping):
        raise TypeError(f"ChangeBatch(data) takes a dict of parameter -> batch axis, got {data!r}")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"ChangeBatch(batch_size={batch_size!r}): a positive int is needed")
    return graph_pass("ChangeBatch", 1, _change_batch(data, batch_size))


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


#: For the passes kept in modules of their own (``flatten_atrous_conv``, ...): the op name of
#: a call (None for anything else), and a rewrite applying a rule to each call after its args.
op_name = _op_name
rewrite_calls = _rewrite_with
__all__ += ["op_name", "rewrite_calls"]
