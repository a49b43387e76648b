"""``vision.multibox_transform_loc`` as TVM 0.19 computed it: one sequential TE extern kernel.

TVM 0.19's TOPI wrote the op in hybrid script: for each batch, the anchors in order, each
given its best class (the background left out unless ``keep_background``), kept when that
class is not the background and its score reaches ``threshold``, and its box decoded from the
anchor and the predicted offsets (centre and size scaled by ``variances``, ``exp`` of the size
offsets, clipped to ``[0, 1]`` when ``clip``). Kept anchors are written to the top of the
output, ``[class_id, score, xmin, ymin, xmax, ymax]``, and their count to ``valid_count``.
TVM 0.27 has no such compute (its Relax op returns boxes and scores, TFLite's decoding): this
module is the same loop, written with TVM's IR builder as a ``te.extern``, so that the shim's
builds compile it as any kernel.

The rows past ``valid_count`` were left as they happened to be in TVM 0.19 (uninitialized
memory); here they are ``-1``, as ``get_valid_counts`` fills them.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax, te
from tvm.script.ir_builder import IRBuilder
from tvm.script.ir_builder import tirx as T

from compile_engine_compat.relay.expr import Attrs

__all__ = ["multibox_transform_loc", "multibox_transform_loc_te"]


def multibox_transform_loc_te(
    cls_prob: te.Tensor,
    loc_pred: te.Tensor,
    anchor: te.Tensor,
    clip: bool = True,
    threshold: float = 0.01,
    variances: tuple[float, float, float, float] = (0.1, 0.1, 0.2, 0.2),
    keep_background: bool = False,
) -> list[te.Tensor]:
    """The op on TE tensors: ``[out_loc (batch, anchors, 6), valid_count (batch,) int32]``.

    Parameters
    ----------
    cls_prob : te.Tensor
        ``(batch, classes, anchors)`` class probabilities.
    loc_pred : te.Tensor
        ``(batch, anchors * 4)`` box offsets.
    anchor : te.Tensor
        ``(1, anchors, 4)`` prior boxes, ``(left, top, right, bottom)``.
    clip, threshold, variances, keep_background
        Relay's attributes of the op.
    """
    batch, _, anchors = cls_prob.shape
    dtype = loc_pred.dtype

    def body(ins: list[Any], outs: list[Any]) -> Any:
        return _transform_loc_ir(ins, outs, clip, threshold, variances, keep_background)

    out_loc, valid_count = te.extern(
        [(batch, anchors, 6), (batch,)],
        [cls_prob, loc_pred, anchor],
        body,
        dtype=[dtype, "int32"],
        name="multibox_transform_loc",
        tag="multibox_transform_loc",
    )
    return [out_loc, valid_count]


def _transform_loc_ir(
    ins: list[Any],
    outs: list[Any],
    clip: bool,
    threshold: float,
    variances: tuple[float, float, float, float],
    keep_background: bool,
) -> Any:
    """The loop over anchors of each batch (see the module doc)."""
    cls_prob, loc_pred, anchor = (T.buffer_proxy(b) for b in ins)
    out_loc, valid_count = (T.buffer_proxy(b) for b in outs)
    batch, classes, anchors = ins[0].shape
    dtype = ins[1].dtype
    first_class = 0 if keep_background else 1
    vx, vy, vw, vh = (tvm.tirx.const(float(v), dtype) for v in variances)

    def bounded(value: Any) -> Any:
        if not clip:
            return value
        return tvm.tirx.max(
            tvm.tirx.const(0.0, dtype), tvm.tirx.min(tvm.tirx.const(1.0, dtype), value)
        )

    with IRBuilder() as ib:
        with T.parallel(0, batch) as i:
            best = T.buffer_proxy(T.alloc_buffer((1,), dtype, scope="local"))
            best_class = T.buffer_proxy(T.alloc_buffer((1,), "int32", scope="local"))
            valid_count[i] = T.int32(0)
            with T.serial(0, anchors) as j:
                best[0] = tvm.tirx.const(-1.0, dtype)
                best_class[0] = T.int32(0)
                with T.serial(first_class, classes) as k:
                    with T.If(cls_prob[i, k, j] > best[0]):
                        with T.Then():
                            best_class[0] = tvm.tirx.Cast("int32", k)
                            best[0] = cls_prob[i, k, j]
                below = tvm.tirx.all(best_class[0] > 0, best[0] < tvm.tirx.const(threshold, dtype))
                with T.If(below):
                    with T.Then():
                        best_class[0] = T.int32(0)
                kept = tvm.tirx.const(True) if keep_background else best_class[0] > 0
                with T.If(kept):
                    with T.Then():
                        row = valid_count[i]
                        offset = 0.0 if keep_background else 1.0
                        out_loc[i, row, 0] = tvm.tirx.Cast(dtype, best_class[0]) - tvm.tirx.const(
                            offset, dtype
                        )
                        out_loc[i, row, 1] = best[0]
                        left, top = anchor[0, j, 0], anchor[0, j, 1]
                        right, bottom = anchor[0, j, 2], anchor[0, j, 3]
                        width, height = right - left, bottom - top
                        half = tvm.tirx.const(2.0, dtype)
                        cx = loc_pred[i, j * 4] * vx * width + (left + right) / half
                        cy = loc_pred[i, j * 4 + 1] * vy * height + (top + bottom) / half
                        half_w = tvm.tirx.exp(loc_pred[i, j * 4 + 2] * vw) * width / half
                        half_h = tvm.tirx.exp(loc_pred[i, j * 4 + 3] * vh) * height / half
                        out_loc[i, row, 2] = bounded(cx - half_w)
                        out_loc[i, row, 3] = bounded(cy - half_h)
                        out_loc[i, row, 4] = bounded(cx + half_w)
                        out_loc[i, row, 5] = bounded(cy + half_h)
                        valid_count[i] = row + 1
            with T.serial(0, anchors) as j:
                with T.If(j >= valid_count[i]):
                    with T.Then():
                        with T.serial(0, 6) as k:
                            out_loc[i, j, k] = tvm.tirx.const(-1.0, dtype)
    return ib.get()


def multibox_transform_loc(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """The Relay row's emit function: one ``call_tir`` of :func:`multibox_transform_loc_te`."""
    variances = tuple(float(v) for v in attrs.variances)
    if len(variances) != 4:
        raise ValueError(f"variances has 4 values (x, y, width, height), got {variances}")

    def compute(cls_prob: te.Tensor, loc_pred: te.Tensor, anchor: te.Tensor) -> list[te.Tensor]:
        return multibox_transform_loc_te(
            cls_prob,
            loc_pred,
            anchor,
            clip=bool(attrs.clip),
            threshold=float(attrs.threshold),
            variances=variances,
            keep_background=bool(attrs.keep_background),
        )

    return bb.call_te(compute, *args, primfunc_name_hint="multibox_transform_loc")
