"""``relay.transform.FlattenAtrousConv`` (``transform/flatten_atrous_conv.py``) and the
``nn.batch_to_space_nd`` it removes."""

from __future__ import annotations

import numpy as np
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin

T = relay.transform
_CONV = {"groups": 2, "channels": 2, "kernel_size": [3, 3], "data_layout": "NHWC"}
_CONV["kernel_layout"] = "HWOI"


def _atrous(strides: tuple[int, int] = (1, 1)) -> tuple[relay.Var, relay.Expr, relay.Expr]:
    data = relay.var("data", shape=(1, 5, 5, 2))
    weight = relay.const(np.arange(18, dtype="float32").reshape(3, 3, 2, 1))
    s2b = relay.nn.space_to_batch_nd(data, block_shape=[2, 2], paddings=[[2, 3], [2, 3]])
    conv = relay.nn.conv2d(s2b, weight, strides=strides, **_CONV)
    b2s = relay.nn.batch_to_space_nd(conv, block_shape=[2, 2], crops=[[0, 1], [0, 1]])
    return data, weight, b2s


def test_batch_to_space_nd_interleaves_the_blocks_and_crops_as_numpy_does():
    x = np.arange(8 * 2 * 3 * 1, dtype="float32").reshape(8, 2, 3, 1)
    data = relay.var("data", shape=x.shape)
    out = relay.nn.batch_to_space_nd(data, block_shape=[2, 2], crops=[[1, 0], [0, 2]])
    mod = tvm.IRModule.from_expr(relay.Function([data], out))
    got = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(x)
    # TensorFlow's definition: the batch is [block_h, block_w, batch], the blocks interleaved.
    want = x.reshape(2, 2, 2, 2, 3, 1).transpose(2, 3, 0, 4, 1, 5).reshape(2, 4, 6, 1)
    np.testing.assert_array_equal(got.numpy(), want[:, 1:, :4])


def test_the_pattern_becomes_one_dilated_convolution_on_the_relay_graph():
    data, weight, expr = _atrous()
    out = T.FlattenAtrousConv()(tvm.IRModule.from_expr(relay.Function([data], expr)))
    expected = relay.nn.conv2d(data, weight, padding=[2, 2, 2, 2], dilation=[2, 2], **_CONV)
    tvm.ir.assert_structural_equal(origin.relay_of(out["main"]), relay.Function([data], expected))
    assert T.FlattenAtrousConv().info.opt_level == 0


def test_a_convolution_the_pattern_does_not_allow_is_kept():
    data, _, expr = _atrous(strides=(2, 2))
    mod = tvm.IRModule.from_expr(relay.Function([data], expr))
    assert T.FlattenAtrousConv()(mod)["main"].same_as(mod["main"])
