"""The jitted kernel: destination-passing, and bad arguments raise instead of crashing."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import add3, dense_bias_relu


@pytest.fixture
def kernel(engine):
    return engine.jit(add3((10,)), "llvm")


def _out(n=10, dtype="float32"):
    return tvm.runtime.empty((n,), dtype, tvm.cpu())


def test_wrong_arity_names_the_convention(kernel):
    with pytest.raises(TypeError, match=r"1 input\(s\) followed by 1 output\(s\)"):
        kernel(tvm.runtime.tensor(np.ones(10, "float32")))


def test_wrong_shape_raises(kernel):
    with pytest.raises(ValueError, match="shape"):
        kernel(tvm.runtime.tensor(np.ones(10, "float32")), _out(11))


def test_wrong_dtype_raises(kernel):
    with pytest.raises(TypeError, match="dtype"):
        kernel(tvm.runtime.tensor(np.ones(10, "float32")), _out(10, "int32"))


def test_wrong_numpy_dtype_raises(kernel):
    with pytest.raises(TypeError, match="dtype"):
        kernel(np.ones(10, "float64"), np.zeros(10, "float32"))


def test_unaligned_numpy_input_does_not_crash(kernel):
    base = np.ones(1001, "float32")
    unaligned = base[1:11]
    out = np.zeros(10, "float32")
    kernel(unaligned, out)
    np.testing.assert_array_equal(out, 3 * np.ones(10, "float32"))


def test_non_contiguous_input_and_output(kernel):
    strided = np.arange(20, dtype="float32")[::2]
    out_base = np.zeros(20, "float32")
    out = out_base[::2]
    kernel(strided, out)
    np.testing.assert_array_equal(out, 3 * strided)
    assert np.all(out_base[1::2] == 0)


def test_read_only_output_is_refused(kernel):
    out = np.zeros(10, "float32")
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernel(np.ones(10, "float32"), out)


def test_unsupported_argument_type_is_named(kernel):
    with pytest.raises(
        TypeError, match=r"input argument 0 must be a tvm.runtime.Tensor or a numpy"
    ):
        kernel([1.0] * 10, np.zeros(10, "float32"))


def test_symbolic_mismatch_between_arguments_raises(engine):
    from _builders import sym

    kernel = engine.jit(dense_bias_relu(n=sym()), "llvm")
    x = np.ones((3, 8), "float32")
    w = np.ones((8, 16), "float32")
    b = np.ones(16, "float32")
    kernel(x, w, b, np.zeros((3, 16), "float32"))
    with pytest.raises(ValueError):
        kernel(x, w, b, np.zeros((4, 16), "float32"))


def test_kernel_registers_as_a_global_function(kernel):
    tvm.register_global_func("compile_engine_compat.test.kernel", kernel, override=True)
    f = tvm.get_global_func("compile_engine_compat.test.kernel")
    x = tvm.runtime.tensor(np.full(10, 2, "float32"))
    y = _out()
    f(x, y)
    np.testing.assert_array_equal(y.numpy(), np.full(10, 6, "float32"))
