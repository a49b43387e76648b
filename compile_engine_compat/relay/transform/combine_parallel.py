"""``CombineParallelConv2D``, ``CombineParallelDense``, ``CombineParallelBatchMatmul`` on the
Relay graph, as TVM 0.19 combined them.

Calls of one op that read the same input (``conv2d``, ``dense``, ``batch_matmul``) are grouped
when their attributes and weight shapes allow, each group of at least ``min_num_branches``
becomes one call, and the element-wise and broadcasting calls that follow each branch alike are
combined too (their other arguments concatenated or stacked). Each branch's result is then cut
back out of the combined one: a ``strided_slice`` in ``"size"`` mode, or for ``dense`` combined
into a ``batch_matmul``, one output of a ``split`` squeezed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm

from compile_engine_compat.deprecations import INTERNAL, legacy_api
from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.structural import attr_value
from compile_engine_compat.relay._impl.to_relax import infer

from ..dataflow_pattern.op_kinds import BROADCAST, op_pattern
from ..expr import Call, Expr, Tuple
from ..expr_functor import ExprMutator, ExprVisitor
from ..function import Function
from ..op.op import builder
from .graph_rewrites import graph_pass

__all__ = [
    "BatchingOps",
    "CombineParallelBatchMatmul",
    "CombineParallelConv2D",
    "CombineParallelDense",
]

#: A branch: the combined op's call, then the element-wise calls that follow it one by one.
Branch = list[Call]


def _op_name(node: Any) -> str | None:
    if isinstance(node, Call) and isinstance(node.op, RelayOp):
        return str(node.op.name)
    return None


def _attrs_equal(a: Any, b: Any) -> bool:
    keys_a = sorted(str(k) for k in a.keys()) if a is not None else []
    keys_b = sorted(str(k) for k in b.keys()) if b is not None else []
    return keys_a == keys_b and all(attr_value(a[k]) == attr_value(b[k]) for k in keys_a)


def _shape(node: Expr) -> list[int]:
    ty: Any = node.checked_type
    return [int(d) for d in ty.shape]


def _dtype(node: Expr) -> str:
    ty: Any = node.checked_type
    return str(ty.dtype)


class _Children(ExprVisitor):
    """Relay's BranchGroupFinder walk: the calls that read each node, the inputs of the op."""

    def __init__(self, op_name: str, supported: Callable[[Call], bool]) -> None:
        super().__init__(**INTERNAL)
        self.op_name = op_name
        self.supported = supported
        self.children: dict[Expr, list[Call]] = {}
        self.roots: dict[Expr, None] = {}

    def visit_call(self, call: Call) -> None:
        super().visit_call(call)
        if _op_name(call) == self.op_name and self.supported(call):
            self.roots.setdefault(call.args[0])
            self.children.setdefault(call.args[0], []).append(call)
        else:
            for arg in call.args:
                self.children.setdefault(arg, []).append(call)


class _Substitute(ExprMutator):
    """Relay's ExprSubst: each node in ``mapping`` becomes its (itself rewritten) substitute."""

    def __init__(self, mapping: dict[Expr, Expr]) -> None:
        super().__init__(**INTERNAL)
        self.mapping = mapping

    def visit(self, expr: Any) -> Any:
        return super().visit(self.mapping.get(expr, expr))


