"""``relay.transform.ToMixedPrecision``: TVM 0.19's rewrite of the Relay graph, graph by graph.

Only graphs are compared here (no builds): tests/relay/test_transform.py runs a converted model.
"""

from __future__ import annotations

import logging

import pytest
import tvm

from compile_engine_compat import compile_engine as _ce  # noqa: F401  (legacy config keys)
from compile_engine_compat import relay
from compile_engine_compat.relay.transform import mixed_precision

T = relay.transform


def _module(expr: relay.Expr) -> tvm.IRModule:
    return T.InferType()(tvm.IRModule.from_expr(expr))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_always_follow_never_and_one_cast_per_value(dtype):
    data = relay.var("data", shape=(1, 8))
    weight = relay.var("weight", shape=(4, 8))
    dense = relay.nn.dense(data, weight)
    out = relay.nn.softmax(dense + dense)  # add follows dense; softmax never converts
    amp = T.ToMixedPrecision(dtype)(_module(out))
    d16 = relay.nn.dense(relay.cast(data, dtype), relay.cast(weight, dtype), out_dtype=dtype)
    expected = _module(relay.nn.softmax(relay.cast(d16 + d16, "float32")))
    tvm.ir.assert_structural_equal(amp, expected)


def test_a_float16_clip_beyond_its_range_stays_float32_and_bfloat16_converts():
    data = relay.var("data", shape=(1, 4))
    clipped = relay.clip(relay.divide(data, relay.const(5.0)), -128000.0, 128000.0)
    mod = _module(clipped)
    half = T.ToMixedPrecision("float16")(mod)
    div = relay.divide(relay.cast(data, "float16"), relay.cast(relay.const(5.0), "float16"))
    expected = relay.clip(relay.cast(div, "float32"), -128000.0, 128000.0)
    tvm.ir.assert_structural_equal(half, _module(expected))
    bf = T.ToMixedPrecision("bfloat16")(mod)
    assert bf["main"].ret_ty.dtype == "bfloat16"


def test_keep_orig_output_dtype_casts_the_output_back():
    data = relay.var("data", shape=(1, 8))
    weight = relay.var("weight", shape=(4, 8))
    mod = _module(relay.nn.dense(data, weight))
    with tvm.transform.PassContext(config={"relay.ToMixedPrecision.keep_orig_output_dtype": True}):
        amp = T.ToMixedPrecision("float16")(mod)
    assert amp["main"].ret_ty.dtype == "float32"
    assert T.ToMixedPrecision("float16")(mod)["main"].ret_ty.dtype == "float16"


def test_let_variables_take_their_new_types():
    x = relay.var("x", shape=(1, 8))
    w = relay.var("w", shape=(8, 8))
    v = relay.var("v", shape=(1, 8))
    amp = T.ToMixedPrecision("float16")(_module(relay.Let(v, relay.nn.dense(x, w), v + v)))
    v16 = relay.var("v", shape=(1, 8), dtype="float16")
    dense = relay.nn.dense(relay.cast(x, "float16"), relay.cast(w, "float16"), out_dtype="float16")
    tvm.ir.assert_structural_equal(amp, _module(relay.Let(v16, dense, v16 + v16)))


def test_registered_rules_and_missing_ops():
    data = relay.var("data", shape=(1, 8))
    mod = _module(relay.log(relay.nn.relu(data)))  # log is in no list
    with pytest.raises(ValueError, match="log"):
        T.ToMixedPrecision("float16", missing_op_mode=0)(mod)
    assert T.ToMixedPrecision("float16", 2)(mod)["main"].ret_ty.dtype == "float16"
    op = relay.op.get("nn.relu")
    try:
        relay.op.register_mixed_precision_conversion(
            "nn.relu", lambda call, dtype: [mixed_precision.MIXED_PRECISION_NEVER, dtype, dtype]
        )
        out = T.ToMixedPrecision("float16", 2)(mod)["main"]
        assert out.ret_ty.dtype == "float32"  # relu stays float32, so log follows it
    finally:
        op.reset_attr(mixed_precision.ATTR)


def test_bad_arguments_are_refused_at_the_call(caplog):
    with pytest.raises(ValueError, match="floating point"):
        T.ToMixedPrecision("int8")
    with pytest.raises(ValueError, match="0, 1, or 2"):
        T.ToMixedPrecision(missing_op_mode=3)
    with pytest.raises(TypeError, match="callable"):
        relay.op.register_mixed_precision_conversion("nn.relu", 3)  # type: ignore[arg-type]
    data = relay.var("data", shape=(2,))
    with caplog.at_level(logging.WARNING):
        T.ToMixedPrecision("float16")(_module(relay.log(data)))
    assert "log (1x)" in caplog.text
