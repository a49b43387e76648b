"""The registered ``relay.backend.*`` globals: old names, old argument lists, one engine."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import cast

import numpy as np
import pytest
import tvm
from _builders import add3, build, run_jit
from tvm import relax, te, topi

from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine, te_compiler
from compile_engine_compat import api_table as _api_table

# The un-warned accessor (te_compiler re-exports it, but its stub declares only __all__).
from compile_engine_compat.facade.te_compiler_impl import global_compiler
from compile_engine_compat.pipeline import implementations as _implementations

LLVM = tvm.target.Target("llvm")


def g(name: str):
    return tvm.get_global_func(f"relay.backend.{name}")


def test_every_global_of_the_table_is_registered():
    for row in _api_table.GLOBAL_ROWS:
        assert tvm.get_global_func(row.name, allow_missing=True) is not None, row.name


def test_singletons_are_the_python_ones(engine):
    assert g("_CompileEngineGlobal")() is engine
    assert g("_TECompilerGlobal")() is te_compiler.get()


def test_lower_jit_items_through_the_globals(engine):
    key = g("_make_CCacheKey")(add3((10,)), "llvm")  # a str target is converted, as by C++
    assert isinstance(key, compile_engine.CCacheKey) and isinstance(key.target, tvm.target.Target)
    cached = g("_CompileEngineLower")(engine, key, "tvmgen_default")  # mod_name arrives mangled
    assert cached.prim_fn_var.name_hint.startswith("tvmgen_default_fused_add_add")
    assert engine.lower(add3((10,)), "llvm") is cached  # the same cache as the Python API
    kernel = g("_CompileEngineJIT")(engine, key)
    x = np.arange(10, dtype="float32")
    (y,) = run_jit(kernel, cached, x)
    np.testing.assert_allclose(y, 3 * x)
    flat = g("_CompileEngineListItems")(engine)
    assert len(flat) == 2 and len(flat) % 2 == 0
    assert flat[0] is key and flat[1] is engine.items()[0][1]
    assert g("_CompileEngineGetCurrentCCacheKey")(engine) is key
    g("_CompileEngineClear")(engine)
    assert len(g("_CompileEngineListItems")(engine)) == 0


def test_old_argument_list_without_mod_name(engine):
    # v0.7.0's _CompileEngineLower(self, key): no mod_name, no prefix.
    key = g("_make_CCacheKey")(add3((11,)), LLVM)
    assert g("_CompileEngineLower")(engine, key).prim_fn_var.name_hint.startswith("fused_add_add")


def test_te_compiler_globals_share_the_cache_and_count_from_one(engine):
    tec = g("_TECompilerGlobal")()
    key = g("_make_CCacheKey")(add3((12,)), LLVM)
    cached = g("_TECompilerLower")(tec, key, "tvmgen_default")
    assert engine.lower(add3((12,)), LLVM) is cached
    flat = g("_TECompilerListItems")(tec)
    assert len(flat) == 2 and flat[0] is key and flat[1].use_count == 2
    assert engine.items()[0][1].use_count == 1
    kernel = g("_TECompilerJIT")(tec, key)
    x = np.ones(12, "float32")
    np.testing.assert_allclose(run_jit(kernel, cached, x)[0], 3 * x)
    g("_TECompilerClear")(tec)
    assert engine.items() == []


def test_shape_func_and_external_globals(engine):
    n = tvm.tirx.Var("n", "int64")
    func = build("main", [("x", (n, 4), "float32")], lambda bb, x: relax.op.add(x, x))
    key = g("_make_CCacheKey")(func, LLVM)
    cached = g("_CompileEngineLowerShapeFunc")(engine, key)
    assert list(cached.shape_func_param_states) == [2]
    flat = g("_CompileEngineListShapeFuncItems")(engine)
    assert len(flat) % 2 == 0 and any(item is key for item in flat)
    assert len(g("_CompileLowerExternalFunctions")(engine)) == 0


def test_make_lowered_output():
    out = te.placeholder((3,), name="o")
    lowered = g("_make_LoweredOutput")([out], "impl")
    assert isinstance(lowered, compile_engine.LoweredOutput)
    assert lowered.outputs[0].same_as(out) and lowered.implementation == "impl"


def test_lower_call_global_lowers_one_op():
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    call = relax.op.nn.relu(x)
    lowered = g("lower_call")(call, [te.placeholder((2, 3), name="x")], LLVM)
    assert lowered.implementation.name == "nn.relu.legalize"
    assert [int(d) for d in lowered.outputs[0].shape] == [2, 3]


def test_bad_arguments_are_clear_errors(engine):
    with pytest.raises(TypeError, match="expected the CompileEngine or TECompiler"):
        g("_CompileEngineClear")(42)
    with pytest.raises(TypeError, match="Expect source_func to be CCacheKey"):
        g("_CompileEngineJIT")(engine, add3((2,)))
    with pytest.raises(TypeError, match="mod_name must be a str"):
        g("_CompileEngineLower")(engine, g("_make_CCacheKey")(add3((2,)), LLVM), 3)


@pytest.mark.warnings_visible
def test_globals_warn_with_their_own_rows(engine):
    with pytest.warns(CompileEngineDeprecationWarning) as record:
        g("_CompileEngineGlobal")()
        g("_TECompilerListItems")(global_compiler())
        g("_CompileEngineJIT")(engine, g("_make_CCacheKey")(add3((13,)), LLVM))
    apis = [cast(CompileEngineDeprecationWarning, w.message).api for w in record]
    assert apis == [
        "relay.backend._CompileEngineGlobal",
        "relay.backend._TECompilerListItems",
        "relay.backend._make_CCacheKey",
        "relay.backend._CompileEngineJIT",
    ]
    assert {w.filename for w in record} == {__file__}


# -- a user override of relay.backend.lower_call --------------------------------------------------


@pytest.fixture
def restore_lower_call():
    original = tvm.get_global_func("relay.backend.lower_call")
    yield original
    tvm.register_global_func("relay.backend.lower_call", original, override=True)
    assert _implementations.user_lower_call() is None  # the shim's own function is back


def test_user_lower_call_override_is_honoured_per_op(engine, restore_lower_call):
    default = restore_lower_call
    seen = []

    @tvm.register_global_func("relay.backend.lower_call", override=True)
    def my_lower_call(call, inputs, target):
        seen.append((call.op.name, str(target.kind.name)))
        if call.op.name == "relax.add":  # replace add by multiply, keep the rest as is
            a, b = inputs
            out = topi.multiply(a, b)
            return g("_make_LoweredOutput")([out], "my_multiply")
        return default(call, inputs, target)

    func = build(
        "main",
        [("x", (5,), "float32")],
        lambda bb, x: relax.op.nn.relu(bb.emit(relax.op.add(x, x))),
    )
    cached = engine.lower(func, "llvm")
    x = np.array([-2, -1, 0, 1, 2], dtype="float32")
    (y,) = run_jit(engine.jit(func, "llvm"), cached, x)
    engine.clear()
    assert seen == [("relax.add", "llvm"), ("relax.nn.relu", "llvm")]
    np.testing.assert_allclose(y, np.maximum(x * x, 0))


def test_user_lower_call_returning_bad_outputs_fails_clearly(engine, restore_lower_call):
    tvm.register_global_func(
        "relay.backend.lower_call", lambda call, inputs, target: [1, 2], override=True
    )
    with pytest.raises(RuntimeError, match=r"relay.backend.lower_call must return te\.Tensor"):
        engine.lower(add3((3,)), "llvm")
    engine.clear()


def test_registration_happens_on_import_of_the_legacy_modules():
    # A fresh process: the bare package imports no TVM; importing te_compiler registers the
    # globals; a lower_call registered before that import is kept and used.
    script = textwrap.dedent(
        """
        import sys, warnings
        warnings.simplefilter("ignore")
        import compile_engine_compat
        assert "tvm" not in sys.modules
        import tvm
        assert tvm.get_global_func("relay.backend._TECompilerGlobal", allow_missing=True) is None
        calls = []
        def mine(call, inputs, target):
            calls.append(call.op.name)
            from compile_engine_compat.facade import legacy_strategy
            return legacy_strategy.lower_call(call, inputs, target)
        tvm.register_global_func("relay.backend.lower_call", mine)
        from compile_engine_compat import te_compiler
        assert tvm.get_global_func("relay.backend._TECompilerGlobal")() is te_compiler.get()
        sys.path.insert(0, "tests")
        from _builders import add3
        te_compiler.get().lower(add3((4,)), "llvm")
        assert calls == ["relax.add", "relax.add"], calls
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("ok")
