"""relay.transform.FakeQuantizationToInteger and relay.analysis.list_fake_quantized_op_freqs on
the real TVM: one small conv2d -> relu -> quantize region, built once."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay import qnn
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.relay.transform import fake_quantization_to_integer as fq2i


def _region() -> Any:
    x = relay.var("x", shape=[1, 2, 5, 5], dtype="int8")
    w = relay.var("w", shape=[3, 2, 3, 3], dtype="int8")
    zero = relay.const(0)
    conv = relay.nn.conv2d(
        qnn.op.dequantize(x, relay.const(0.5), relay.const(3)),
        qnn.op.dequantize(w, relay.const(0.25), zero),
        kernel_size=[3, 3],
    )
    return qnn.op.quantize(relay.nn.relu(conv), relay.const(2.0), zero, out_dtype="int8")


@pytest.fixture(scope="module")
def module() -> tvm.IRModule:
    return tvm.IRModule.from_expr(_region())


def _ops(mod: tvm.IRModule) -> set[str]:
    names: set[str] = set()
    relay.analysis.post_order_visit(
        origin.relay_of(mod["main"]),
        lambda n: names.add(str(n.op.name)) if isinstance(n, relay.Call) else None,
    )
    return names


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    run = relay.create_executor("vm", mod=mod, device=tvm.cpu(), target="llvm").evaluate()
    return np.asarray(run(*args).numpy())


def test_region_becomes_qnn_ops_with_the_float_graphs_results(module: tvm.IRModule) -> None:
    out = relay.transform.FakeQuantizationToInteger()(module)
    assert {"qnn.conv2d", "qnn.requantize", "maximum"} <= _ops(out)
    assert not {"qnn.dequantize", "nn.conv2d", "qnn.quantize"} & _ops(out)
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, 2, 5, 5), dtype="int8")
    w = rng.integers(-128, 128, (3, 2, 3, 3), dtype="int8")
    assert np.array_equal(_run(module, x, w), _run(out, x, w))


def test_op_freqs_count_the_region(module: tvm.IRModule) -> None:
    assert relay.analysis.list_fake_quantized_op_freqs(module) == {"nn.conv2d": 1, "nn.relu": 1}


def test_an_op_with_no_rule_keeps_the_region_or_fails_with_hard_fail() -> None:
    x = relay.var("x", shape=[4], dtype="int8")
    body = relay.cumsum(qnn.op.dequantize(x, relay.const(0.5), relay.const(0)))
    mod = tvm.IRModule.from_expr(qnn.op.quantize(body, relay.const(0.5), relay.const(0)))
    kept = relay.transform.FakeQuantizationToInteger()(mod)
    assert _ops(kept) == {"qnn.dequantize", "cumsum", "qnn.quantize"}
    with pytest.raises(ValueError, match="no rule"):
        relay.transform.FakeQuantizationToInteger(hard_fail=True)(mod)


def test_bad_options_are_refused_at_the_call() -> None:
    with pytest.raises(NotImplementedError, match="use_qat"):
        relay.transform.FakeQuantizationToInteger(use_qat=True)
    with pytest.raises(TypeError, match="optional_qnn_ops"):
        relay.transform.FakeQuantizationToInteger(optional_qnn_ops="nn.softmax")
    with pytest.raises(TypeError, match="callable"):
        fq2i.register_fake_quantization_to_integer("nn.relu", 3)  # type: ignore[arg-type]


def test_the_built_in_rules_are_the_ops_named_as_built_in() -> None:
    from compile_engine_compat.relay._impl import fake_quantization as fq

    rows = {(name, optional) for name, _, optional in fq2i.BUILT_IN_RULES}
    assert {n for n, o in rows if not o} == fq.BUILT_IN_RULE_OPS
    assert {n for n, o in rows if o} == fq.OPTIONAL_RULE_OPS


@pytest.mark.parametrize("op", ["topk", "depth_to_space"])
def test_kernels_of_the_rewritten_graph_are_its_own(op: str) -> None:
    # topk: an extern kernel beside packed weights (SplitLayoutRewritePreproc's check);
    # depth_to_space: a TE kernel whose int8 form must replace the float one.
    x = relay.var("x", shape=[1, 4, 2, 2], dtype="int8")
    real = qnn.op.dequantize(x, relay.const(2.0), relay.const(0))
    body = relay.topk(real, 2, 1, "values") if op == "topk" else relay.nn.depth_to_space(real, 2)
    mod = tvm.IRModule.from_expr(qnn.op.quantize(body, relay.const(2.0), relay.const(0)))
    out = relay.transform.FakeQuantizationToInteger()(mod)
    assert "qnn.dequantize" not in _ops(out)
    data = np.arange(-8, 8, dtype="int8").reshape(1, 4, 2, 2)
    assert np.array_equal(_run(mod, data), _run(out, data))
