"""``relay.qnn.op``: real ``qnn.*`` calls in the Relay graph, lowered to TVM 0.19's integers.

One module-scope build runs a quantized pipeline (quantize -> qnn.conv2d -> requantize ->
qnn.dense -> dequantize) against the NumPy references of
:mod:`compile_engine_compat.testing.qnn_references`; the rest is graph-level and builds nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.registry import UnsupportedRelayError
from compile_engine_compat.relay.dataflow_pattern import is_op, wildcard
from compile_engine_compat.relay.qnn.lowering.common import fixed_point_multiplier_shift
from compile_engine_compat.testing import qnn_references as ref
from compile_engine_compat.tvm_legacy import graph_executor


def _c(value: Any, dtype: str) -> relay.Constant:
    return relay.const(value, dtype)


def _requantize(x: Any, in_scale: float, out_scale: float, **kw: Any) -> Any:
    return relay.qnn.op.requantize(
        x, _c(in_scale, "float32"), _c(0, "int32"), _c(out_scale, "float32"), _c(3, "int32"), **kw
    )


def test_a_builder_makes_a_qnn_call_of_the_one_op_object():
    x = relay.var("x", shape=(4,), dtype="int32")
    call = _requantize(x, 0.5, 0.25, rounding="TONEAREST")
    assert call.op is relay.op.get("qnn.requantize")
    assert call.attrs.rounding == "TONEAREST" and call.attrs.out_dtype == "int8"
    assert relay.qnn.requantize is relay.qnn.op.requantize
    assert "qnn.requantize(%x" in relay.Function([x], call).astext()


def test_a_qnn_call_type_checks_and_the_pattern_language_sees_it():
    x = relay.var("x", shape=(2, 3), dtype="int32")
    call = _requantize(x, 0.5, 0.25, out_dtype="uint8")
    func = relay.testing.run_infer_type(relay.Function([x], call))
    assert func.body.checked_type == relay.TensorType((2, 3), "uint8")
    pattern = is_op("qnn.requantize")(wildcard(), wildcard(), wildcard(), wildcard(), wildcard())
    assert pattern.match(call)
    assert not is_op("qnn.quantize")(wildcard(), wildcard(), wildcard()).match(call)


def test_canonicalize_ops_leaves_plain_ops_only():
    x = relay.var("x", shape=(8,), dtype="float32")
    q = relay.qnn.op.quantize(x, _c(0.1, "float32"), _c(2, "int32"))
    y = relay.qnn.op.dequantize(_requantize(q, 0.1, 0.2), _c(0.2, "float32"), _c(3, "int32"))
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    lowered = relay.qnn.transform.CanonicalizeOps()(mod)
    text = lowered["main"].astext() if hasattr(lowered["main"], "astext") else str(lowered)
    assert "qnn." not in text
    assert "round" in text or "floor" in text


def test_a_scale_that_is_not_a_constant_is_refused_naming_it():
    x = relay.var("x", shape=(4,), dtype="int32")
    scale = relay.var("scale", shape=(), dtype="float32")
    call = relay.qnn.op.requantize(x, scale, _c(0, "int32"), _c(1.0, "float32"), _c(0, "int32"))
    with pytest.raises(UnsupportedRelayError, match="input_scale must be a constant"):
        relay.testing.run_infer_type(relay.Function([x, scale], call))


def test_qnn_conv2d_and_dense_lower_to_the_8_bit_ops_less_zero_point_terms():
    x = relay.var("x", shape=(1, 3, 6, 6), dtype="uint8")
    w = relay.const(np.ones((4, 3, 3, 3), "int8"))
    conv = relay.qnn.op.conv2d(
        x, w, _c(5, "int32"), _c(2, "int32"), _c(0.1, "float32"), _c(0.1, "float32"),
        kernel_size=(3, 3), channels=4, padding=(1, 1),
    )  # fmt: skip
    flat = relay.reshape(conv, (1, -1))
    dense = relay.qnn.op.dense(
        relay.cast(flat, "int8"), relay.const(np.ones((2, 144), "int8")), _c(1, "int32"),
        _c(0, "int32"), _c(0.1, "float32"), _c(0.1, "float32"), units=2,
    )  # fmt: skip
    mod = tvm.IRModule.from_expr(relay.Function([x], dense))
    func = relay.transform.InferType()(relay.qnn.transform.CanonicalizeOps()(mod))["main"]
    seen: list[tuple[str, str]] = []

    def visit(e: Any) -> None:
        if isinstance(e, relay.Call) and e.op.name in ("nn.conv2d", "nn.dense"):
            seen.append((e.op.name, str(getattr(e.args[0].checked_type, "dtype", ""))))

    relay.analysis.post_order_visit(func, visit)
    assert ("nn.conv2d", "uint8") in seen and ("nn.dense", "int8") in seen
    assert ("nn.conv2d", "int32") in seen  # the kernel zero point's window sums


@pytest.mark.parametrize("multiplier", [0.0, 1e-9, 0.25, 0.3333333, 0.5, 1.0, 1.9999999, 7.5, 1e6])
def test_the_fixed_point_multiplier_is_relays(multiplier):
    assert fixed_point_multiplier_shift(multiplier) == ref.fixed_point_multiplier(multiplier)


@pytest.fixture(scope="module")
def pipeline() -> tuple[Any, dict[str, np.ndarray]]:
    """One build: quantize -> conv2d -> requantize -> dense -> dequantize, with its inputs."""
    rng = np.random.default_rng(7)
    w_conv = rng.integers(-128, 128, (4, 2, 3, 3)).astype("int8")
    w_dense = rng.integers(-128, 128, (5, 4 * 4 * 4)).astype("int8")
    x = relay.var("x", shape=(1, 2, 4, 4), dtype="float32")
    q = relay.qnn.op.quantize(x, _c(0.05, "float32"), _c(-3, "int32"))
    conv = relay.qnn.op.conv2d(
        q, relay.const(w_conv), _c(-3, "int32"), _c(2, "int32"), _c(0.05, "float32"),
        _c(0.01, "float32"), kernel_size=(3, 3), channels=4, padding=(1, 1),
    )  # fmt: skip
    r = relay.qnn.op.requantize(
        conv, _c(0.0005, "float32"), _c(0, "int32"), _c(0.07, "float32"), _c(5, "int32"),
        rounding="TONEAREST", compute_dtype="int64",
    )  # fmt: skip
    flat = relay.reshape(r, (1, 64))
    dense = relay.qnn.op.dense(
        flat, relay.const(w_dense), _c(5, "int32"), _c(-1, "int32"), _c(0.07, "float32"),
        _c(0.02, "float32"), units=5,
    )  # fmt: skip
    out = relay.qnn.op.dequantize(dense, _c(0.0014, "float32"), _c(0, "int32"))
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x], out)), "llvm")
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    data = rng.uniform(-6, 6, (1, 2, 4, 4)).astype("float32")
    module.set_input("x", data)
    module.run()
    return module.get_output(0).numpy(), {"x": data, "w_conv": w_conv, "w_dense": w_dense}


def test_a_quantized_pipeline_is_the_numpy_reference_bit_for_bit(pipeline):
    got, v = pipeline
    q = ref.quantize(v["x"], 0.05, -3)
    conv = ref.conv2d_nchw(q, v["w_conv"], -3, 2, padding=(1, 1))
    r = ref.requantize(conv, 0.0005, 0, 0.07, 5, rounding="TONEAREST", compute_dtype="int64")
    dense = ref.dense(r.reshape(1, 64), v["w_dense"], 5, -1)
    expected = ref.dequantize(dense, 0.0014, 0)
    np.testing.assert_array_equal(got, expected)


def test_tvm_relay_qnn_op_is_served_under_the_alias(installed_alias):
    from tvm.relay.qnn.op import quantize

    x = relay.var("x", shape=(2,))
    assert quantize(x, _c(0.5, "float32"), _c(0, "int32")).op.name == "qnn.quantize"


def test_a_bad_rounding_is_refused_at_the_builder_call():
    x = relay.var("x", shape=(4,), dtype="int32")
    with pytest.raises(ValueError, match="rounding must be one of"):
        _requantize(x, 0.5, 0.25, rounding="DOWNWARD")
