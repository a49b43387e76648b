"""Build-time folding in NumPy: constant ops and weight packing, equal to TVM's own folding."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax, te

from compile_engine_compat.pipeline.model import fold, vm_executable

R = relax.op
F32 = "float32"
rng = np.random.default_rng(3)


def _const(*shape: int) -> relax.Expr:
    return relax.const(rng.standard_normal(shape).astype(F32))


def _folded_by_tvm(mod: tvm.IRModule) -> tvm.IRModule:
    with tvm.target.Target("llvm"):
        return relax.transform.FoldConstant()(relax.transform.LegalizeOps()(mod))


def _run(mod: tvm.IRModule, *args: np.ndarray) -> np.ndarray:
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _calls(func: relax.Function) -> list[str]:
    found: list[str] = []

    def visit(expr: object) -> None:
        if isinstance(expr, relax.Call) and hasattr(expr.op, "name"):
            found.append(str(expr.op.name))

    relax.analysis.post_order_visit(func, visit)
    return found


def _relu6_bias_model() -> tvm.IRModule:
    # What the ONNX importer makes of Conv + Clip(0, 6): a bias reshape, isnan/where bounds.
    def body(bb, x):
        bias = bb.emit(R.reshape(_const(8), [1, 8, 1, 1]))
        low = bb.emit(R.where(R.isnan(relax.const(0.0, F32)), relax.const(-np.inf, F32),
                              relax.const(0.0, F32)))  # fmt: skip
        high = bb.emit(R.where(bb.emit(R.isnan(relax.const(6.0, F32))),
                               relax.const(np.inf, F32), relax.const(6.0, F32)))  # fmt: skip
        weight = bb.emit(R.permute_dims(_const(3, 3, 4, 8), [3, 2, 0, 1]))
        y = bb.emit(R.add(bb.emit(R.nn.conv2d(x, weight, padding=[1, 1])), bias))
        return R.minimum(bb.emit(R.maximum(y, low)), high)

    return tvm.IRModule({"main": build("main", [("x", (1, 4, 6, 6), F32)], body)})


def test_constant_ops_fold_to_constants_equal_to_tvms_folding():
    mod = _relu6_bias_model()
    folded = fold.FoldConstantOps()(mod)
    # Every op on constants is gone; the conv and the bounds on its result stay.
    assert sorted(_calls(folded["main"])) == ["relax.add", "relax.maximum", "relax.minimum",
                                             "relax.nn.conv2d"]  # fmt: skip
    x = rng.standard_normal((1, 4, 6, 6)).astype(F32) * 4
    np.testing.assert_array_equal(_run(folded, x), _run(_folded_by_tvm(mod), x))


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: R.add(_const(2, 3), _const(3)), "add"),
        (lambda: R.divide(_const(2, 3), _const(2, 3)), "divide"),
        (lambda: R.sqrt(R.abs(_const(4, 2))), "sqrt"),
        (lambda: R.astype(_const(5), "float16"), "astype"),
        (lambda: R.expand_dims(_const(3, 4), [0]), "expand_dims"),
        (lambda: R.broadcast_to(_const(1, 4), [3, 4]), "broadcast_to"),
    ],
)
def test_each_numpy_op_gives_tvms_result(make, name):
    expr = make()
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            out = bb.emit_output(expr)
        bb.emit_func_output(out)
    mod = bb.get()
    folded = fold.FoldConstantOps()(mod)
    assert _calls(folded["main"]) == [], name
    vm_folded = relax.VirtualMachine(tvm.compile(folded, "llvm"), tvm.cpu())["main"]().numpy()
    vm_plain = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())["main"]().numpy()
    np.testing.assert_allclose(vm_folded, vm_plain, rtol=1e-6)
    assert vm_folded.dtype == vm_plain.dtype


def test_integer_division_and_unknown_ops_are_left_to_run():
    ints = relax.const(np.array([-7, 7], "int32"))
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            a = bb.emit(R.divide(ints, relax.const(np.array([2, 2], "int32"))))
            out = bb.emit_output(R.cumsum(R.astype(a, F32), axis=0))
        bb.emit_func_output(out)
    folded = fold.FoldConstantOps()(bb.get())
    assert "relax.divide" in _calls(folded["main"]) and "relax.cumsum" in _calls(folded["main"])


# -- weight packing -------------------------------------------------------------------------------


def _packing_funcs(func: relax.Function, weights: dict[str, np.ndarray]) -> list[tuple]:
    """The weight-packing PrimFuncs the module build splits out of ``func``'s kernels, each with
    the constant it is called on: ``[(PrimFunc, weight array), ...]``."""
    target = tvm.target.Target("llvm")
    mod = relax.transform.BindParams("main", weights)(tvm.IRModule({"main": func}))
    passes = vm_executable.relax_passes(target)
    names = [p.info.name for p in passes]
    with target:
        split = tvm.transform.Sequential(
            passes[: names.index("SplitLayoutRewritePreprocIfMarked") + 1]
        )(mod)
    found = []

    def visit(expr: object) -> None:
        if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.call_tir":
            callee = split[expr.args[0]]
            if expr.args[0].name_hint.endswith("_weight_prepack"):
                found.append((callee, expr.args[1].fields[0].value.numpy()))

    relax.analysis.post_order_visit(split["main"], visit)
    return found


def _run_prim(func: tvm.tirx.PrimFunc, source: np.ndarray) -> np.ndarray:
    out_shape = [int(d) for d in func.params[1].ty.shape]
    out = tvm.runtime.empty(out_shape, F32)
    tvm.compile(func.with_attr("global_symbol", "main"), "llvm")(tvm.runtime.tensor(source), out)
    return out.numpy()


_PACKED = {
    "matmul": (lambda bb, x, w: R.matmul(x, w), (64, 96), (96, 80)),
    "dense": (lambda bb, x, w: R.linear(x, w), (64, 96), (80, 96)),
    "conv": (lambda bb, x, w: R.nn.conv2d(x, w, padding=[1, 1]), (1, 16, 20, 20), (64, 16, 3, 3)),
    "conv_one_panel": (lambda bb, x, w: R.nn.conv2d(x, w), (1, 3, 30, 30), (32, 3, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(_PACKED))
def test_weight_packing_in_numpy_equals_running_the_copy(name):
    body, x_shape, w_shape = _PACKED[name]
    func = build("main", [("x", x_shape, F32), ("w", w_shape, F32)], body)
    weight = rng.standard_normal(w_shape).astype(F32)
    packings = _packing_funcs(func, {"w": weight})
    assert packings, "the packed GEMM rule marked no weight packing"
    for prim_func, source in packings:
        packed = fold.split_and_permute(prim_func, source)
        assert packed is not None
        np.testing.assert_array_equal(packed, _run_prim(prim_func, source))


def test_a_copy_that_is_not_a_split_and_permute_is_left_to_run():
    src = te.placeholder((8, 8), name="src", dtype=F32)
    shifted = te.compute((8, 8), lambda i, j: src[i, (j + 1) % 8])
    func = te.create_prim_func([src, shifted])
    assert fold.split_and_permute(func, np.zeros((8, 8), F32)) is None
