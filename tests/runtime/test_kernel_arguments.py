"""Kernel arguments TVM does not check: misaligned tensors and aliasing (issue 17 item 1, issue 18
item 4). Never a crash, never a silently wrong result."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tvm
import tvm_ffi
from _builders import add3, build
from tvm import relax

PROBE = Path(__file__).resolve().parents[1] / "_tensor_probe.py"


def test_misaligned_dlpack_tensors_at_every_offset_compute_right():
    # Crashed with SIGSEGV before: out of process, so a regression fails here instead of killing
    # the run. Offsets 1-63 as input, as output, and both at once; and the strides, byte offsets
    # and devices TVM itself refuses with a ValueError.
    root = str(PROBE.parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run(
        [sys.executable, str(PROBE)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr[-3000:]}"
    assert result.stdout.strip().endswith("0 wrong")


@pytest.fixture
def matmul(engine):
    func = build(
        "main",
        [("a", (64, 64), "float32"), ("b", (64, 64), "float32")],
        lambda bb, a, b: relax.op.matmul(a, b),
    )
    return engine.jit(func, "llvm")


def _aligned(values):
    """A copy of ``values`` (float32) whose data starts on a 64-byte boundary, as TVM's own."""
    values = np.asarray(values, "float32")
    buffer = np.empty(values.size + 16, "float32")
    start = (-buffer.ctypes.data) % 64 // 4
    array = buffer[start : start + values.size].reshape(values.shape)
    array[...] = values
    assert array.ctypes.data % 64 == 0
    return array


def _operands():
    rng = np.random.default_rng(0)
    return rng.standard_normal((2, 64, 64), dtype="float32")


@pytest.mark.parametrize("aliased", [0, 1], ids=["out-is-a", "out-is-b"])
def test_matmul_into_one_of_its_input_tensors_is_right(matmul, aliased):
    a, b = _operands()
    expected = a @ b
    for _ in range(2):  # the first call, then the fast path
        tensors = [tvm.runtime.tensor(a), tvm.runtime.tensor(b)]
        matmul(*tensors, tensors[aliased])
        np.testing.assert_allclose(tensors[aliased].numpy(), expected, rtol=1e-4, atol=1e-4)


def test_matmul_into_another_tensor_over_the_same_memory_is_right(matmul):
    a, b = _operands()
    expected = a @ b
    for _ in range(2):
        memory = _aligned(a)
        # Two distinct Tensor objects over one NumPy buffer (DLPack): equal data pointers.
        matmul(tvm_ffi.from_dlpack(memory), tvm.runtime.tensor(b), tvm_ffi.from_dlpack(memory))
        np.testing.assert_allclose(memory, expected, rtol=1e-4, atol=1e-4)


def test_a_partly_overlapping_output_is_right(engine):
    kernel = engine.jit(add3((32,)), "llvm")
    x = np.arange(32, dtype="float32")
    for _ in range(2):
        memory = _aligned(np.concatenate([x, np.zeros(16, "float32")]))
        # The output starts 16 elements (64 bytes) into the input: both aligned, half shared.
        kernel(tvm_ffi.from_dlpack(memory[:32]), tvm_ffi.from_dlpack(memory[16:]))
        np.testing.assert_array_equal(memory[16:], 3 * x)


def test_adjacent_tensors_over_one_buffer_compute_right(engine):
    kernel = engine.jit(add3((16,)), "llvm")
    memory = _aligned(np.arange(32))
    x, out = tvm_ffi.from_dlpack(memory[:16]), tvm_ffi.from_dlpack(memory[16:])
    for _ in range(2):
        kernel(x, out)
    np.testing.assert_array_equal(memory[16:], 3 * np.arange(16, dtype="float32"))


def test_matmul_into_its_numpy_input_is_right(matmul):
    a, b = _operands()
    expected = a @ b
    matmul(a, b, a)
    np.testing.assert_allclose(a, expected, rtol=1e-4, atol=1e-4)


def test_two_outputs_over_the_same_memory_are_refused(engine):
    func = build(
        "main",
        [("x", (16,), "float32")],
        lambda bb, x: (relax.op.add(x, x), relax.op.multiply(x, x)),
    )
    kernel = engine.jit(func, "llvm")
    x = tvm.runtime.tensor(np.ones(16, "float32"))
    kernel(x, tvm.runtime.empty((16,), "float32"), tvm.runtime.empty((16,), "float32"))
    shared = tvm.runtime.empty((16,), "float32")
    for outputs in [(shared, shared), (np.zeros(16, "float32"),) * 2]:
        with pytest.raises(
            ValueError, match=r"output 0 \(argument 1\) and output 1 \(argument 2\)"
        ):
            kernel(x, *outputs)
