"""fold_pad_permutes: a pad ConvertLayout leaves between inverse permutations, padded in the
new layout (what the ONNX int8 convolutions' zero-point pads need between NHWC convolutions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat.pipeline.model.pad_layout import fold_pad_permutes
from compile_engine_compat.pipeline.op_sources import MODULE_LAYOUTS

R = relax.op
W = np.random.default_rng(3).integers(-3, 4, (8, 1, 3, 3)).astype("int8")


def _pad_between_convolutions(bb: Any, x: Any) -> Any:
    first = bb.emit(R.nn.conv2d(x, relax.const(W), padding=[1, 1], groups=8, out_dtype="int32"))
    # minimum/maximum, as the model route spells a clip (ConvertLayout has no rule for clip).
    low = R.maximum(R.minimum(first, relax.const(255, "int32")), relax.const(0, "int32"))
    narrow = bb.emit(R.astype(low, "uint8"))
    padded = bb.emit(R.nn.pad(narrow, [0, 0, 0, 0, 1, 2, 0, 1], pad_value=7.0))
    return R.nn.conv2d(padded, relax.const(W), groups=8, out_dtype="int32")


def _calls(mod: tvm.IRModule) -> list[Any]:
    calls: list[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, relax.Call):
            calls.append(node)

    relax.analysis.post_order_visit(mod["main"], visit)
    return calls


def _ops(mod: tvm.IRModule) -> list[str]:
    return [call.op.name for call in _calls(mod) if isinstance(call.op, tvm.ir.Op)]


def test_the_pad_between_inverse_permutations_is_padded_in_nhwc_with_the_same_values() -> None:
    source = tvm.IRModule(
        {"main": build("main", [("x", (1, 8, 6, 5), "uint8")], _pad_between_convolutions)}
    )
    converted = relax.transform.ConvertLayout(MODULE_LAYOUTS)(source)
    folded = fold_pad_permutes(converted)
    # TVM's pass alone: the activations go back to NCHW around the pad and forward again.
    assert (
        _ops(converted).count("relax.permute_dims") == _ops(folded).count("relax.permute_dims") + 2
    )
    pads = [c for c in _calls(folded) if getattr(c.op, "name", "") == "relax.nn.pad"]
    assert [int(w) for w in pads[0].attrs.pad_width] == [0, 0, 1, 2, 0, 1, 0, 0]  # NHWC
    x = np.random.default_rng(0).integers(0, 4, (1, 8, 6, 5)).astype("uint8")
    results = [
        relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x))
        for mod in (source, folded)
    ]
    np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())
    assert results[0].numpy().shape == (1, 8, 7, 4)


def test_a_pad_whose_permutations_do_not_undo_each_other_is_left_alone() -> None:
    def body(bb: Any, x: Any) -> Any:
        turned = bb.emit(R.permute_dims(x, [0, 2, 3, 1]))
        padded = bb.emit(R.nn.pad(turned, [0, 0, 1, 1, 0, 0, 0, 0], pad_value=1.0))
        return R.permute_dims(padded, [0, 2, 3, 1])  # not the inverse

    mod = tvm.IRModule({"main": build("main", [("x", (1, 2, 3, 4), "uint8")], body)})
    assert fold_pad_permutes(mod) is mod
