"""GraphModule's TVM 0.19 method set: input info and index, dtype conversion, params bytes,
zero-copy inputs and outputs, the module's functions by name, and ``create``."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi

from compile_engine_compat import relay
from compile_engine_compat.relay.backend.executor_factory import (
    AOTExecutorFactoryModule,
    ExecutorFactoryModule,
    GraphExecutorFactoryModule,
)
from compile_engine_compat.tvm_legacy import graph_executor

X = np.arange(6, dtype="float32").reshape(2, 3)
W = np.full((2, 3), 2.0, "float32")


def _lib(params=None):
    x, w = relay.var("x", shape=(2, 3)), relay.var("w", shape=(2, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.multiply(x, w)))
    return relay.build(mod, target="llvm", params=params)


@pytest.fixture(scope="module")
def lib():
    return _lib()


@pytest.fixture
def gmod(lib):
    return graph_executor.GraphModule(lib["default"](tvm.cpu()))


def test_build_returns_tvm_019_factory_class(lib):
    assert isinstance(lib, GraphExecutorFactoryModule)
    assert isinstance(lib, ExecutorFactoryModule)
    assert lib.get_executor_config() == lib.get_graph_json()
    assert lib.get_devices() == [] and lib.libmod_name == "default"
    graph, built, params = lib
    assert graph == lib.get_graph_json() and built is lib.get_lib() and params == {}
    with pytest.raises(NotImplementedError, match="GraphExecutorFactoryModule"):
        AOTExecutorFactoryModule()


def test_get_input_info_and_index(gmod):
    shape_dict, dtype_dict = gmod.get_input_info()
    assert isinstance(shape_dict, tvm_ffi.Map) and isinstance(dtype_dict, tvm_ffi.Map)
    assert shape_dict["x"] == tvm.runtime.ShapeTuple([2, 3])
    assert dtype_dict["w"] == "float32"
    assert sorted(shape_dict.keys()) == ["w", "x"]
    assert gmod.get_input_index("w") == 1 and gmod.get_input_index("nope") == -1


def test_bound_params_are_not_inputs():
    bound = graph_executor.GraphModule(_lib({"w": W})["default"](tvm.cpu()))
    shape_dict, _ = bound.get_input_info()
    assert list(shape_dict.keys()) == ["x"]


def test_set_input_converts_float64_as_tvm_019_copyfrom(gmod):
    gmod.set_input("x", X.astype("float64"))
    gmod.set_input("w", W.tolist())  # any array-like, as copyfrom took it
    assert gmod.get_input("x").dtype == "float32"
    gmod.run()
    np.testing.assert_array_equal(gmod.get_output(0).numpy(), X * W)


def test_set_input_of_a_python_scalar_keeps_a_scalar_input_0d():
    # copyfrom checked the shape, then copied into the input's own 0-d array: a Python int for
    # a float32 scalar input stays 0-d (np.ascontiguousarray would have made it shape (1,)).
    x, y = relay.var("x", shape=(), dtype="float32"), relay.var("y", shape=(2,))
    lib = relay.build(tvm.IRModule.from_expr(relay.Function([x, y], relay.add(x, y))), "llvm")
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("x", 3)
    module.set_input("y", [1.0, 2.0])
    assert module.get_input("x").shape == () and module.get_input("x").dtype == "float32"
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), [4.0, 5.0])


def test_set_input_converts_a_tensor_of_another_dtype_by_value(gmod):
    gmod.set_input("x", tvm.runtime.tensor(X.astype("int32")))  # TVM 0.19 copied the bits
    np.testing.assert_array_equal(gmod.get_input("x").numpy(), X)
    assert gmod.get_input("x").dtype == "float32"


def test_load_params_and_share_params_on_saved_bytes(lib):
    blob = relay.save_param_dict({"w": W, "unknown": X})
    first = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    first.load_params(blob)  # "unknown" is skipped, as TVM 0.19 skipped it
    second = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    second.share_params(first, blob)
    assert second.get_input("w") is first.get_input("w")  # one buffer
    second.run(x=X)
    np.testing.assert_array_equal(second.get_output(0).numpy(), X * W)
    first.set_input("w", W * 3)  # shared: the second module sees it
    second.run(x=X)
    np.testing.assert_array_equal(second.get_output(0).numpy(), X * W * 3)


def test_zero_copy_input_aliases_and_output_is_written(gmod):
    x = tvm.runtime.tensor(X)
    gmod.set_input_zero_copy("x", x)
    gmod.set_input_zero_copy(w=tvm.runtime.tensor(W), unknown=x)
    assert gmod.get_input("x") is x
    out = tvm.runtime.empty((2, 3), "float32")
    gmod.set_output_zero_copy(0, out)
    gmod.run()
    np.testing.assert_array_equal(out.numpy(), X * W)
    x.copyfrom(X + 1)  # no copy was made: the next run reads the new values
    gmod.run()
    np.testing.assert_array_equal(out.numpy(), (X + 1) * W)
    with pytest.raises(TypeError, match="set_input to copy"):
        gmod.set_input_zero_copy("x", X)
    with pytest.raises(ValueError, match="dtype int32 for an input of dtype float32"):
        gmod.set_input_zero_copy("x", tvm.runtime.tensor(X.astype("int32")))


def test_module_functions_by_name_and_get_output_out(gmod):
    gmod["set_input"]("x", X)
    gmod.module["set_input_zero_copy"](1, tvm.runtime.tensor(W))
    gmod["run"]()
    assert gmod["get_num_outputs"]() == 1 and gmod.get_num_inputs() == 2
    out = gmod.get_output(0, tvm.runtime.empty((2, 3), "float32"))
    np.testing.assert_array_equal(out.numpy(), X * W)
    got = gmod.get_input(0, tvm.runtime.empty((2, 3), "float32"))
    np.testing.assert_array_equal(got.numpy(), X)
    with pytest.raises(AttributeError, match="no function 'nope'"):
        gmod["nope"]


def test_debug_get_output_is_refused_naming_a_route(gmod):
    with pytest.raises(NotImplementedError, match="debug_executor"):
        gmod.debug_get_output(0, tvm.runtime.empty((2, 3), "float32"))


def test_create_from_graph_json_keeps_input_info(lib):
    module = graph_executor.create(lib.get_graph_json(), lib.get_lib(), [tvm.cpu(0)])
    assert module.get_input_info()[0]["w"] == tvm.runtime.ShapeTuple([2, 3])
    module.set_input(x=X.astype("float64"), w=W)
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), X * W)
    with pytest.raises(ValueError, match="Device"):
        graph_executor.create(lib.get_graph_json(), lib.get_lib(), "cpu")


def test_get_device_as_tvm_019():
    devices, rpc, type_id = graph_executor.get_device(None, tvm.cpu(0))
    assert devices == [tvm.cpu(0)] and rpc == 0 and type_id == [1, 0]
    with pytest.raises(ValueError, match="list of Device"):
        graph_executor.get_device(None, [])
