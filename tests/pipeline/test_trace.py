"""Constructs with no tensor-level TE form give an error that names them."""

from __future__ import annotations

import pytest
import tvm
from _builders import build
from tvm import relax
from tvm.relax import TensorType

from compile_engine_compat.pipeline.trace import UnsupportedConstructError, trace


def _lowering_error(engine, func, match):
    with pytest.raises(RuntimeError, match="Error during compile func") as info:
        engine.lower(func, "llvm")
    assert isinstance(info.value.__cause__, UnsupportedConstructError)
    assert match in str(info.value.__cause__)


def test_match_cast_is_named(engine):
    x = relax.Var("x", TensorType([4], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.match_cast(x, TensorType([4], "float32"))
            out = bb.emit_output(bb.emit(relax.op.exp(y)))
        bb.emit_func_output(out)
    _lowering_error(engine, bb.get()["main"], "MatchCast")


def test_control_flow_is_named(engine):
    from tvm.script import relax as R

    @R.function
    def func(c: R.Tensor((), "bool"), x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):  # type: ignore[valid-type]
        if c:
            y = R.exp(x)
        else:
            y = R.negative(x)
        return y

    with pytest.raises(RuntimeError, match="Error during compile func") as info:
        engine.lower(func, "llvm")
    assert "relax.If" in str(info.value.__cause__) or "If" in str(info.value.__cause__)


def test_call_dps_packed_is_named(engine):
    func = build(
        "main",
        [("x", (3,), "float32")],
        lambda bb, x: relax.call_dps_packed("my_func", [x], TensorType([3], "float32")),
    )
    _lowering_error(engine, func, "call_dps_packed")


def test_non_tensor_parameter_is_named(engine):
    s = relax.Var("s", relax.ShapeType(ndim=2))
    x = relax.Var("x", TensorType([3], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, s]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.exp(x)))
        bb.emit_func_output(out)
    _lowering_error(engine, bb.get()["main"], "parameter 's'")


def test_unknown_source_type_names_the_expected_types():
    with pytest.raises(TypeError, match=r"tvm\.relax\.Function or a tvm\.IRModule"):
        trace("not a function")


def test_ordinary_legalize_ops_still_works_after_tracing(engine):
    func = build("main", [("x", (3,), "float32")], lambda bb, x: relax.op.add(x, x))
    engine.lower(func, "llvm")  # installs the call_te hook; outside a trace it must be inert
    legalized = relax.transform.LegalizeOps()(tvm.IRModule({"main": func}))
    assert any(isinstance(f, tvm.tirx.PrimFunc) for f in legalized.functions.values())


def test_op_whose_legalization_builds_call_tir_is_named(engine):
    func = build(
        "main",
        [("x", (2, 4), "float32")],
        lambda bb, x: relax.op.layout_transform(x, index_map=lambda i, j: (j, i)),
    )
    _lowering_error(engine, func, "relax.layout_transform legalizes to a prebuilt kernel")


def test_tvmscript_module_source(engine):
    import numpy as np
    from tvm.script import ir as I
    from tvm.script import relax as R

    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((3,), "float32")) -> R.Tensor((3,), "float32"):  # type: ignore[valid-type]
            return R.multiply(x, x)

    kernel = engine.jit(Module, "llvm")
    out = np.zeros(3, "float32")
    kernel(np.array([1, 2, 3], "float32"), out)
    np.testing.assert_array_equal(out, [1, 4, 9])
