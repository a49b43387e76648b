"""``lower_many`` / ``jit_many``: one IRModule, one build, the same cache entries as lower/jit."""

from __future__ import annotations

import numpy as np
import pytest
from _builders import build
from tvm import relax

from compile_engine_compat import ledger, reset_ledger

R = relax.op
OPS = [R.exp, R.negative, R.abs, R.sigmoid, R.tanh]


def _funcs(count: int) -> list[relax.Function]:
    return [
        build("main", [("x", (3, i + 1), "float32")], lambda bb, x, i=i: OPS[i % len(OPS)](x))
        for i in range(count)
    ]


def _reference(i: int, x: np.ndarray) -> np.ndarray:
    numpy_ops = [np.exp, np.negative, np.abs, lambda v: 1 / (1 + np.exp(-v)), np.tanh]
    return numpy_ops[i % len(numpy_ops)](x)


def test_jit_many_builds_one_module_and_every_kernel_is_right(engine):
    funcs = _funcs(8)
    kernels = engine.jit_many(funcs, "llvm")
    assert len(kernels) == 8
    assert len({id(k.module) for k in kernels}) == 1  # ONE tvm.compile for all of them
    rng = np.random.default_rng(3)
    for i, kernel in enumerate(kernels):
        x = rng.standard_normal((3, i + 1)).astype("float32")
        out = np.empty_like(x)
        kernel(x, out)
        np.testing.assert_allclose(out, _reference(i, x), rtol=1e-5, atol=1e-6)


def test_jit_many_fills_the_entries_jit_and_lower_use(engine):
    funcs = _funcs(4)
    kernels = engine.jit_many(funcs, "llvm")
    assert [engine.jit(f, "llvm") for f in funcs] == kernels  # the same kernel objects
    assert len(engine.items()) == 4
    cached = engine.lower(funcs[2], "llvm")
    assert cached.prim_fn_var.name_hint == kernels[2].name


def test_jit_many_reuses_kernels_already_built(engine):
    funcs = _funcs(3)
    first = engine.jit(funcs[1], "llvm")
    kernels = engine.jit_many(funcs, "llvm")
    assert kernels[1] is first
    assert kernels[0].module is kernels[2].module is not first.module


def test_jit_many_with_repeats_and_an_empty_list(engine):
    funcs = _funcs(2)
    kernels = engine.jit_many([funcs[0], funcs[1], funcs[0]], "llvm")
    assert kernels[0] is kernels[2]
    assert engine.jit_many([], "llvm") == []


def test_lower_many_returns_what_lower_returns(engine):
    funcs = _funcs(3)
    lowered = engine.lower_many(funcs, "llvm")
    assert [engine.lower(f, "llvm") for f in funcs] == lowered
    assert all(v.use_count == 1 for _, v in engine.items())


@pytest.mark.warnings_visible
def test_lower_many_and_jit_many_are_counted_as_legacy_calls(engine):
    reset_ledger()
    with pytest.warns(DeprecationWarning):
        engine.lower_many(_funcs(1), "llvm")
    with pytest.warns(DeprecationWarning):
        engine.jit_many(_funcs(1), "llvm")
    names = {entry.api for entry in ledger() if entry.filename == __file__}
    assert {
        "compile_engine.CompileEngine.lower_many",
        "compile_engine.CompileEngine.jit_many",
    } <= names
