"""Relay-era strategy functions shared by the tests of ``relay.op`` and ``tvm_legacy.autotvm``."""

from __future__ import annotations

from tvm import te, topi

from compile_engine_compat import relay
from compile_engine_compat.relay.op import OpStrategy, strategy
from compile_engine_compat.relay.op.op import SpecializedCondition


def plain_conv(data, kernel, strides, padding, dilation, out_dtype):
    return topi.nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)


def conv_plus(amount):
    def compute(data, kernel, strides, padding, dilation, out_dtype):
        out = topi.nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)
        return te.compute(out.shape, lambda *i: out(*i) + amount, name="shifted")

    return compute


def te_schedule(outs):  # a Relay-era schedule: never run on modern TVM
    raise AssertionError("TE schedules must not run")


def wide_strategy(attrs, inputs, out_type, target):
    """Three implementations; the best one applies only to 16 or more input channels."""
    s = OpStrategy()
    s.add_implementation(
        strategy.wrap_compute_conv2d(conv_plus(1.0)),
        strategy.wrap_topi_schedule(te_schedule),
        name="plus_one",
        plevel=5,
    )
    s.add_implementation(
        strategy.wrap_compute_conv2d(conv_plus(2.0)), None, name="plus_two", plevel=12
    )
    with SpecializedCondition(inputs[0].shape[1] >= 16):
        s.add_implementation(strategy.wrap_compute_conv2d(plain_conv), None, name="wide", plevel=30)
    return s


def conv_call(channels):
    data = relay.var("data", shape=(1, channels, 5, 5))
    weight = relay.var("weight", shape=(4, channels, 3, 3))
    return relay.testing.run_infer_type(relay.nn.conv2d(data, weight, padding=(1, 1)))


def placeholders(call):
    return [te.placeholder(a.checked_type.concrete_shape) for a in call.args]
