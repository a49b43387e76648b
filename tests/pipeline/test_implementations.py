"""Op strategies: the registry, conditions, selection, logging, and their use inside lower/jit.

The first tests port upstream's ``test_get_valid_implementations`` and
``test_select_implementation`` (tests/python/relay/test_backend_compile_engine.py), without the
AutoTVM-record cases: implementations conv2d_1/2/3 at plevel 10/15/20, conv2d_3 only for ic >= 16.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
import tvm
from _builders import build, run_jit
from tvm import relax, te, topi

from compile_engine_compat import compile_engine, te_compiler
from compile_engine_compat.facade import legacy_strategy as _legacy_strategy
from compile_engine_compat.pipeline import implementations as _implementations
from compile_engine_compat.pipeline.implementations import OpImplementation

TARGET = tvm.target.Target("llvm")


def _conv2d_compute(attrs, inputs, out_type):
    data, kernel = inputs
    return [topi.nn.conv2d_nchw(data, kernel, 1, 0, 1)]


def _conv2d_impls() -> list[OpImplementation]:
    return [
        OpImplementation("conv2d_1", _conv2d_compute, plevel=10),
        OpImplementation("conv2d_2", _conv2d_compute, plevel=15),
        OpImplementation(
            "conv2d_3",
            _conv2d_compute,
            plevel=20,
            condition=lambda inputs: inputs[0].shape[1] >= 16,
        ),
    ]


def _conv2d_case(ic: int):
    """The conv2d call's attrs and its TE inputs: data (1, ic, 7, 7), weight (16, ic, 3, 3)."""
    x = relax.Var("x", relax.TensorType((1, ic, 7, 7), "float32"))
    w = relax.Var("w", relax.TensorType((16, ic, 3, 3), "float32"))
    call = relax.op.nn.conv2d(x, w)
    inputs = [te.placeholder((1, ic, 7, 7), name="data"), te.placeholder((16, ic, 3, 3), name="w")]
    return call.attrs, inputs


@pytest.mark.parametrize("module", [compile_engine, te_compiler])
def test_get_valid_implementations(module):
    op = tvm.ir.Op.get("relax.nn.conv2d")
    with _implementations.temp_strategy(op, _conv2d_impls()):
        for ic, expected in ((8, 2), (16, 3)):
            attrs, inputs = _conv2d_case(ic)
            impls = module.get_valid_implementations(op, attrs, inputs, None, TARGET)
            assert len(impls) == expected
    # Outside the block the op has its legalization only.
    attrs, inputs = _conv2d_case(16)
    impls = module.get_valid_implementations(op, attrs, inputs, None, TARGET)
    assert [i.name for i in impls] == ["nn.conv2d.legalize"]


@pytest.mark.parametrize("module", [compile_engine, te_compiler])
@pytest.mark.parametrize("use_autotvm", [False, True])
def test_select_implementation(module, use_autotvm):
    op = tvm.ir.Op.get("relax.nn.conv2d")
    with _implementations.temp_strategy("nn.conv2d", _conv2d_impls()), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the once-per-process use_autotvm note
        for ic, expected in ((8, "conv2d_2"), (16, "conv2d_3")):
            attrs, inputs = _conv2d_case(ic)
            impl, outs = module.select_implementation(op, attrs, inputs, None, TARGET, use_autotvm)
            assert impl.name == expected
            assert len(outs) == 1 and isinstance(outs[0], te.Tensor)
            assert [int(d) for d in outs[0].shape] == [1, 16, 5, 5]