class _Combiner:
    """Relay's ParallelOpCombiner; subclasses say what may combine and how."""

    op_name = ""

    def __init__(self, min_num_branches: int) -> None:
        self.min_num_branches = min_num_branches
        self.subst: dict[Expr, Expr] = {}

    def supported(self, call: Call) -> bool:
        return True

    def compatible(self, a: Call, b: Call) -> bool:
        raise NotImplementedError

    def combined_op(self, branches: list[Branch]) -> Expr:
        raise NotImplementedError

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        raise NotImplementedError

    def combined_follower(
        self, data: Expr, branches: list[Branch], depth: int, parent: int
    ) -> Expr:
        """The call at ``depth`` of every branch as one call on the combined ``data``: its
        ``parent`` argument is ``data``, each other argument is :meth:`combined_arg`."""
        call = branches[0][depth]
        args = [
            data if i == parent else self.combined_arg(branches, depth, i, parent)
            for i in range(len(call.args))
        ]
        return Call(call.op, args, call.attrs)

    def combined_arg(self, branches: list[Branch], depth: int, index: int, parent: int) -> Expr:
        """Argument ``index`` of every branch's call at ``depth``, combined into one."""
        raise NotImplementedError

    def update_outputs(self, data: Expr, branches: list[Branch], depth: int) -> None:
        raise NotImplementedError

    def combine(self, func: Function) -> Function:
        infer(func)
        finder = _Children(self.op_name, self.supported)
        finder.visit(func)
        groups: list[list[Branch]] = []
        for root in finder.roots:
            first = len(groups)
            for child in finder.children[root]:
                if _op_name(child) != self.op_name:
                    continue
                branch = self._branch(child, finder.children)
                group = next((g for g in groups[first:] if self.compatible(child, g[0][0])), None)
                if group is None:
                    groups.append([branch])
                else:
                    group.append(branch)
        for group in groups:
            if len(group) >= self.min_num_branches:
                self._combine_branches(group)
        if not self.subst:
            return func
        out: Function = _Substitute(self.subst).visit(func)
        return out

    @staticmethod
    def _branch(call: Call, children: dict[Expr, list[Call]]) -> Branch:
        branch = [call]
        readers = children.get(call)
        while readers is not None and len(readers) == 1:
            follower = readers[0]
            if not isinstance(follower.op, RelayOp) or op_pattern(follower.op) > BROADCAST:
                break
            branch.append(follower)
            readers = children.get(follower)
        return branch

    def _combine_branches(self, branches: list[Branch]) -> None:
        combined = self.combined_op(branches)
        depth = min(len(b) for b in branches)
        level = 1
        while level < depth:
            call, previous = branches[0][level], branches[0][level - 1]
            parent = next(i for i, arg in enumerate(call.args) if arg is previous)
            if not self._check_level(branches, level, parent):
                break
            combined = self.combined_follower(combined, branches, level, parent)
            level += 1
        self.update_outputs(combined, branches, level - 1)

    def _check_level(self, branches: list[Branch], depth: int, parent: int) -> bool:
        call = branches[0][depth]
        for branch in branches[1:]:
            other = branch[depth]
            if other.op is not call.op or not _attrs_equal(other.attrs, call.attrs):
                return False
            if len(other.args) != len(call.args) or other.args[parent] is not branch[depth - 1]:
                return False
            for i in range(len(call.args)):
                if i != parent and not self.arg_compatible(call, other, i):
                    return False
        return True


def _slice(data: Expr, begin: list[int], end: list[int]) -> Expr:
    strides = [1] * len(begin)
    return builder("strided_slice")(data, begin, end, strides=strides, slice_mode="size")


def _concatenate(fields: list[Expr], axis: int) -> Expr:
    return builder("concatenate")(Tuple(fields), axis)


class _Conv2D(_Combiner):
    """Relay's ParallelConv2DCombiner: the weights concatenated on their ``O`` axis."""

    op_name = "nn.conv2d"
    channel_pos = 0

    def supported(self, call: Call) -> bool:
        return int(call.attrs.groups) == 1  # type: ignore[union-attr]

    @staticmethod
    def _channels(call: Call) -> int:
        return _shape(call.args[1])[str(call.attrs.kernel_layout).find("O")]  # type: ignore[union-attr]

    def compatible(self, a: Call, b: Call) -> bool:
        same = ["strides", "padding", "dilation", "groups", "data_layout", "kernel_layout"]
        same += ["out_dtype", "out_layout"]
        if any(attr_value(a.attrs[k]) != attr_value(b.attrs[k]) for k in same):  # type: ignore[index]
            return False
        layout = str(a.attrs.kernel_layout)  # type: ignore[union-attr]
        hw = [layout.find("H"), layout.find("W")]
        shape_a, shape_b = _shape(a.args[1]), _shape(b.args[1])
        return all(shape_a[i] == shape_b[i] for i in hw)

    def combined_op(self, branches: list[Branch]) -> Expr:
        root = branches[0][0]
        attrs: Any = root.attrs
        weights = [branch[0].args[1] for branch in branches]
        channels = sum(self._channels(branch[0]) for branch in branches)
        layout = str(attrs.out_layout) or str(attrs.data_layout)
        self.channel_pos = layout.find("C")
        kept = {str(k): attrs[k] for k in attrs.keys() if str(k) != "channels"}
        weight = _concatenate(weights, str(attrs.kernel_layout).find("O"))
        out: Expr = builder("nn.conv2d")(root.args[0], weight, **kept, channels=channels)
        return out

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        ta, tb = a.args[index], b.args[index]
        if _dtype(ta) != _dtype(tb) or len(_shape(ta)) != len(_shape(tb)):
            return False
        out_a, out_b = _shape(a), _shape(b)
        pos = self.channel_pos - len(out_a) + len(_shape(ta))
        if pos < 0 or _shape(ta)[pos] != out_a[self.channel_pos]:
            return False
        if _shape(tb)[pos] != out_b[self.channel_pos]:
            return False
        return all(x == y for i, (x, y) in enumerate(zip(_shape(ta), _shape(tb))) if i != pos)

    def combined_arg(self, branches: list[Branch], depth: int, index: int, parent: int) -> Expr:
        call = branches[0][depth]
        pos = self.channel_pos - len(_shape(call)) + len(_shape(call.args[index]))
        return _concatenate([branch[depth].args[index] for branch in branches], pos)

    def update_outputs(self, data: Expr, branches: list[Branch], depth: int) -> None:
        index = 0
        for branch in branches:
            channels = self._channels(branch[0])
            begin = [0] * self.channel_pos + [index]
            end = [-1] * self.channel_pos + [channels]
            index += channels
            self.subst[branch[depth]] = _slice(data, begin, end)


