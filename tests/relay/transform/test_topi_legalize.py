"""TVM 0.19's own legalizations under ``Legalize`` (``transform/topi_legalize.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay.transform import topi_legalize

T = relay.transform


def _legalized(body: relay.Expr, params: list[relay.Var]) -> Any:
    mod = T.Legalize()(tvm.IRModule.from_expr(relay.Function(params, body)))
    return origin.relay_of(mod["main"]).body


def _arm(*mattr: str) -> tvm.target.Target:
    return tvm.target.Target(
        {"kind": "llvm", "device": "arm_cpu", "mtriple": "aarch64-linux-gnu", "mattr": list(mattr)}
    )


def _int8_conv() -> tuple[relay.Expr, list[relay.Var]]:
    x = relay.var("x", shape=(1, 1, 1, 3), dtype="int8")
    w = relay.var("w", shape=(1, 1, 3, 4), dtype="int8")
    out = relay.nn.conv2d(
        x, w, kernel_size=(1, 1), channels=4, data_layout="NHWC", kernel_layout="HWIO"
    )
    return out, [x, w]


@pytest.mark.parametrize(("mattr", "in_channels"), [((), 8), (("+v8.2a", "+dotprod"), 3)])
def test_arm_int8_conv2d_channels_are_padded_to_the_vector_length(mattr, in_channels):
    body, params = _int8_conv()
    with _arm(*mattr):
        out = _legalized(body, params)
    assert out.op.name == "strided_slice"  # 4 output channels padded to 8, sliced back
    conv = out.args[0]
    assert conv.op.name == "nn.conv2d" and int(conv.attrs.channels) == 8
    assert int(conv.type_args[0].shape[3]) == in_channels  # the data's type, as Relay's
    assert [int(d) for d in out.checked_type.shape] == [1, 1, 1, 4]


def test_without_a_target_the_call_is_kept():
    body, params = _int8_conv()
    out = _legalized(body, params)
    assert out.op.name == "nn.conv2d" and out.args[0] is not None
    assert not isinstance(out.args[0], relay.Call)


def test_cuda_dense_is_padded_for_tensor_cores():
    x = relay.var("x", shape=(7, 16), dtype="float16")
    w = relay.var("w", shape=(32, 16), dtype="float16")
    with tvm.target.Target("cuda"):
        out = _legalized(relay.nn.dense(x, w), [x, w])
    expected = relay.strided_slice(
        relay.nn.dense(relay.nn.pad(x, pad_width=((0, 1), (0, 0))), w), begin=[0, 0], end=[7, 32]
    )
    tvm.ir.assert_structural_equal(out, expected, map_free_vars=True)


@pytest.mark.parametrize(("bounds", "removed"), [((-128, 127), True), ((-127, 127), False)])
def test_clip_of_a_requantize_over_its_whole_range_goes(bounds, removed):
    x = relay.var("x", shape=(2, 3), dtype="int32")
    one, zero = relay.const(np.float32(1.0)), relay.const(np.int32(0))
    requantized = relay.qnn.requantize(x, one, zero, one, zero, out_dtype="int8")
    out = _legalized(relay.clip(requantized, *bounds), [x])
    assert out.op.name == ("qnn.requantize" if removed else "clip")


def test_the_functions_are_topis_names():
    assert topi_legalize.DEFAULT_LEGALIZE["nn.conv2d"] is topi_legalize.conv2d_legalize
    assert topi_legalize.conv2d_legalize.__name__ == "conv2d_legalize"