def test_registered_implementations_sit_next_to_the_legalization():
    # The legalization stands in for conv2d_1 (plevel 10): same counts as upstream.
    impls = _conv2d_impls()[1:]
    for impl in impls:
        compile_engine.register_implementation("relax.nn.conv2d", impl)
    try:
        names = {}
        for ic in (8, 16):
            attrs, inputs = _conv2d_case(ic)
            valid = compile_engine.get_valid_implementations(
                "nn.conv2d", attrs, inputs, None, TARGET
            )
            names[ic] = [i.name for i in valid]
        assert names[8] == ["nn.conv2d.legalize", "conv2d_2"]
        assert names[16] == ["nn.conv2d.legalize", "conv2d_2", "conv2d_3"]
    finally:
        for impl in impls:
            compile_engine.unregister_implementation("relax.nn.conv2d", impl)
    assert not _implementations.has_user_implementations("relax.nn.conv2d")
    assert [i.name for i in _implementations.registered_implementations("nn.conv2d")] == [
        "nn.conv2d.legalize"
    ]


def test_symbolic_condition_does_not_hold():
    n = tvm.tirx.Var("ic", "int64")
    attrs, _ = _conv2d_case(16)
    inputs = [te.placeholder((1, n, 7, 7), name="data"), te.placeholder((16, n, 3, 3), name="w")]
    with _implementations.temp_strategy("nn.conv2d", _conv2d_impls()):
        valid = compile_engine.get_valid_implementations("nn.conv2d", attrs, inputs, None, TARGET)
    assert [i.name for i in valid] == ["conv2d_1", "conv2d_2"]


def test_no_valid_implementation_is_a_runtime_error():
    only = OpImplementation("never", _conv2d_compute, condition=lambda inputs: False)
    attrs, inputs = _conv2d_case(8)
    with _implementations.temp_strategy("nn.conv2d", [only]):
        with pytest.raises(
            RuntimeError, match=r"No valid relax.nn.conv2d implementations for llvm"
        ):
            compile_engine.select_implementation("nn.conv2d", attrs, inputs, None, TARGET, False)


def test_selection_is_logged_to_both_loggers(caplog):
    attrs, inputs = _conv2d_case(16)
    with _implementations.temp_strategy("nn.conv2d", _conv2d_impls()):
        with caplog.at_level(logging.INFO, logger="compile_engine"):
            with caplog.at_level(logging.INFO, logger="te_compiler"):
                compile_engine.select_implementation(
                    "nn.conv2d", attrs, inputs, None, TARGET, False
                )
    expected = "Using conv2d_3 for relax.nn.conv2d based on highest priority (20)"
    loggers = {r.name for r in caplog.records if r.getMessage() == expected}
    assert loggers == {"compile_engine", "te_compiler"}


