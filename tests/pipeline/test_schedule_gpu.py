"""GPU targets: the dlight rules bind threads, and the kernels build into device code."""

from __future__ import annotations

import shutil

import pytest
import tvm

from pipeline.schedule_cases import CASES


def _cuda_can_build() -> bool:
    enabled = tvm.get_global_func("target.build.cuda", allow_missing=True) is not None
    return enabled and shutil.which("nvcc") is not None


@pytest.mark.skipif(not _cuda_can_build(), reason="TVM built without CUDA or no nvcc")
@pytest.mark.parametrize("name", ["matmul_bias_relu", "conv2d_relu", "softmax", "sum_last_axis"])
def test_cuda_lowering_is_thread_bound_and_builds_cuda_source(engine, name):
    cached = engine.lower(CASES[name][0](), "cuda")
    script = cached.funcs.script()
    assert "threadIdx.x" in script
    if name == "matmul_bias_relu":
        assert 'scope="shared' in script  # dlight's Matmul rule, not a plain thread binding
    lib = tvm.compile(cached.funcs, target="cuda")
    source = lib.mod.imports[0].inspect_source()
    assert "__global__" in source