class _DenseToBatch(_Combiner):
    """Relay's ParallelDenseToBatchCombiner: stacked inputs and weights, one batch_matmul."""

    op_name = "nn.dense"

    def compatible(self, a: Call, b: Call) -> bool:
        same_dtype = attr_value(a.attrs.out_dtype) == attr_value(b.attrs.out_dtype)  # type: ignore[union-attr]
        return same_dtype and _shape(a.args[1])[:2] == _shape(b.args[1])[:2]

    def combined_op(self, branches: list[Branch]) -> Expr:
        stack = builder("stack")
        x = stack([branch[0].args[0] for branch in branches], 0)
        w = stack([branch[0].args[1] for branch in branches], 0)
        out: Expr = builder("nn.batch_matmul")(x, w)
        return out

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        ta, tb = a.args[index], b.args[index]
        return _dtype(ta) == _dtype(tb) and _shape(ta) == _shape(tb)

    def combined_arg(self, branches: list[Branch], depth: int, index: int, parent: int) -> Expr:
        fields = [branch[depth].args[index] for branch in branches]
        fields = [builder("expand_dims")(f, 0, 1) if len(_shape(f)) == 1 else f for f in fields]
        out: Expr = builder("stack")(fields, 0)
        return out

    def update_outputs(self, data: Expr, branches: list[Branch], depth: int) -> None:
        parts = builder("split")(data, len(branches), 0)
        for index, branch in enumerate(branches):
            self.subst[branch[depth]] = builder("squeeze")(parts[index], [0])


class _DenseToDense(_Combiner):
    """Relay's ParallelDenseToDenseCombiner: weights concatenated, one dense of every unit."""

    op_name = "nn.dense"

    def compatible(self, a: Call, b: Call) -> bool:
        same_dtype = attr_value(a.attrs.out_dtype) == attr_value(b.attrs.out_dtype)  # type: ignore[union-attr]
        return same_dtype and _shape(a.args[1])[1] == _shape(b.args[1])[1]

    def combined_op(self, branches: list[Branch]) -> Expr:
        root = branches[0][0]
        weights = [branch[0].args[1] for branch in branches]
        units = sum(_shape(w)[0] for w in weights)
        out_dtype = root.attrs.out_dtype  # type: ignore[union-attr]
        out: Expr = builder("nn.dense")(
            root.args[0], _concatenate(weights, 0), units=units, out_dtype=out_dtype
        )
        return out

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        sa, sb = _shape(a.args[index]), _shape(b.args[index])
        if _dtype(a.args[index]) != _dtype(b.args[index]) or len(sa) != len(sb):
            return False
        if len(_shape(a)) < len(sa) or len(_shape(b)) < len(sb):
            return False
        return sa[:-1] == sb[:-1]

    def combined_arg(self, branches: list[Branch], depth: int, index: int, parent: int) -> Expr:
        ndim = len(_shape(branches[0][depth].args[index]))
        axis = max(ndim - 1, 0)
        fields = []
        for branch in branches:
            out_dim = _shape(branch[depth].args[parent])[-1]
            arg = branch[depth].args[index]
            repeat = ndim == 0 or (out_dim > 1 and _shape(arg)[-1] == 1)
            if ndim == 0:
                arg = builder("expand_dims")(arg, -1, 1)
            if repeat:
                arg = builder("repeat")(arg, out_dim, axis)
            fields.append(arg)
        return _concatenate(fields, axis)

    def update_outputs(self, data: Expr, branches: list[Branch], depth: int) -> None:
        index = 0
        for branch in branches:
            out_shape = _shape(branch[depth])
            units = _shape(branch[0])[1]
            axis = max(i for i, d in enumerate(out_shape) if d == units)
            begin, end = [0] * len(out_shape), [-1] * len(out_shape)
            begin[axis], end[axis] = index, units
            index += units
            self.subst[branch[depth]] = _slice(data, begin, end)


