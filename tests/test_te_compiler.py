"""te_compiler (TVM 0.8-0.19): its own surface, one cache shared with compile_engine."""

from __future__ import annotations

import re
from typing import cast

import numpy as np
import pytest
import tvm
from _builders import add3, build, run_jit
from tvm import relax, te

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine, te_compiler


@pytest.fixture
def tec(engine):
    """The TECompiler; ``engine`` (the shared cache) was cleared for the test."""
    return te_compiler.get()


def test_get_is_a_singleton_that_cannot_be_constructed(tec):
    assert te_compiler.get() is tec
    assert tec.same_as(te_compiler.get())
    with pytest.raises(RuntimeError, match="Cannot construct a TECompiler"):
        te_compiler.TECompiler()
    assert compile_engine_compat.te_compiler is te_compiler


def test_upstream_te_compiler_test(tec):
    # Upstream test_te_compiler (was test_compile_engine, without dump()).
    z1 = tec.lower(add3((10,)), "llvm")
    z2 = tec.lower(add3((10,)), "llvm")
    z3 = tec.lower(add3(()), "llvm")
    assert z1.same_as(z2)
    assert not z3.same_as(z1)
    x = np.ones(10, "float32")
    (y,) = run_jit(tec.jit(add3((10,)), "llvm"), z1, x)
    np.testing.assert_allclose(y, 3 * x)


def test_use_count_is_one_based_and_a_view_of_the_shared_cache(engine, tec):
    func = add3((4,))
    tec.lower(func, "llvm")
    ((_, ce_value),) = engine.items()
    ((_, te_value),) = tec.items()
    assert (ce_value.use_count, te_value.use_count) == (0, 1)
    engine.lower(func, "llvm")  # a hit through the other module counts in both views
    assert (engine.items()[0][1].use_count, tec.items()[0][1].use_count) == (1, 2)
    te_value.use_count = 10  # a view: writing sets the shared count
    assert ce_value.use_count == 9
    assert te_value.cached_func is ce_value.cached_func
    assert te_value.same_as(tec.items()[0][1]) and te_value == tec.items()[0][1]
    assert isinstance(te_value, te_compiler.CCacheValue)


def test_both_modules_return_the_same_cached_func_and_kernel(engine, tec):
    cached = engine.lower(add3((6,)), "llvm")
    assert tec.lower(add3((6,)), "llvm") is cached
    assert tec.jit(add3((6,)), "llvm") is engine.jit(add3((6,)), "llvm")
    tec.clear()
    assert engine.items() == [] and tec.items() == []


def test_lower_names_and_mod_name(tec):
    # The name map survives clear(), as upstream's did: an earlier test may have taken a name.
    name = tec.lower(add3((3,)), "llvm").prim_fn_var.name_hint
    assert re.fullmatch(r"tvmgen_default_fused_add_add(_\d+)?", name)
    cached = tec.lower(add3((5,)), "llvm", mod_name="mymod")
    assert re.fullmatch(r"tvmgen_mymod_fused_add_add(_\d+)?", cached.prim_fn_var.name_hint)


def test_key_and_lowered_output_types(tec):
    key = te_compiler.CCacheKey(add3((7,)), tvm.target.Target("llvm"))
    assert isinstance(key, compile_engine.CCacheKey)
    tec.lower(key)
    ((stored_key, _),) = tec.items()
    assert stored_key is key
    engine_key = compile_engine.CCacheKey(add3((7,)), tvm.target.Target("llvm"))
    assert isinstance(engine_key, te_compiler.CCacheKey)  # one key type, two spellings
    out = te_compiler.LoweredOutput([te.placeholder((2,))], "impl")
    assert isinstance(out, compile_engine.LoweredOutput) and out.implementation == "impl"


def test_methods_removed_upstream_are_absent():
    for name in ("dump", "lower_shape_func", "shape_func_items", "get_current_ccache_key"):
        assert not hasattr(te_compiler.TECompiler, name)
    assert hasattr(compile_engine.CompileEngine, "dump")


def test_free_functions(tec):
    assert [int(d) for d in te_compiler.get_shape([2, 3])] == [2, 3]
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    call = relax.op.nn.relu(x)
    inputs = [te.placeholder((2, 3), name="x")]
    lowered = te_compiler.lower_call(call, inputs, tvm.target.Target("llvm"))
    assert lowered.implementation.name == "nn.relu.legalize"
    assert [int(d) for d in lowered.outputs[0].shape] == [2, 3]
    impl, outs = te_compiler.select_implementation(
        call.op, call.attrs, inputs, None, "llvm", use_autotvm=False
    )
    assert impl.name == "nn.relu.legalize" and len(outs) == 1
    assert len(te_compiler.get_valid_implementations(call.op, None, inputs, None, "llvm")) == 1


def test_lower_to_primfunc_builds_and_runs():
    func = build(
        "main",
        [("x", (4, 8), "float32"), ("w", (8, 3), "float32")],
        lambda bb, x, w: relax.op.nn.relu(bb.emit(relax.op.matmul(x, w))),
    )
    prim_func = te_compiler.lower_to_primfunc(func, "llvm")
    assert isinstance(prim_func, tvm.tirx.PrimFunc)
    assert prim_func.attrs["global_symbol"] == "fused_matmul_nn_relu"
    lib = tvm.compile(prim_func, "llvm")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype("float32")
    w = rng.standard_normal((8, 3)).astype("float32")
    out = tvm.runtime.empty((4, 3), "float32")
    lib["fused_matmul_nn_relu"](tvm.runtime.tensor(x), tvm.runtime.tensor(w), out)
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w, 0), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Need target"):
        te_compiler.lower_to_primfunc(func, "")


def test_lower_error_is_wrapped_like_upstream(tec):
    with pytest.raises(RuntimeError, match="Error during compile func"):
        tec.lower(add3((2,)), "llvm", mod_name="bad name!")


@pytest.mark.warnings_visible
@pytest.mark.parametrize(
    ("call", "api"),
    [
        (lambda: te_compiler.get(), "te_compiler.get"),
        (lambda: te_compiler.get().lower(add3((9,)), "llvm"), "te_compiler.TECompiler.lower"),
        (lambda: te_compiler.get().jit(add3((9,)), "llvm"), "te_compiler.TECompiler.jit"),
        (lambda: te_compiler.get().items(), "te_compiler.TECompiler.items"),
        (lambda: te_compiler.get().clear(), "te_compiler.TECompiler.clear"),
        (lambda: te_compiler.get_shape([1]), "te_compiler.get_shape"),
        (lambda: te_compiler.LoweredOutput([], None), "te_compiler.LoweredOutput"),
        (
            lambda: te_compiler.lower_to_primfunc(add3((9,)), "llvm"),
            "te_compiler.lower_to_primfunc",
        ),
    ],
)
def test_each_surface_warns_with_its_own_row(call, api):
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        call()
    apis = {cast(CompileEngineDeprecationWarning, w.message).api for w in record}
    assert api in apis
    assert not any(a.startswith("compile_engine.") for a in apis)  # no double counting


def test_the_autotvm_logger_is_tvm_019s():
    import logging

    from compile_engine_compat import te_compiler

    assert te_compiler.autotvm_logger is logging.getLogger("autotvm")
