"""``relay.transform.AlterOpLayout`` (``transform/alter_op_layout.py``) with users' alter
functions, and ``ConvertLayout``'s ``"default"`` layouts."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr

T = relay.transform


_X = relay.var("x", shape=(1, 4, 8, 8))
_W = relay.var("w", shape=(4, 4, 3, 3))


def _conv(weight: relay.Expr = _W) -> relay.Function:
    y = relay.nn.relu(relay.nn.conv2d(_X, weight, channels=4, kernel_size=(3, 3)))
    return relay.Function([_X, _W], y)


def _altered(mod: tvm.IRModule) -> relay.Function:
    with tvm.transform.PassContext(opt_level=3):
        return origin.relay_of(tvm.transform.Sequential([T.AlterOpLayout()])(mod)["main"])


def test_each_call_becomes_what_the_alter_function_returns():
    seen = []

    def alter(attrs, inputs, tinfos, out_type):
        seen.append(([tuple(int(d) for d in t.shape) for t in tinfos], str(out_type.dtype)))
        return relay.nn.conv2d(inputs[0], relay.multiply(inputs[1], relay.const(2.0)), **attrs)

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", alter):
        after = _altered(tvm.IRModule.from_expr(_conv()))
    tvm.ir.assert_structural_equal(after, _conv(relay.multiply(_W, relay.const(2.0))))
    assert seen == [([(1, 4, 8, 8), (4, 4, 3, 3)], "float32")]


def test_none_keeps_the_call_and_another_layout_is_refused_by_name():
    mod = tvm.IRModule.from_expr(_conv())
    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", lambda *args: None):
        assert _altered(mod) is origin.relay_of(mod["main"])

    def to_nhwc(attrs, inputs, tinfos, out_type):
        data = relay.layout_transform(inputs[0], "NCHW", "NHWC")
        return relay.nn.conv2d(data, inputs[1], channels=4, kernel_size=(3, 3), data_layout="NHWC")

    with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", to_nhwc):
        with pytest.raises(ValueError, match=r"nn\.conv2d returned a value of type"):
            _altered(mod)


def test_convert_layout_carries_the_layout_through_an_op_without_a_kernel():
    stats = [relay.var(n, shape=(4,)) for n in ("g", "b", "m", "v")]
    y = relay.nn.batch_norm(relay.nn.conv2d(_X, _W, channels=4, kernel_size=(3, 3)), *stats)[0]
    mod = tvm.IRModule.from_expr(relay.Function([_X, _W, *stats], y))
    desired = {"nn.conv2d": ["NHWC", "default"], "nn.batch_norm": ["NHWC"], "nn.relu": ["NHWC"]}
    assert "axis=3" in T.ConvertLayout(desired)(mod).script()
