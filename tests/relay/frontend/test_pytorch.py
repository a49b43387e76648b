"""relay.frontend.from_pytorch: traced and scripted ScriptModules, an nn.Module, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tvm

pytest.importorskip("torch")
pytest.importorskip("onnx")

import torch
from _relay_models import CONV_SHAPE, torch_conv_net

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend import FrontendOptionError
from compile_engine_compat.tvm_legacy import graph_executor


def _run(mod, params, name, data):
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(name, data)
    module.run()
    return module.get_output(0).numpy()


def _data():
    return np.random.default_rng(5).standard_normal(CONV_SHAPE).astype("float32")


def _expected(net, data):
    with torch.no_grad():
        return net(torch.from_numpy(data)).numpy()


def test_traced_module_matches_torch_and_keeps_state_dict_names():
    net = torch_conv_net()
    traced = torch.jit.trace(net, torch.zeros(CONV_SHAPE))
    mod, params = relay.frontend.from_pytorch(traced, [("data", CONV_SHAPE)])
    assert mod["main"].params[0].name == "data"
    assert set(params) <= set(net.state_dict()) and "fc.weight" in params
    data = _data()
    np.testing.assert_allclose(_run(mod, params, "data", data), _expected(net, data), atol=1e-5)


def test_nn_module_goes_through_torch_export_and_matches_torch():
    net = torch_conv_net()
    mod, params = relay.frontend.from_pytorch(net, [("input0", (CONV_SHAPE, "float32"))])
    assert mod["main"].params[0].name == "input0"
    assert {"conv.weight", "conv.bias", "fc.weight", "fc.bias"} <= set(params)
    data = _data()
    np.testing.assert_allclose(_run(mod, params, "input0", data), _expected(net, data), atol=1e-5)


def test_scripted_module_without_control_flow_exports():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) * 2.0

    scripted = torch.jit.script(Scale())
    mod, params = relay.frontend.from_pytorch(scripted, [("x", (2, 3))])
    data = np.array([[-1, 0, 1], [2, -3, 4]], "float32")
    np.testing.assert_allclose(_run(mod, params, "x", data), np.maximum(data, 0) * 2.0)


def test_a_module_the_exporter_rejects_names_torch_export():
    class Unsupported(torch.nn.Module):
        def forward(self, x):
            return torch.linalg.svd(x)[0]  # the TorchScript ONNX exporter has no svd

    scripted = torch.jit.script(Unsupported())
    with pytest.raises(FrontendOptionError, match=r"torch\.export"):
        relay.frontend.from_pytorch(scripted, [("x", (3, 3))])


def test_relay_only_options_and_bad_inputs_are_refused():
    net = torch_conv_net()
    with pytest.raises(FrontendOptionError, match="custom_convert_map"):
        relay.frontend.from_pytorch(net, [("x", CONV_SHAPE)], custom_convert_map={"aten::relu": 1})
    relay.frontend.from_pytorch(net, [("x", CONV_SHAPE)], custom_convert_map={})  # asks nothing
    with pytest.raises(TypeError, match="input_infos"):
        relay.frontend.from_pytorch(net, "x")
    with pytest.raises(ValueError, match="negative"):
        relay.frontend.from_pytorch(net, [("x", (1, -3, 8, 8))])
    with pytest.raises(TypeError, match=r"ScriptFunction or a torch\.nn\.Module"):
        relay.frontend.from_pytorch(object(), [("x", CONV_SHAPE)])


@pytest.mark.warnings_visible
@pytest.mark.parametrize("route", ["traced", "nn_module"])
def test_the_internal_export_lets_no_torch_warning_through(route):
    # torch warns about its own exporters ("no signature found ... skipping
    # _decide_input_format", pytree deprecations): the shim's conversion, not the caller's.
    net = torch_conv_net()
    model = torch.jit.trace(net, torch.zeros(CONV_SHAPE)) if route == "traced" else net
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        relay.frontend.from_pytorch(model, [("data", CONV_SHAPE)])
    assert [type(w.message).__name__ for w in caught] == ["CompileEngineDeprecationWarning"]


class _Double(torch.nn.Module):
    def forward(self, x):
        return x * 2


def test_input_dtypes_come_from_the_traced_graph_as_tvm_019():
    traced = torch.jit.trace(_Double(), torch.ones(2, 2, dtype=torch.float64))
    mod, params = relay.frontend.from_pytorch(traced, [("x", (2, 2))])
    assert mod["main"].params[0].ty.dtype == "float64"
    out = _run(mod, params, "x", np.full((2, 2), 1.5))
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.full((2, 2), 3.0))
    # An explicit dtype still wins, as in TVM 0.19.
    mod, _ = relay.frontend.from_pytorch(traced, [("x", ((2, 2), "float64"))])
    assert mod["main"].params[0].ty.dtype == "float64"


@torch.jit.script
def _add_until(x: torch.Tensor) -> torch.Tensor:
    for _ in range(int(x.sum().item())):
        x = x + 1
    return x


class _Looping(torch.nn.Module):
    def forward(self, x):
        return _add_until(x)


def test_a_traced_loop_routes_to_torch_export_in_a_typed_error():
    from compile_engine_compat.relay.frontend.common import UnsupportedModelError

    traced = torch.jit.trace(_Looping(), torch.ones(3, 4))
    with pytest.raises(UnsupportedModelError, match=r"prim::Loop.*from_exported_program") as info:
        relay.frontend.from_pytorch(traced, [("x", (3, 4))])
    assert isinstance(info.value, tvm.error.OpNotImplemented)  # Relay's catch still catches


def test_a_traced_function_imports_with_its_graphs_dtypes():
    def scale_add(x, y):
        return x + y * 2

    traced = torch.jit.trace(scale_add, (torch.ones(2, dtype=torch.float64), torch.ones(2)))
    mod, params = relay.frontend.from_pytorch(traced, [("x", (2,)), ("y", (2,))])
    assert [p.ty.dtype for p in mod["main"].params] == ["float64", "float32"]
    assert params == {}


def test_an_eager_quantized_module_runs_in_integers_and_matches_torch():
    from torch.ao import quantization

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quant, self.dequant = quantization.QuantStub(), quantization.DeQuantStub()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.relu = torch.nn.ReLU()
            self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.fc = torch.nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            x = self.depthwise(self.relu(self.conv(self.quant(x))))
            return self.dequant(self.fc(torch.flatten(x, 1)))

    torch.manual_seed(0)
    net = Net().eval()
    net.qconfig = quantization.get_default_qconfig("fbgemm")
    quantization.prepare(net, inplace=True)
    for _ in range(4):
        net(torch.randn(1, 3, 8, 8))
    quantization.convert(net, inplace=True)
    data = torch.randn(1, 3, 8, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(net, data)
    mod, params = relay.frontend.from_pytorch(traced, [("input", (1, 3, 8, 8))])
    # Both convolutions and the linear layer accumulate 8-bit operands in int32 (not float QDQ).
    assert mod.script().count('out_dtype="int32"') == 3
    out = _run(mod, params, "input", data.numpy())
    expected = net(data).numpy()
    # torch's output is quantized: compare to one quantum of it.
    quantum = float(getattr(net.fc, "scale"))  # noqa: B009 (a quantized Linear's output scale)
    np.testing.assert_allclose(out, expected, atol=quantum)
    assert np.unique(expected).size > 3
