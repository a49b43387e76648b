"""``relay.quantize``: TVM 0.19's automatic quantization on the Relay graph.

One module-scope quantization and build of a tiny conv net (global_scale) checks the integer
graph and the values against fp32; the rest builds nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.quantize.kl_divergence import (
    kl_divergence_scale,
    percentile_scale,
)
from compile_engine_compat.relay.quantize.realization import shift_of


def _conv_net() -> tvm.IRModule:
    rng = np.random.default_rng(0)
    data = relay.var("data", shape=(1, 4, 8, 8))
    w0 = relay.const(rng.uniform(-0.2, 0.2, (4, 4, 3, 3)).astype("float32"))
    w1 = relay.const(rng.uniform(-0.2, 0.2, (4, 4, 3, 3)).astype("float32"))
    out = relay.nn.relu(relay.nn.conv2d(data, w0, kernel_size=(3, 3), padding=(1, 1), channels=4))
    out = relay.nn.conv2d(out, w1, kernel_size=(3, 3), padding=(1, 1), channels=4)
    return tvm.IRModule.from_expr(relay.Function([data], out))


def _calls(mod: tvm.IRModule) -> list[Any]:
    found: list[Any] = []
    relay.analysis.post_order_visit(
        mod["main"], lambda n: found.append(n) if isinstance(n, relay.Call) else None
    )
    return found


@pytest.fixture(scope="module")
def quantized() -> tuple[tvm.IRModule, tvm.IRModule]:
    mod = _conv_net()
    with relay.quantize.qconfig(skip_conv_layers=[], global_scale=4.0):
        return mod, relay.quantize.quantize(mod)


def test_the_convolutions_take_int8_and_accumulate_in_int32(quantized):
    convs = [c for c in _calls(quantized[1]) if c.op.name == "nn.conv2d"]
    assert len(convs) == 2
    for conv in convs:
        assert [a.checked_type.dtype for a in conv.args] == ["int8", "int8"]
        assert conv.checked_type.dtype == "int32"
    names = {c.op.name for c in _calls(quantized[1])}
    assert "left_shift" in names or "right_shift" in names  # scales change by shifts


def test_the_quantized_net_is_close_to_fp32(quantized):
    mod, qmod = quantized
    x = np.random.default_rng(1).uniform(0, 1, (1, 4, 8, 8)).astype("float32")

    def run(m: tvm.IRModule) -> np.ndarray:
        ex = relay.create_executor("vm", mod=m, device=tvm.cpu(), target="llvm")
        return np.asarray(ex.evaluate()(x).numpy())

    want, got = run(mod), run(qmod)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=0.08)
    assert not np.array_equal(got, want)  # the integers are really there


def test_skip_conv_layers_keeps_the_first_convolution_float():
    with relay.quantize.qconfig(global_scale=4.0):  # TVM 0.19's default: skip_conv_layers=[0]
        qmod = relay.quantize.quantize(_conv_net())
    convs = [c for c in _calls(qmod) if c.op.name == "nn.conv2d"]
    assert [c.checked_type.dtype for c in convs] == ["float32", "int32"]


def test_qconfig_nests_and_checks_its_fields():
    assert relay.quantize.current_qconfig().global_scale == 8.0
    with relay.quantize.qconfig(global_scale=2.0):
        with relay.quantize.qconfig(nbit_input=7) as inner:
            assert relay.quantize.current_qconfig() is inner and inner.global_scale == 8.0
        assert relay.quantize.current_qconfig().global_scale == 2.0
    with pytest.raises(ValueError, match="calibrate_mode"):
        relay.quantize.qconfig(calibrate_mode="entropy")
    with pytest.warns(UserWarning, match="paritition_conversions"):
        relay.quantize.qconfig(paritition_conversions="disabled")


def test_kl_divergence_without_a_dataset_is_refused():
    with relay.quantize.qconfig(calibrate_mode="kl_divergence", skip_conv_layers=[]):
        with pytest.raises(ValueError, match="needs a dataset"):
            relay.quantize.quantize(_conv_net())


def test_fully_integral_refuses_a_float_op_in_the_core():
    x = relay.var("x", shape=(2, 2))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.add(x, x)))
    with relay.quantize.qconfig(partition_conversions="fully_integral"):
        with pytest.raises(AssertionError, match="add"):
            relay.quantize.quantize(mod)


def test_the_separate_stages_and_simulation_are_refused_naming_quantize():
    with pytest.raises(NotImplementedError, match=r"relay\.quantize\.quantize"):
        relay.quantize.annotate()
    with relay.quantize.qconfig(do_simulation=True):
        with pytest.raises(NotImplementedError, match="do_simulation"):
            relay.quantize.quantize(_conv_net())


def test_calibration_thresholds():
    values = np.random.default_rng(2).normal(0, 1, 20000)
    kl = kl_divergence_scale(values)
    assert 2.0 < kl <= np.abs(values).max() + 1e-9
    assert kl_divergence_scale(values + 36) > 36  # far from zero: no threshold clipping all
    assert percentile_scale(values) == pytest.approx(np.abs(values).max(), rel=0.05)
    assert shift_of(8.0) == 3 and shift_of(0.25) == -2 and shift_of(3.0) is None


def test_prerequisite_optimize_folds_batch_norm_into_constants():
    x = relay.var("x", shape=(1, 2, 2, 2))
    consts = [relay.const(np.array(v, "float32")) for v in ([2, 1], [0, 1], [1, 0], [4, 1])]
    out = relay.nn.batch_norm(x, *consts)[0]
    mod = relay.quantize.prerequisite_optimize(tvm.IRModule.from_expr(relay.Function([x], out)))
    calls = _calls(mod)
    assert [c.op.name for c in calls] == ["multiply", "add"]
    factor = calls[0].args[1].data.numpy().ravel()
    np.testing.assert_allclose(factor, [2 / np.sqrt(4 + 1e-5), 1 / np.sqrt(1 + 1e-5)], rtol=1e-6)
