"""TVM 0.19's ``tvm.testing`` FFI and pool helpers, and the other ``tvm.*`` names served beside
them (the deprecated device aliases, ``tvm.runtime``'s FFI classes, ``tvm._ffi.base``'s error
text), under ``install()``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import compile_engine_compat
from compile_engine_compat.surfaces.import_alias import installed as alias_installed
from compile_engine_compat.tvm_legacy.ffi.base import c2pyerror, py2cerror


@pytest.fixture(scope="module")
def alias():
    was = alias_installed()
    compile_engine_compat.install()
    yield
    if not was:
        compile_engine_compat.uninstall()


def test_the_ffi_helpers_cross_into_cpp_and_back(alias):
    import tvm.testing

    assert tvm.testing.identity_cpp(5) == 5 and tvm.testing.call_cpp_py_ffi("x") == "x"
    assert tvm.testing.call_cpp_ffi(3) == 3 and tvm.testing.nop(1, "a") is None
    tvm.testing.register_ffi()
    assert tvm.testing.call_py_ffi([1, 2]) == [1, 2]
    with pytest.raises(ValueError, match="not equal"):
        tvm.testing.test_check_eq_callback("not equal")(1, 2)
    with pytest.raises(tvm.error.TVMError, match="boom"):
        tvm.testing.test_raise_error_callback("boom")()
    assert tvm.testing.test_wrap_callback(lambda: 7)() == 7
    assert tvm.testing.device_test(tvm.cpu(0), 1, 0) == tvm.cpu(0)
    with pytest.raises(ValueError, match=r"is not \(2, 0\)"):
        tvm.testing.device_test(tvm.cpu(0), 2, 0)
    tvm.testing.initializer(1, "b", None)
    assert tvm.testing.after_initializer() == (1, "b", None)
    assert tvm.testing.fast_summation(100) == tvm.testing.slow_summation(100) == 5050


def test_generate_ref_data_runs_the_module(alias):
    import tvm.testing
    from tvm import relay

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x)))
    out = tvm.testing.generate_ref_data(mod, {"x": np.array([-1.0, 2.0], "float32")})
    np.testing.assert_array_equal(out["output"], [0.0, 2.0])


def test_device_aliases_warn_naming_themselves_and_the_ffi_classes(alias):
    import tvm.runtime.ndarray

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert tvm.gpu(0) == tvm.cuda(0) and tvm.runtime.cl(1) == tvm.opencl(1)
        assert tvm.runtime.ndarray.mtl(0) == tvm.metal(0)
    assert [str(w.message).split()[0] for w in caught] == ["tvm.gpu", "tvm.cl", "tvm.mtl"]
    assert (
        tvm.runtime.ndarray.webgpu(0).dlpack_device_type()
        == tvm.device("webgpu").dlpack_device_type()
    )
    assert isinstance(tvm.get_global_func("testing.nop"), tvm.runtime.PackedFunc)
    assert isinstance(tvm.runtime.convert_to_object([1]), tvm.runtime.ObjectTypes)
    assert tvm.runtime.vm.convert is tvm.runtime.convert


def test_error_text_translates_both_ways():
    cpp = "ValueError: bad value\nStack trace:\n  0: inner\n        at a.cc:1\n  1: outer\n"
    py, kind = c2pyerror(cpp)
    assert kind == "ValueError"
    frames = "  1: outer\n  0: inner\n        at a.cc:1\n"
    assert py == f"Traceback (most recent call last):\n{frames}ValueError: bad value"
    assert py2cerror(py) == cpp.rstrip("\n")
    assert c2pyerror("no kind here") == ("no kind here", None)
