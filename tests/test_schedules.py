"""compile_engine_compat.schedules: the shim's schedules inside tvm.compile, results unchanged."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build, dense_bias_relu
from hypothesis import given, settings
from hypothesis import strategies as st
from tvm import relax, tirx

from compile_engine_compat import schedules
from compile_engine_compat.testing import input_arrays, relax_functions
from compile_engine_compat.testing.oracle import PATH_TOLERANCES, compare_all

R = relax.op


def conv_block() -> relax.Function:
    return build(
        "main",
        [
            ("x", (1, 16, 14, 14), "float32"),
            ("w", (16, 16, 3, 3), "float32"),
            ("b", (1, 16, 1, 1), "float32"),
        ],
        lambda bb, x, w, b: R.nn.relu(bb.emit(R.add(bb.emit(R.nn.conv2d(x, w, padding=1)), b))),
    )


def _run(func: Any, arrays: list[np.ndarray], pipeline: Any) -> list[np.ndarray]:
    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    ex = tvm.compile(mod, "llvm", relax_pipeline=pipeline)
    vm = relax.VirtualMachine(ex, tvm.cpu())
    return _numpy(vm["main"](*[tvm.runtime.tensor(a) for a in arrays]))


def _loops(func: tirx.PrimFunc) -> str:
    return str(func.script())


def _numpy(value: Any) -> list[np.ndarray]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value.numpy()]
    return [array for item in value for array in _numpy(item)]


@pytest.mark.parametrize("make", [dense_bias_relu, conv_block], ids=["dense", "conv2d"])
def test_results_equal_the_default_pipeline_and_numpy(make):
    func = make() if make is conv_block else make(64, 64, 64)
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal([int(d) for d in p.ty.shape]).astype("float32") for p in func.params
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the modern path never warns
        fast = _run(func, arrays, schedules.relax_pipeline("llvm"))
    plain = _run(func, arrays, "default")
    # No rule reorders a reduction: the scheduled kernels give the very same bits.
    np.testing.assert_array_equal(fast[0], plain[0])
    if make is dense_bias_relu:
        x, w, b = arrays
        np.testing.assert_allclose(fast[0], np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


def test_the_pass_schedules_fused_kernels_and_leaves_scheduled_ones_alone():
    mod = tvm.IRModule({"main": dense_bias_relu(256, 256, 256).with_attr("global_symbol", "main")})
    target = tvm.target.Target("llvm")
    with target:
        fused = tvm.transform.Sequential(
            [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
             relax.transform.FuseOps(), relax.transform.FuseTIR()]
        )(mod)  # fmt: skip
    prims = {gv: f for gv, f in fused.functions.items() if isinstance(f, tirx.PrimFunc)}
    assert prims and all("T.parallel" not in _loops(f) for f in prims.values())
    scheduled = schedules.DefaultSchedules(target)(fused)
    for gvar in prims:
        assert "T.parallel" in _loops(scheduled[gvar])
        assert "T.vectorized" in _loops(scheduled[gvar])
    # A PrimFunc marked scheduled (by dlight, by hand) is left as it is.
    gvar, func = next(iter(prims.items()))
    fused[gvar] = func.with_attr("tirx.is_scheduled", True)
    assert schedules.DefaultSchedules(target)(fused)[gvar].same_as(fused[gvar])


def test_gpu_kinds_keep_their_own_default_pipeline_and_a_target_is_needed():
    assert isinstance(
        schedules.relax_pipeline({"kind": "cuda", "arch": "sm_80"}), tvm.transform.Pass
    )
    with pytest.raises(ValueError, match="target is needed"):
        schedules.relax_pipeline()


@pytest.mark.property
@settings(max_examples=10)
@given(st.data())
def test_pipeline_computes_what_the_default_pipeline_computes(data):
    func = data.draw(relax_functions(max_ops=4), label="func")
    arrays = list(data.draw(input_arrays(func), label="inputs"))
    fast = _run(func, arrays, schedules.relax_pipeline("llvm"))
    plain = _run(func, arrays, "default")
    problems = compare_all(fast, plain, ("pipeline", "default"), PATH_TOLERANCES)
    assert not problems, "\n".join(problems)
