"""Shadow mode: jit kernels that also run the modern path and raise on divergence."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax, topi

from compile_engine_compat import EquivalenceError, ShadowMismatchError, shadow_mode
from compile_engine_compat.runtime.kernel import Kernel
from compile_engine_compat.testing.shadow import SHADOW_ENV, ShadowKernel, enabled, from_env

R = relax.op


def _add_relu() -> relax.Function:
    return build(
        "main",
        [("x", (2, 3), "float32"), ("y", (3,), "float32")],
        lambda bb, x, y: R.nn.relu(bb.emit(R.add(x, y))),
    )


@pytest.mark.parametrize(
    ("value", "on"),
    [("1", True), ("true", True), (" YES ", True), ("on", True), ("0", False), ("", False)],
)
def test_the_environment_switch(value, on):
    assert from_env({SHADOW_ENV: value}) is on
    assert from_env({}) is False


def test_off_by_default_jit_returns_the_plain_kernel(engine):
    assert not enabled()
    assert type(engine.jit(_add_relu(), "llvm")) is Kernel


def test_shadowed_kernel_checks_and_behaves_like_the_kernel(engine):
    x = np.arange(6, dtype="float32").reshape(2, 3) - 3
    y = np.ones(3, "float32")
    with shadow_mode():
        kernel = engine.jit(_add_relu(), "llvm")
        assert isinstance(kernel, ShadowKernel)
        assert engine.jit(_add_relu(), "llvm") is kernel  # still memoized
        assert kernel.num_inputs == 2 and kernel.num_outputs == 1 and kernel.name
        out = np.empty((2, 3), "float32")
        kernel(x, y, out)
        np.testing.assert_allclose(out, np.maximum(x + y, 0))
        dev = tvm.cpu()
        out_t = tvm.runtime.empty((2, 3), "float32", dev)
        kernel(tvm.runtime.tensor(x, dev), tvm.runtime.tensor(y, dev), out_t)
        np.testing.assert_allclose(out_t.numpy(), out)
    assert not enabled()


def test_a_divergent_kernel_raises_shadow_mismatch_error(engine):
    previous = engine.op_lowering

    def broken(call, args, default):  # the shim computes add as subtract; the VM does not
        return topi.subtract(*args) if call.op.name == "relax.add" else default()

    engine.op_lowering = broken
    try:
        with shadow_mode():
            kernel = engine.jit(_add_relu(), "llvm")
            with pytest.raises(ShadowMismatchError) as info:
                kernel(
                    np.ones((2, 3), "float32"), np.ones(3, "float32"), np.empty((2, 3), "float32")
                )
    finally:
        engine.op_lowering = previous
        engine.clear()
    assert isinstance(info.value, EquivalenceError) and isinstance(info.value, AssertionError)
    report = str(info.value)
    assert "jit vs new path" in report and "R.nn.relu" in report and "new path output 0" in report


def test_the_environment_variable_turns_it_on_for_a_process(tmp_path):
    script = (
        "import warnings; warnings.simplefilter('ignore'); import sys; "
        f"sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r}); "
        "import numpy as np; from testing.test_shadow import _add_relu; "
        "from compile_engine_compat import compile_engine; "
        "k = compile_engine.get().jit(_add_relu(), 'llvm'); "
        "out = np.empty((2, 3), 'float32'); "
        "k(np.ones((2, 3), 'float32'), np.ones(3, 'float32'), out); print(type(k).__name__)"
    )
    env = {**os.environ, SHADOW_ENV: "1"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "ShadowKernel"
