"""``Forward``/``BackwardFoldScaleAxis`` and ``FoldScaleAxis`` on the Relay graph
(``transform/fold_scale_axis.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _conv(data: np.ndarray, weight: np.ndarray) -> np.ndarray:  # 1x1 kernels, NCHW
    return np.einsum("nchw,oc->nohw", data, weight[:, :, 0, 0])


def test_forward_moves_the_input_scale_into_the_weight_and_divides_the_bias():
    x, w = relay.var("x", shape=(1, 2, 3, 3)), relay.var("w", shape=(4, 2, 1, 1))
    b = relay.var("b", shape=(2, 1, 1))
    scale = np.array([0.5, 2.0], "float32").reshape(2, 1, 1)
    y = relay.nn.relu(relay.multiply(x, relay.const(scale))) + b
    mod = tvm.IRModule.from_expr(relay.Function([x, w, b], relay.nn.conv2d(y, w)))
    out = T.ForwardFoldScaleAxis()(mod)

    squeezed = relay.squeeze(relay.const(scale), [1, 2])
    bias = b / relay.expand_dims(squeezed, 1, 2)  # each use expands the scale anew, as in Relay
    body = relay.nn.conv2d(relay.nn.relu(x) + bias, w * relay.expand_dims(squeezed, 1, 2))
    tvm.ir.assert_structural_equal(out["main"], relay.Function([x, w, b], body))

    rng = np.random.default_rng(0)
    data, weight, bias = (rng.random(s, "float32") for s in [(1, 2, 3, 3), (4, 2, 1, 1), (2, 1, 1)])
    want = _conv(np.maximum(data * scale, 0) + bias, weight)
    np.testing.assert_allclose(_run(out, data, weight, bias), want, rtol=1e-5, atol=1e-6)


def test_backward_moves_the_output_scale_into_the_weight_and_the_bias():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    b = relay.var("b", shape=(3,))
    scale = relay.const(np.array([1.0, 2.0, 3.0], "float32"))
    y = relay.multiply(relay.nn.relu(relay.add(relay.nn.dense(x, w), b)), scale)
    out = T.BackwardFoldScaleAxis()(tvm.IRModule.from_expr(relay.Function([x, w, b], y)))

    body = relay.nn.relu(relay.nn.dense(x, w * relay.expand_dims(scale, 1)) + b * scale)
    tvm.ir.assert_structural_equal(out["main"], relay.Function([x, w, b], body))


def test_a_negative_scale_does_not_pass_a_relu_and_the_module_is_kept():
    x, w = relay.var("x", shape=(2, 4)), relay.var("w", shape=(3, 4))
    scale = relay.const(np.array([1.0, -2.0, 3.0, 1.0], "float32"))
    mod = tvm.IRModule.from_expr(
        relay.Function([x, w], relay.nn.dense(relay.nn.relu(x * scale), w))
    )
    assert T.ForwardFoldScaleAxis()(mod)["main"].same_as(mod["main"])
    assert isinstance(mod["main"], relay.Function)  # Relay-era code reads it back as Relay


def test_fold_scale_axis_folds_the_scaled_weight_to_a_constant_and_keeps_the_numbers():
    rng = np.random.default_rng(1)
    weight = rng.random((3, 4), "float32")
    scale = np.array([1.0, 2.0, 3.0], "float32")
    x = relay.var("x", shape=(2, 4))
    y = relay.nn.relu(relay.nn.dense(x, relay.const(weight))) * relay.const(scale)
    mod = tvm.IRModule.from_expr(relay.Function([x], y))
    with tvm.transform.PassContext(opt_level=3):
        out = T.FoldScaleAxis()(mod)
    assert T.FoldScaleAxis().info.name == "FoldScaleAxis"
    assert "multiply" not in out.script()  # the scale is in the folded weight
    data = rng.random((2, 4), "float32")
    want = np.maximum(data @ weight.T, 0) * scale
    np.testing.assert_allclose(_run(out, data), want, rtol=1e-5)
