"""Pooling and mean with a symbolic batch (``relay.Any()``): the register-tiled rule, as at a
static batch, and the same results as TVM's default pipeline and NumPy at batch 1 and 3."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from _builders import build, sym
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_engine_compat.testing import assert_matches_new_path
from pipeline.schedule_cases import F32, R

pytestmark = pytest.mark.property


def examples(factor: float) -> int:
    """The current profile's max_examples scaled by this property's relative cost."""
    return max(2, int(settings().max_examples * factor))


def _pool(op: str, channels: int, size: int, kernel: int, stride: int, pad: int) -> Any:
    """``op`` over a symbolic batch of NHWC ``size`` x ``size`` images of ``channels``."""

    def body(bb: Any, x: Any) -> Any:
        if op == "mean":
            return R.mean(x, axis=[1, 2], keepdims=True)
        pool = R.nn.max_pool2d if op == "max" else R.nn.avg_pool2d
        return pool(x, (kernel, kernel), (stride, stride), (pad,) * 4, layout="NHWC")

    return build("main", [("x", (sym(), size, size, channels), F32)], body)


# The engine fixture (cleared once) serves every example: each draws its own function.
@settings(max_examples=examples(0.15), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    op=st.sampled_from(["max", "avg", "mean"]),
    channels=st.sampled_from([8, 16, 24, 64]),
    size=st.integers(4, 14),
    kernel=st.sampled_from([2, 3]),
    stride=st.sampled_from([1, 2]),
    pad=st.sampled_from([0, 1]),
    seed=st.integers(0, 2**16),
)
def test_pooling_and_mean_over_a_symbolic_batch_are_tiled_and_match(
    engine, op, channels, size, kernel, stride, pad, seed
):
    func = _pool(op, channels, size, kernel, stride, pad)
    script = engine.lower(func, "llvm").funcs.script()
    assert 'scope="local"' in script  # the register tile, as at a static batch
    assert "T.parallel" in script
    rng = np.random.default_rng(seed)
    for batch in (1, 3):
        x = rng.standard_normal((batch, size, size, channels)).astype(F32)
        assert_matches_new_path(func, x)  # TVM's default pipeline, and NumPy where it has one
    if op == "mean":  # NumPy, stated here too: the mean is simple enough to write out
        out = np.empty((3, 1, 1, channels), F32)
        engine.jit(func, "llvm")(x, out)
        np.testing.assert_allclose(out, x.mean(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
