"""AutoTVM's tasks of a module as TVM 0.19 extracted them: one per distinct template workload.

TVM 0.19's ``autotvm.task.extract_from_program`` lowered the module and recorded each call of a
TOPI template (``register_topi_compute``) that the op strategy of a tunable op (``nn.conv2d``,
``nn.dense``, ...) made, by template name and arguments: equal convolutions gave one task
whatever they were fused with, and an op with two templates (x86 ``dense_nopack``/``dense_pack``)
gave two tasks. This module reads the same workloads off the module's ops, without building:
each :class:`AnchorWorkload` is one (template, arguments) pair of a tunable op call, named as TVM
0.19's ``llvm`` (x86) or ``cuda`` strategy named it. Tuning one then tunes the kernels of the
shim's build that compute that op (:meth:`AnchorWorkload.matches`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import relax

__all__ = ["TUNABLE_OPS", "AnchorWorkload", "anchor_workloads"]

#: Relax op of the shim's Relay front end -> the Relay op whose AutoTVM templates it has.
TUNABLE_OPS = {
    "relax.nn.conv2d": "nn.conv2d",
    "relax.nn.conv3d": "nn.conv3d",
    "relax.nn.conv2d_transpose": "nn.conv2d_transpose",
    "relax.matmul": "nn.dense",  # nn.batch_matmul or nn.matmul by its operands (_matmul_op)
}

Shape = tuple[int, ...]
Args = tuple[Any, ...]


@dataclass(frozen=True)
class AnchorWorkload:
    """One AutoTVM template workload of a module: what TVM 0.19 made one task of.

    Attributes
    ----------
    op : str
        The Relay op (``nn.conv2d``); ``extract_from_program(ops=...)`` filters by it.
    name : str
        The template TVM 0.19 traced (``conv2d_NCHWc.x86``, ``dense_pack.x86``).
    args : tuple
        The template's arguments as TVM 0.19 serialized them: ``("TENSOR", shape, dtype)`` per
        tensor, then the attributes (strides, padding, dilation, layouts, out_dtype).
    operands : tuple of tuple of int
        The op's data and weight shapes and its output shape, as the module calls it (what
        :meth:`matches` looks for in a built kernel).
    extents : tuple of int
        The loop extents of the computation (output dimensions, then the reduction's).
    flop : float
        Floating-point operations of one call.
    calls : int
        How many calls of the module compute it.
    """

    op: str
    name: str
    args: tuple[Any, ...]
    operands: tuple[Shape, Shape, Shape]
    extents: Shape
    flop: float
    calls: int = 1

    def matches(self, buffer_shapes: list[Shape]) -> bool:
        """Whether a kernel of these buffer shapes (inputs, then its output) computes this op.

        Each shape is compared up to the order of its dimensions: the shim's build may give the
        kernel another layout (NHWC data, OHWI weights) than the Relay op had.
        """
        if len(buffer_shapes) < 3:
            return False
        data, weight, out = (sorted(shape) for shape in self.operands)
        inputs = [sorted(shape) for shape in buffer_shapes[:-1]]
        return sorted(buffer_shapes[-1]) == out and data in inputs and weight in inputs


def anchor_workloads(mod: Any, target: tvm.target.Target) -> list[AnchorWorkload]:
    """The distinct template workloads of the tunable op calls of every Relax function of ``mod``.

    Parameters
    ----------
    mod : tvm.IRModule or relax.Function
        The module (the shim's Relay front end emits Relax).
    target : tvm.target.Target
        Names the templates: ``cuda`` (and other GPU kinds) TVM 0.19's CUDA ones, any other
        kind its x86 ones.

    Calls of dynamic shapes are left out (TVM 0.19 extracted no task of them); equal workloads
    appear once, in the order of their first call, with their calls counted.
    """
    functions = [mod] if isinstance(mod, relax.Function) else [
        func for func in mod.functions.values() if isinstance(func, relax.Function)
    ]  # fmt: skip
    gpu = "gpu" in target.keys
    found: dict[tuple[str, tuple[Any, ...]], AnchorWorkload] = {}
    for func in functions:
        for workload in _workloads(func, gpu):
            key = (workload.name, workload.args)
            seen = found.get(key)
            found[key] = workload if seen is None else _counted(seen)
    return list(found.values())


def _counted(workload: AnchorWorkload) -> AnchorWorkload:
    return AnchorWorkload(workload.op, workload.name, workload.args, workload.operands,
                          workload.extents, workload.flop, workload.calls + 1)  # fmt: skip


def _workloads(func: relax.Function, gpu: bool) -> Iterator[AnchorWorkload]:
    values = relax.analysis.get_var2val(func)
    calls: list[relax.Call] = []

    def visit(node: Any) -> None:
        if isinstance(node, relax.Call) and getattr(node.op, "name", None) in TUNABLE_OPS:
            calls.append(node)

    relax.analysis.post_order_visit(func.body, visit)
    for call in calls:
        typed = [_tensor(arg) for arg in call.args[:2]] + [_tensor(call)]
        if any(t is None for t in typed):
            continue  # a dynamic shape: no task, as in TVM 0.19
        (data, dtype), (weight, wdtype), (out, out_dtype) = typed  # type: ignore[misc]
        op = call.op.name
        if op == "relax.matmul":
            yield from _matmul(call, values, data, weight, out, dtype, wdtype, out_dtype, gpu)
        else:
            yield from _convolution(op, call.attrs, data, weight, out, dtype, wdtype, out_dtype,
                                    gpu)  # fmt: skip


def _tensor(expr: Any) -> tuple[Shape, str] | None:
    info = getattr(expr, "ty", None)
    if not isinstance(info, relax.TensorType) or info.shape is None:
        return None
    try:
        dims = tuple(int(d) for d in info.shape.values)
    except (TypeError, AttributeError):
        return None
    return dims, str(info.dtype)


def _tensor_arg(shape: Shape, dtype: str) -> tuple[str, Shape, str]:
    return ("TENSOR", shape, dtype)


def _ints(values: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _convolution(op: str, attrs: Any, data: Shape, weight: Shape, out: Shape, dtype: str,
                 wdtype: str, out_dtype: str, gpu: bool) -> Iterator[AnchorWorkload]:  # fmt: skip
    relay_op = TUNABLE_OPS[op]
    layout, groups = str(attrs.data_layout), int(attrs.groups)
    strides, padding, dilation = _ints(attrs.strides), _ints(attrs.padding), _ints(attrs.dilation)
    channel = layout.index("C")
    per_group = data[channel] // max(groups, 1)
    window = tuple(weight[str(attrs.kernel_layout).index(a)] for a in _spatial(layout))
    extents = (*out, per_group, *window)
    flop = 2.0 * math.prod(out) * per_group * math.prod(window)
    operands = (data, weight, out)
    tensors = (_tensor_arg(data, dtype), _tensor_arg(weight, wdtype))
    if relay_op == "nn.conv2d_transpose":
        template = _transpose_template(attrs, data, weight, dtype, wdtype, out_dtype, gpu)
        if template is not None:
            name, args = template
            yield AnchorWorkload(relay_op, name, args, operands, extents, flop)
        return
    names = _conv_templates(relay_op, layout, groups, data, weight, dilation, dtype, gpu)
    for name in names:
        if name.startswith("group_"):
            args = (*tensors, strides, padding, dilation, groups, out_dtype)
        elif name.endswith("NCHWc.x86") or name.endswith("NCHWc_int8.x86"):
            args = (*tensors, strides, padding, dilation, layout, layout, out_dtype)
        else:
            args = (*tensors, strides, padding, dilation, out_dtype)
        yield AnchorWorkload(relay_op, name, args, operands, extents, flop)


def _spatial(layout: str) -> str:
    return "".join(axis for axis in layout if axis in "DHW")


def _conv_templates(relay_op: str, layout: str, groups: int, data: Shape, weight: Shape,
                    dilation: Shape, dtype: str, gpu: bool) -> list[str]:  # fmt: skip
    """The AutoTVM templates TVM 0.19's strategy called for a convolution (none: no task)."""
    if relay_op == "nn.conv3d":
        if groups != 1:
            return []
        suffix = "cuda" if gpu else "x86"
        return {"NCDHW": [f"conv3d_ncdhw.{suffix}"], "NDHWC": [f"conv3d_ndhwc.{suffix}"]}.get(
            layout, []
        )
    if layout != "NCHW":
        return []  # NHWC convolutions had no AutoTVM template on x86 (TOPI's generic compute)
    depthwise = groups > 1 and groups == data[1] and weight[1] == 1
    if gpu:
        if groups == 1:
            return ["conv2d_nchw.cuda"]
        return ["depthwise_conv2d_nchw.cuda"] if depthwise else ["group_conv2d_nchw.cuda"]
    if groups == 1:
        return ["conv2d_NCHWc_int8.x86" if dtype in ("int8", "uint8") else "conv2d_NCHWc.x86"]
    if depthwise:
        return ["depthwise_conv2d_NCHWc.x86"] if max(dilation) == 1 else []
    return ["group_conv2d_nchw.x86"]


def _transpose_template(attrs: Any, data: Shape, weight: Shape, dtype: str, wdtype: str,
                        out_dtype: str, gpu: bool) -> tuple[str, Args] | None:  # fmt: skip
    """TVM 0.19's x86 ``conv2d_transpose_nchw``: the data dilated and padded, the kernel flipped,
    then the ``conv2d_NCHWc.x86`` template; CUDA had its own ``conv2d_transpose_nchw.cuda``."""
    if str(attrs.data_layout) != "NCHW" or int(attrs.groups) != 1:
        return None
    strides, padding = _ints(attrs.strides), _ints(attrs.padding)
    output_padding = _ints(attrs.output_padding)
    if gpu:
        tensors = (_tensor_arg(data, dtype), _tensor_arg(weight, wdtype))
        return "conv2d_transpose_nchw.cuda", (*tensors, strides, padding, out_dtype,
                                              output_padding)  # fmt: skip
    n, c, h, w = data
    _, o, kh, kw = weight
    top, left, bottom, right = padding
    padded_h = (h - 1) * strides[0] + 1 + (kh - 1 - top) + (kh - 1 - bottom + output_padding[0])
    padded_w = (w - 1) * strides[1] + 1 + (kw - 1 - left) + (kw - 1 - right + output_padding[1])
    tensors = (_tensor_arg((n, c, padded_h, padded_w), dtype), _tensor_arg((o, c, kh, kw), wdtype))
    return "conv2d_NCHWc.x86", (*tensors, (1, 1), (0, 0), (1, 1), "NCHW", "NCHW", out_dtype)


def _matmul(call: relax.Call, values: Any, data: Shape, weight: Shape, out: Shape, dtype: str,
            wdtype: str, out_dtype: str, gpu: bool) -> Iterator[AnchorWorkload]:  # fmt: skip
    """``nn.dense`` (a matmul by a transposed 2-D weight), ``nn.batch_matmul`` (3-D operands,
    the second transposed) or ``nn.matmul``, with TVM 0.19's templates of each."""
    bound = values.get(call.args[1]) if isinstance(call.args[1], relax.Var) else call.args[1]
    transposed = isinstance(bound, relax.Call) and getattr(bound.op, "name", "") == \
        "relax.permute_dims"  # fmt: skip
    source = _tensor(bound.args[0]) if transposed else None
    if len(data) == 2 and len(weight) == 2 and transposed and source is not None:
        weight = source[0]  # (units, in): Relay's dense weight
        m, k = data
        args: Args = (_tensor_arg(data, dtype), _tensor_arg(weight, wdtype), None, out_dtype)
        extents = (m, weight[0], k)
        flop = 2.0 * m * weight[0] * k
        for name in _dense_templates(m, dtype, wdtype, out_dtype, gpu):
            yield AnchorWorkload("nn.dense", name, args, (data, weight, out), extents, flop)
    elif len(data) == 3 and len(weight) == 3 and not gpu:
        b, m, k = data
        n = out[-1]
        if transposed and source is not None:
            weight = source[0]  # Relay's batch_matmul(x, y) with transpose_b: y as given
        args = (_tensor_arg(data, dtype), _tensor_arg(weight, wdtype), (b, m, n), out_dtype,
                False, transposed)  # fmt: skip
        yield AnchorWorkload("nn.batch_matmul", "batch_matmul.x86", args, (data, weight, out),
                             (b, m, n, k), 2.0 * b * m * n * k)  # fmt: skip


def _dense_templates(batch: int, dtype: str, wdtype: str, out_dtype: str, gpu: bool) -> list[str]:
    if gpu:
        if dtype == "int8" and wdtype == "int8" and out_dtype == "int32":
            return ["dense_int8.cuda"]
        return ["dense_small_batch.gpu", *(["dense_large_batch.gpu"] if batch >= 32 else [])]
    if dtype in ("int8", "uint8"):
        return ["dense_int8.x86"]
    return ["dense_nopack.x86", "dense_pack.x86"]