def test_use_autotvm_warns_once(monkeypatch):
    monkeypatch.setattr(_legacy_strategy, "_autotvm_warned", False)
    attrs, inputs = _conv2d_case(8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            impl, _ = compile_engine.select_implementation(
                "nn.conv2d", attrs, inputs, None, TARGET, use_autotvm=True
            )
    notes = [
        w for w in caught if issubclass(w.category, UserWarning) and "AutoTVM" in str(w.message)
    ]
    assert len(notes) == 1
    assert notes[0].filename == __file__  # attributed to the caller's line
    assert impl.name == "nn.conv2d.legalize"


def test_use_auto_scheduler_config_silences_the_autotvm_note(monkeypatch):
    monkeypatch.setattr(_legacy_strategy, "_autotvm_warned", False)
    attrs, inputs = _conv2d_case(8)
    config = {"relay.backend.use_auto_scheduler": True}
    with tvm.transform.PassContext(config=config), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compile_engine.select_implementation("nn.conv2d", attrs, inputs, None, TARGET)
    assert not [w for w in caught if "AutoTVM" in str(w.message)]
    assert not _legacy_strategy._autotvm_warned


# -- user implementations inside lower / jit ----------------------------------------------------


def _relu_function(shape=(4, 8)):
    return build("main", [("x", shape, "float32")], lambda bb, x: relax.op.nn.relu(x))


def _shifted_relu(attrs, inputs, out_type):
    (x,) = inputs
    return te.compute(x.shape, lambda *i: te.max(x(*i), 0.0) + 1.0, name="shifted_relu")


def test_lower_uses_the_selected_implementation(engine, caplog):
    func = _relu_function()
    x = np.linspace(-2, 2, 32, dtype="float32").reshape(4, 8)
    impl = OpImplementation("shifted_relu", _shifted_relu, plevel=20)
    compile_engine.register_implementation("relax.nn.relu", impl)
    try:
        with caplog.at_level(logging.INFO, logger="compile_engine"):
            cached = engine.lower(func, "llvm")
            (out,) = run_jit(engine.jit(func, "llvm"), cached, x)
    finally:
        compile_engine.unregister_implementation("relax.nn.relu", impl)
        engine.clear()
    np.testing.assert_allclose(out, np.maximum(x, 0) + 1)
    assert "Using shifted_relu for relax.nn.relu based on highest priority (20)" in caplog.text
    # With the implementation gone (and the cache cleared) the legalization is back.
    (out,) = run_jit(engine.jit(func, "llvm"), engine.lower(func, "llvm"), x)
    np.testing.assert_allclose(out, np.maximum(x, 0))


def test_condition_picks_the_implementation_per_shape(engine):
    impl = OpImplementation(
        "wide_only", _shifted_relu, plevel=20, condition=lambda inputs: inputs[0].shape[1] >= 8
    )
    with _implementations.temp_strategy(
        "nn.relu", [_implementations.default_implementation("nn.relu"), impl]
    ):
        narrow = np.full((2, 4), -1.0, "float32")
        wide = np.full((2, 8), -1.0, "float32")
        f_narrow, f_wide = _relu_function((2, 4)), _relu_function((2, 8))
        (n,) = run_jit(engine.jit(f_narrow, "llvm"), engine.lower(f_narrow, "llvm"), narrow)
        (w,) = run_jit(engine.jit(f_wide, "llvm"), engine.lower(f_wide, "llvm"), wide)
    engine.clear()
    np.testing.assert_allclose(n, 0.0)
    np.testing.assert_allclose(w, 1.0)


def _matmul_compute(attrs, inputs, out_type):
    a, b = inputs
    k = te.reduce_axis((0, a.shape[1]), name="k")
    return te.compute(
        (a.shape[0], b.shape[1]), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="my_matmul"
    )


def test_implementation_schedule_runs_on_the_engine_schedule(engine):
    seen = []

    def schedule(sch, block_names):
        seen.append(list(block_names))
        loops = sch.get_loops(sch.get_sblock(block_names[0]))
        sch.parallel(loops[0])

    impl = OpImplementation("my_matmul", _matmul_compute, schedule=schedule, plevel=30)
    func = build(
        "main",
        [("a", (8, 16), "float32"), ("b", (16, 4), "float32")],
        lambda bb, a, b: relax.op.nn.relu(bb.emit(relax.op.matmul(a, b))),
    )
    a = np.random.default_rng(0).standard_normal((8, 16)).astype("float32")
    b = np.random.default_rng(1).standard_normal((16, 4)).astype("float32")
    with _implementations.temp_strategy("matmul", [impl]):
        cached = engine.lower(func, "llvm")
        (out,) = run_jit(engine.jit(func, "llvm"), cached, a, b)
    engine.clear()
    assert seen == [["my_matmul"]]
    assert "T.parallel" in cached.funcs.script()
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_compute_returning_non_tensors_is_a_clear_error(engine):
    bad = OpImplementation("bad", lambda attrs, inputs, out_type: [1.0], plevel=20)
    with _implementations.temp_strategy("nn.relu", [bad]):
        with pytest.raises(RuntimeError, match=r"implementation bad must return te\.Tensor"):
            engine.lower(_relu_function(), "llvm")
    engine.clear()


def test_register_implementation_rejects_non_implementations():
    with pytest.raises(TypeError, match="OpImplementation"):
        compile_engine.register_implementation("nn.relu", _shifted_relu)  # type: ignore[arg-type]
