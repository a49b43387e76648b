"""Counterexamples the property suite found, kept as plain regression tests.

Shim bugs (fixed) pass; TVM bugs (both paths fail alike) are strict xfails naming the upstream
behaviour, so the day TVM fixes them the suite says so.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat import LoweringError
from compile_engine_compat.testing import assert_matches_new_path

R = relax.op


def test_zero_dim_numpy_input_to_jit_kernel(engine):
    # Found by the property suite: np.ascontiguousarray turned a 0-d input into shape (1,),
    # so the kernel rejected it ("Mismatched x.ndim").
    func = build("main", [("x", (), "float32")], lambda bb, x: R.add(x, x))
    kernel = engine.jit(func, "llvm")
    out = np.empty((), "float32")
    kernel(np.array(2.5, "float32"), out)
    assert out == np.float32(5.0)


def test_tensor_constant_feeding_argmax_keeps_int64(engine):
    # Found by the property suite: constant placeholders had int32 dims, and topi.argmax takes
    # its index dtype from them, so the shim returned int32 where Relax (and the VM) say int64.
    const = relax.const(np.array([1.5], "float32"), "float32")
    func = build(
        "main",
        [("x", (), "float32")],
        lambda bb, x: R.argmax(bb.emit(R.minimum(const, x)), axis=None, keepdims=True),
    )
    cached = engine.lower(func, "llvm")
    assert [str(t.dtype) for t in cached.outputs] == ["int64"]
    assert_matches_new_path(func, np.array(0.5, "float32"))


def test_split_into_one_section_is_a_tensor_not_a_tuple(engine):
    # Found by the property suite: topi.split returns a one-tensor list, which Relax's call_te
    # types as that tensor; the tracer kept the list and lower() failed.
    func = build("main", [("x", (2, 3), "float32")], lambda bb, x: R.split(x, 1, axis=1))
    cached = engine.lower(func, "llvm")
    assert len(cached.outputs) == 1
    assert_matches_new_path(func, np.arange(6, dtype="float32").reshape(2, 3))


@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_take_with_int32_indices_from_a_concat(engine, dtype):
    # Found by the thorough profile: inlining the concat into a take with int32 constant indices
    # made s_tir's compute_inline raise TypeError ("mismatched types int32 vs int64"), which
    # inline_injective did not catch, so lower() failed where the new path works.
    index = relax.const(np.array([1, 0], "int32"), "int32")
    func = build(
        "main",
        [("x", (1,), dtype)],
        lambda bb, x: R.take(
            bb.emit(
                R.concat(
                    [x, bb.emit(R.logical_not(x) if dtype == "bool" else R.negative(x))], axis=0
                )
            ),
            index,
            axis=0,
        ),
    )
    assert_matches_new_path(func, np.ones(1, dtype))


def test_argmax_of_a_conv1d_output_is_int64(engine):
    # Found by the thorough profile: topi conv1d computes its output dims as int32 and
    # topi.argmax takes its index dtype from them, so the shim gave int32 where Relax (and the
    # VM, which hands argmax an int64-shaped buffer) give int64.
    weight = relax.const(np.ones((1, 2, 1), "float16"), "float16")
    func = build(
        "main",
        [("x", (1, 2, 2), "float16")],
        lambda bb, x: R.argmax(bb.emit(R.nn.conv1d(x, weight)), axis=None),
    )
    cached = engine.lower(func, "llvm")
    assert [str(t.dtype) for t in cached.outputs] == ["int64"]
    assert_matches_new_path(func, np.array([[[1, 3], [2, -1]]], "float16"))


def _rms_norm_all_axes() -> relax.Function:
    return build(
        "main",
        [("x", (4,), "float32"), ("w", (4,), "float32")],
        lambda bb, x, w: R.nn.rms_norm(x, w, axes=[0]),
    )


def _argmax_of_scalar() -> relax.Function:
    return build("main", [("x", (), "float32")], lambda bb, x: R.argmax(x))


@pytest.mark.xfail(
    strict=True,
    raises=tvm.error.InternalError,
    reason="TVM bug: topi.nn.rms_norm over all axes of its input fails to lower "
    "('Tensor dimension mismatch in read'); tvm.compile + VM fails on it too",
)
def test_rms_norm_over_all_axes():
    ones = np.ones(4, "float32")
    assert_matches_new_path(_rms_norm_all_axes(), ones, ones)


@pytest.mark.xfail(
    strict=True,
    raises=tvm.error.InternalError,
    reason="TVM bug: topi.argmax/argmin reject a 0-d tensor ('Cannot reduce a 0 dim Tensor') "
    "although Relax type-checks R.argmax on it; tvm.compile + VM fails on it too",
)
def test_argmax_of_scalar():
    assert_matches_new_path(_argmax_of_scalar(), np.array(1.0, "float32"))


@pytest.mark.parametrize("make", [_rms_norm_all_axes, _argmax_of_scalar])
def test_shim_reports_the_tvm_bugs_as_lowering_errors(engine, make):
    # The shim never silently differs: where TVM cannot lower, lower() raises a clear error.
    with pytest.raises(LoweringError, match="Error during compile func"):
        engine.lower(make(), "llvm")


def test_numpy_does_not_judge_a_comparison_of_rounded_intermediates():
    # Found by the thorough profile: in float16, NumPy's tanh(-0.006184) rounds to x itself and
    # TVM's is one ulp away, so equal(x, tanh(x)) differs between NumPy and TVM while jit and
    # the new path agree. Such outputs are FRAGILE: only the two TVM paths are compared.
    from compile_engine_compat._interpret import FRAGILE, interpret

    func = build("main", [("x", (1,), "float16")], lambda bb, x: R.equal(x, bb.emit(R.tanh(x))))
    x = np.array([-0.006184], "float16")
    [_], [status] = interpret(func, [x])
    assert status == FRAGILE
    assert_matches_new_path(func, x)
