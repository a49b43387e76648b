"""relay.frontend.from_onnx -> relay.build -> export_library -> load_module -> GraphModule,
against onnxruntime, in both freeze_params modes."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from _relay_models import (
    CONV_SHAPE,
    MLP_SHAPE,
    onnx_conv_net,
    onnx_mlp,
    onnxruntime_output,
)

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend import FrontendOptionError
from compile_engine_compat.relay.frontend.onnx import UnknownInputError
from compile_engine_compat.tvm_legacy import graph_executor

CASES = {
    "conv": (onnx_conv_net, "input.1", CONV_SHAPE),
    "mlp": (onnx_mlp, "data", MLP_SHAPE),
}


@pytest.mark.parametrize("freeze_params", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_from_onnx_build_export_reload_matches_onnxruntime(
    case, freeze_params, tmp_path, installed_alias
):
    make, input_name, shape = CASES[case]
    model = make()
    data = np.random.default_rng(1).standard_normal(shape).astype("float32")
    expected = onnxruntime_output(model, {input_name: data})

    mod, params = relay.frontend.from_onnx(model, {input_name: shape}, freeze_params=freeze_params)
    assert bool(params) is not freeze_params  # the initializers come back as params, or none
    lib = relay.build(mod, target="llvm", params=params)
    path = str(tmp_path / "deploy.so")
    lib.export_library(path)
    loaded = tvm.runtime.load_module(path)
    module = graph_executor.GraphModule(loaded["default"](tvm.cpu()))
    module.set_input(input_name, data)  # the graph's own spelling ("input.1")
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)

    # The in-memory module gives the same numbers.
    in_memory = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    in_memory.set_input(input_name, data)
    in_memory.run()
    np.testing.assert_array_equal(in_memory.get_output(0).numpy(), module.get_output(0).numpy())


def test_unfrozen_params_are_named_initializers_and_set_input_takes_them():
    model = onnx_mlp()
    data = np.random.default_rng(2).standard_normal(MLP_SHAPE).astype("float32")
    mod, params = relay.frontend.from_onnx(model, {"data": MLP_SHAPE}, freeze_params=False)
    assert sorted(params) == ["b1", "b2", "w1", "w2"]
    assert [p.name for p in mod["main"].params] == ["data", "w1", "b1", "w2", "b2"]
    lib = relay.build(mod, target="llvm")  # params not bound: set them as inputs
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(**params)
    module.set_input("data", data)
    module.run()
    expected = onnxruntime_output(model, {"data": data})
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_benchmark_and_time_evaluator_give_positive_times():
    mod, params = relay.frontend.from_onnx(onnx_mlp(), {"data": MLP_SHAPE})
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    data = np.ones(MLP_SHAPE, "float32")
    result = module.benchmark(tvm.cpu(), repeat=3, number=2, data=data)
    assert len(result.results) == 3 and min(result.results) > 0 and result.mean > 0
    assert "mean (ms)" in str(result)
    timed = module.module.time_evaluator("run", tvm.cpu(), number=2, repeat=2)()
    assert len(timed.results) == 2 and timed.mean > 0
    by_lib = lib.time_evaluator("default", tvm.cpu(), number=2, repeat=2)(data)
    assert by_lib.mean > 0
    end_to_end = module.benchmark(tvm.cpu(), repeat=2, number=1, end_to_end=True, data=data)
    assert len(end_to_end.results) == 2 and end_to_end.mean > 0


def test_relay_only_options_are_refused_not_dropped():
    with pytest.raises(FrontendOptionError, match=r"convert_config.*'use_nt_dense'"):
        relay.frontend.from_onnx(onnx_mlp(), convert_config={"use_nt_dense": True})
    with pytest.raises(FrontendOptionError, match="export_node_renamed_model_path"):
        relay.frontend.from_onnx(onnx_mlp(), export_node_renamed_model_path="renamed.onnx")


def test_a_shape_for_an_input_the_graph_lacks_is_refused_as_tvm_019_asserted():
    with pytest.raises(UnknownInputError, match=r"\['Z'\].*its inputs: \['data'\]") as caught:
        relay.frontend.from_onnx(onnx_mlp(), {"Z": MLP_SHAPE})
    assert isinstance(caught.value, AssertionError)  # what TVM 0.19's importer raised


def test_use_nt_batch_matmul_is_accepted_and_changes_no_value():
    # TVM 0.19's only convert_config key chose the form of Relay's batch matmul, not its values.
    plain, _ = relay.frontend.from_onnx(onnx_mlp(), {"data": MLP_SHAPE})
    for flag in (True, False):
        mod, _ = relay.frontend.from_onnx(
            onnx_mlp(), {"data": MLP_SHAPE}, convert_config={"use_nt_batch_matmul": flag}
        )
        tvm.ir.assert_structural_equal(mod, plain)


def test_initializers_listed_as_inputs_are_weights_as_tvm_019():
    # ONNX before IR 4 listed each initializer among the graph's inputs too.
    from onnx import TensorProto, helper

    node = helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode="constant")
    graph = helper.make_graph(
        [node],
        "pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
         helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
         helper.make_tensor_value_info("value", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        initializer=[helper.make_tensor("pads", TensorProto.INT64, [4], [0, 1, 0, 0]),
                     helper.make_tensor("value", TensorProto.FLOAT, [1], [5.0])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    mod, params = relay.frontend.from_onnx(model, {"x": (2, 2)}, freeze_params=False)
    assert [p.name for p in mod["main"].params] == ["x", "pads", "value"]
    assert sorted(params) == ["pads", "value"]
    assert [p.name for p in model.graph.input] == ["x", "pads", "value"]  # the caller's model


def test_from_onnx_warns_naming_the_relax_importer():
    from compile_engine_compat import CompileEngineDeprecationWarning

    with pytest.warns(CompileEngineDeprecationWarning, match="relax.frontend.onnx"):
        relay.frontend.from_onnx(onnx_mlp())
