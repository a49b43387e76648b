"""``relay.op.op_strategy``: Relay strategies drive the engine's selection, lower and jit."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import tvm
from _relay_strategies import conv_call, placeholders, plain_conv, wide_strategy

from compile_engine_compat import relay, te_compiler
from compile_engine_compat.relay.op import OpStrategy
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr


def test_relay_strategy_drives_selection():
    target = tvm.target.Target("llvm")
    op = relay.op.get("nn.conv2d")
    with TempOpAttr("nn.conv2d", "FTVMStrategy", wide_strategy):
        narrow, wide = conv_call(4), conv_call(16)
        names = [
            i.name
            for i in te_compiler.get_valid_implementations(
                op, narrow.attrs, placeholders(narrow), narrow.checked_type, target
            )
        ]
        assert names == ["plus_one", "plus_two"]
        impls = te_compiler.get_valid_implementations(
            op, wide.attrs, placeholders(wide), wide.checked_type, target
        )
        assert [i.name for i in impls] == ["plus_one", "plus_two", "wide"]
        impl, outs = te_compiler.select_implementation(
            op, narrow.attrs, placeholders(narrow), narrow.checked_type, target, False
        )
        assert impl.name == "plus_two" and outs[0].name == "shifted"
    # The op's own legalization is back.
    names = [i.name for i in te_compiler.get_valid_implementations(op, None, [], None, target)]
    assert names == ["nn.conv2d.legalize"]


def test_relay_strategy_is_used_inside_lower_and_jit(engine):
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(3, 2, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=1))
    xs = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype("float32")
    ws = np.random.default_rng(2).standard_normal((3, 2, 3, 3)).astype("float32")

    def run():
        out = tvm.runtime.empty((1, 3, 4, 4), "float32", tvm.cpu())
        engine.jit(f, "llvm")(tvm.runtime.tensor(xs), tvm.runtime.tensor(ws), out)
        return out.numpy()

    plain = run()
    engine.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with TempOpAttr("nn.conv2d", "FTVMStrategy", wide_strategy):
            shifted = run()
    np.testing.assert_allclose(shifted, plain + 2.0, rtol=1e-5, atol=1e-5)
    skipped = [w for w in caught if "wrap_topi_schedule" in str(w.message)]
    assert skipped and "s_tir" in str(skipped[0].message)


def test_relay_computes_read_relay_attribute_names_inside_jit(engine):
    seen: dict[str, Any] = {}

    def compute(attrs, inputs, out_type):
        seen.update(channels=attrs.channels, padding=attrs.get_int_tuple("padding"))
        seen["out_dtype"] = attrs.out_dtype
        return [plain_conv(inputs[0], inputs[1], attrs.strides, attrs.padding, (1, 1), "float32")]

    def fstrategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(compute, None, "reads_relay_names", 10)
        return s

    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(3, 2, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=1, channels=3))
    with TempOpAttr("nn.conv2d", "FTVMStrategy", fstrategy):
        engine.jit(f, "llvm")
    # Relax keeps no `channels`: it reads as Relay's default; unset out_dtype reads as "".
    assert seen == {"channels": None, "padding": (1, 1, 1, 1), "out_dtype": ""}