class _BatchMatmul(_Combiner):
    """Relay's ParallelBatchMatmulCombiner: the weights concatenated on axis 1."""

    op_name = "nn.batch_matmul"

    def compatible(self, a: Call, b: Call) -> bool:
        attrs_a, attrs_b = a.attrs, b.attrs
        layouts = [bool(attrs_a.transpose_a), bool(attrs_a.transpose_b)]  # type: ignore[union-attr]
        layouts += [bool(attrs_b.transpose_a), bool(attrs_b.transpose_b)]  # type: ignore[union-attr]
        if layouts != [False, True, False, True]:
            return False
        wa, wb = a.args[1], b.args[1]
        return (
            _dtype(wa) == _dtype(wb)
            and _dtype(a) == _dtype(b)
            and len(_shape(wa)) == len(_shape(wb)) == 3
            and _shape(wa)[0] == _shape(wb)[0]
            and attr_value(attrs_a.out_dtype) == attr_value(attrs_b.out_dtype)  # type: ignore[union-attr]
        )

    def combined_op(self, branches: list[Branch]) -> Expr:
        attrs: Any = branches[0][0].attrs
        weight = _concatenate([branch[0].args[1] for branch in branches], 1)
        out: Expr = builder("nn.batch_matmul")(
            branches[0][0].args[0],
            weight,
            out_dtype=attrs.out_dtype,
            transpose_a=attrs.transpose_a,
            transpose_b=attrs.transpose_b,
        )
        return out

    def arg_compatible(self, a: Call, b: Call, index: int) -> bool:
        return True

    def combined_arg(self, branches: list[Branch], depth: int, index: int, parent: int) -> Expr:
        return _concatenate([branch[depth].args[index] for branch in branches], -1)

    def update_outputs(self, data: Expr, branches: list[Branch], depth: int) -> None:
        index = 0
        for branch in branches:
            features = _shape(branch[0].args[1])[1]
            self.subst[branch[depth]] = _slice(data, [0, 0, index], [-1, -1, features])
            index += features


def _combining(combiner: Callable[[], _Combiner]) -> Callable[[Function], Function]:
    return lambda func: combiner().combine(func)


def _check_branches(pass_name: str, min_num_branches: int) -> int:
    if isinstance(min_num_branches, bool) or not isinstance(min_num_branches, int):
        raise TypeError(f"{pass_name}(min_num_branches) takes an int, got {min_num_branches!r}")
    return min_num_branches


@legacy_api("relay.transform.more_passes")
def CombineParallelConv2D(min_num_branches: int = 3) -> Any:
    """``relay.transform.CombineParallelConv2D(min_num_branches=3)`` (opt level 4), on the
    Relay graph: parallel ``nn.conv2d`` calls of one input (groups 1, same attributes and
    kernel size) become one convolution on the concatenated weights."""
    n = _check_branches("CombineParallelConv2D", min_num_branches)
    return graph_pass("CombineParallelConv2d", 4, _combining(lambda: _Conv2D(n)))


@legacy_api("relay.transform.more_passes")
def CombineParallelDense(min_num_branches: int = 3, to_batch: bool = True) -> Any:
    """``relay.transform.CombineParallelDense(min_num_branches=3, to_batch=True)`` (opt level
    4), on the Relay graph: parallel ``nn.dense`` calls of one input become one
    ``nn.batch_matmul`` of the stacked weights (``to_batch``, same weight shapes), or one
    ``nn.dense`` of the concatenated weights."""
    n = _check_branches("CombineParallelDense", min_num_branches)
    combiner = _DenseToBatch if to_batch else _DenseToDense
    return graph_pass("CombineParallelDense", 4, _combining(lambda: combiner(n)))


@legacy_api("relay.transform.more_passes")
def CombineParallelBatchMatmul(min_num_branches: int = 3) -> Any:
    """``relay.transform.CombineParallelBatchMatmul(min_num_branches=3)`` (opt level 4), on the
    Relay graph: parallel ``nn.batch_matmul`` calls of one input become one on the weights
    concatenated along axis 1."""
    n = _check_branches("CombineParallelBatchMatmul", min_num_branches)
    return graph_pass("CombineParallelBatchMatmul", 4, _combining(lambda: _BatchMatmul(n)))


@legacy_api("relay.transform.more_passes")
def BatchingOps() -> Any:
    """``relay.transform.BatchingOps()``: ``CombineParallelConv2D``, ``CombineParallelDense``
    and ``CombineParallelBatchMatmul`` (their defaults) in a ``Sequential``, as TVM 0.19."""
    passes = [CombineParallelConv2D(), CombineParallelDense(), CombineParallelBatchMatmul()]
    return tvm.transform.Sequential(passes)
