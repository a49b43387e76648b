"""Pads between a layout change and its inverse, padded in the outer layout instead.

TVM 0.27's ``ConvertLayout`` has no layout rule for ``nn.pad``: a pad between two NHWC
convolutions stays NCHW, wrapped in a ``permute_dims`` back to NCHW and one forward to NHWC
(three passes over the activations, in one fused kernel). The quantized ONNX convolutions pad
their input with its zero point so (:mod:`compile_engine_compat.relay.frontend.onnx_integer`).
:func:`fold_pad_permutes` rewrites::

    permute_dims(pad(permute_dims(x, a), widths), b)    where b undoes a
    -> pad(x, widths of each axis of x)

the same values in the same layout, one pass that the convolution after it may inline.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import relax

__all__ = ["fold_pad_permutes"]


def _call_of(value: Any, op_name: str) -> Any | None:
    if isinstance(value, relax.Call) and getattr(value.op, "name", None) == op_name:
        return value
    return None


def _axes(call: Any) -> list[int]:
    axes = call.attrs.axes
    if axes is None:  # permute_dims without axes reverses them
        return list(reversed(range(len(call.ty.shape))))
    return [int(a) for a in axes]


def _folded(call: Any, lookup: Any) -> Any | None:
    """The single pad ``call`` amounts to (module doc), or None."""
    if _call_of(call, "relax.permute_dims") is None or not isinstance(call.args[0], relax.Var):
        return None
    pad = _call_of(lookup(call.args[0]), "relax.nn.pad")
    if pad is None or not isinstance(pad.args[0], relax.Var):
        return None
    inner = _call_of(lookup(pad.args[0]), "relax.permute_dims")
    if inner is None:
        return None
    first, then = _axes(inner), _axes(call)
    if [first[then[i]] for i in range(len(then))] != list(range(len(then))):
        return None
    widths = [int(w) for w in pad.attrs.pad_width]
    outer = [0] * len(widths)
    for axis, source in enumerate(first):  # the pad's axis ``axis`` is x's axis ``source``
        outer[2 * source : 2 * source + 2] = widths[2 * axis : 2 * axis + 2]
    return relax.op.nn.pad(
        inner.args[0], outer, pad_mode=pad.attrs.pad_mode, pad_value=float(pad.attrs.pad_value)
    )


@relax.expr_functor.mutator
class _PadFolder(relax.PyExprMutator):
    def __init__(self, mod: tvm.IRModule) -> None:
        super().__init__(mod)
        self.folded = 0

    def visit_call_(self, call: Any) -> Any:
        call = super().visit_call_(call)
        found = _folded(call, self.lookup_binding)
        if found is None:
            return call
        self.folded += 1
        return self.builder_.normalize(found)


def fold_pad_permutes(mod: tvm.IRModule) -> tvm.IRModule:
    """``mod`` with each pad wrapped in inverse permutations padded directly (module doc); the
    permutations nothing reads any more are dropped. ``mod`` itself is not changed."""
    functions = dict(mod.functions.items())
    changed = False
    for gvar, func in mod.functions.items():
        if isinstance(func, relax.Function):
            folder = _PadFolder(mod)
            rewritten = folder.visit_expr(func)
            if folder.folded:  # else keep ``func``: the mutator copies as it goes
                functions[gvar] = relax.analysis.remove_all_unused(rewritten)
                changed = True
    return tvm.IRModule(functions, attrs=mod.attrs) if changed else mod
