"""``relay.transform``: Relay's passes are ``tvm.transform.Pass`` objects that keep numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.passes import PASS_KINDS

T = relay.transform


def _conv_bn_module() -> tvm.IRModule:
    """conv2d -> batch_norm -> bias_add -> relu -> dense, with constants to fold."""
    rng = np.random.default_rng(0)
    x = relay.var("x", shape=(1, 3, 8, 8))
    w = relay.var("w", shape=(4, 3, 3, 3))

    def c(*shape: int) -> relay.Constant:
        return relay.const(rng.uniform(0.5, 1.5, shape).astype("float32"))

    y = relay.nn.conv2d(x, w, padding=(1, 1))
    y = relay.nn.batch_norm(y, c(4), c(4), c(4), c(4))[0]
    y = relay.nn.relu(relay.nn.bias_add(y, c(4) * c(4)))
    y = relay.nn.dense(relay.nn.batch_flatten(y), c(5, 256))
    return tvm.IRModule.from_expr(relay.Function([x, w], y))


def _run(mod: tvm.IRModule) -> np.ndarray:
    rng = np.random.default_rng(1)
    args = [rng.random((1, 3, 8, 8), dtype="float32"), rng.random((4, 3, 3, 3), dtype="float32")]
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()


def _all_passes() -> list[tvm.transform.Pass]:
    return [
        T.InferType(),
        T.SimplifyInference(),
        T.FoldConstant(),
        T.ConvertLayout({"nn.conv2d": ["NHWC", "default"]}),
        T.DeadCodeElimination(),
        T.EliminateCommonSubexpr(),
        T.FuseOps(),
        T.CanonicalizeOps(),
        T.FoldScaleAxis(),
        T.DynamicToStatic(),
        T.RemoveUnusedFunctions(),
        T.AnnotateSpans(),
    ]


def test_every_pass_is_a_tvm_pass_with_relays_name():
    passes = [*_all_passes(), T.ToMixedPrecision()]
    # on the Relay graph (GRAPH_REWRITE_KINDS and their own modules)
    rewrites = {"EliminateCommonSubexpr", "FoldConstant", "SimplifyInference", "FoldScaleAxis"}
    rewrites |= {"FuseOps", "DynamicToStatic"}
    assert {p.info.name for p in passes} == {*PASS_KINDS, *rewrites}
    for p in passes:
        assert isinstance(p, tvm.transform.Pass)
    assert T.FoldConstant().info.opt_level == 2 and T.ConvertLayout({}).info.opt_level == 3
    from compile_engine_compat.api_table import lookup  # the scanner classifies each by name

    rowed = {path.rsplit(".", 1)[1] for path in lookup("relay.transform").old_paths}
    assert set(PASS_KINDS) | rewrites <= rowed


def test_a_sequential_of_every_pass_keeps_the_numbers():
    mod = _conv_bn_module()
    with tvm.transform.PassContext(opt_level=3):
        out = tvm.transform.Sequential(_all_passes())(mod)
    text = out.script()
    assert "NHWC" in text and "batch_norm" not in text  # ConvertLayout, SimplifyInference ran
    np.testing.assert_allclose(_run(out), _run(mod), rtol=1e-5, atol=1e-4)


def test_build_config_and_pass_context_skip_and_disable_by_relay_name():
    mod = _conv_bn_module()
    seq = tvm.transform.Sequential([T.ConvertLayout({"nn.conv2d": ["NHWC", "default"]})])
    with T.build_config(opt_level=2):  # below ConvertLayout's opt level 3: skipped
        assert "NHWC" not in seq(mod).script()
    with T.build_config(opt_level=2, required_pass=["ConvertLayout"]):
        assert "NHWC" in seq(mod).script()
    with tvm.transform.PassContext(opt_level=3, disabled_pass=["ConvertLayout"]):
        assert "NHWC" not in seq(mod).script()
    with pytest.raises(ValueError, match="instruments"):
        T.build_config(trace=print)
    assert relay.build_config is T.build_config  # tvm.relay.build_config, as before TVM 0.7


def test_to_mixed_precision_computes_in_float16():
    mod = _conv_bn_module()
    half = T.ToMixedPrecision("float16")(mod)
    calls = {
        b.value.op.name: b.value
        for block in half["main"].body.blocks
        for b in block.bindings
        if isinstance(b.value, relax.Call) and isinstance(b.value.op, tvm.ir.Op)
    }
    for name in ("relax.nn.conv2d", "relax.matmul"):
        assert all(a.ty.dtype == "float16" for a in calls[name].args), name
        assert calls[name].ty.dtype == "float16"  # TVM 0.19 accumulates in the mixed type
    np.testing.assert_allclose(_run(half), _run(mod), rtol=2e-2, atol=0.5)


def test_refused_arguments_and_layouts_say_why():
    with pytest.raises(TypeError, match="fskip"):
        T.EliminateCommonSubexpr(fskip=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kernel layout"):
        T.ConvertLayout({"nn.conv2d": ["NCHW4c", "default"]})
    with pytest.raises(TypeError, match="dict of op name"):
        T.ConvertLayout(["NHWC"])  # type: ignore[arg-type]


def test_each_pass_warns_with_its_row():
    from compile_engine_compat.deprecations import CompileEngineDeprecationWarning

    with pytest.warns(CompileEngineDeprecationWarning, match="relay.transform"):
        T.FoldConstant()


def test_user_passes_through_relays_decorators():
    seen: list[str] = []

    @T.function_pass(opt_level=1)
    def record(func, mod, ctx):
        seen.append(type(func).__name__)
        return func

    @T.module_pass(opt_level=1, name="Count")
    def count(mod, ctx):
        seen.append(str(len(mod.functions)))
        return mod

    mod = _conv_bn_module()
    assert tvm.transform.Sequential([record, count])(mod) is not None
    assert seen == ["Function", "1"]


def test_other_relay_passes_name_their_relax_counterpart():
    from compile_engine_compat.surfaces.import_alias import RelayRemovedError

    with pytest.raises(RelayRemovedError, match=r"tvm\.relax\.transform\.LegalizeOps"):
        T.LegalizeOps()
    with pytest.raises(RelayRemovedError, match="drop the pass"):
        T.NotARelayPass()


def test_bind_params_by_name_binds_and_keeps_the_numbers():
    mod = _conv_bn_module()
    rng = np.random.default_rng(1)  # the inputs _run draws
    x, w = rng.random((1, 3, 8, 8), dtype="float32"), rng.random((4, 3, 3, 3), dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bound = relay.build_module.bind_params_by_name(mod["main"], {"w": w, "nope": w})
    assert [p.name for p in bound.params] == ["x"]
    vm = relax.VirtualMachine(tvm.compile(tvm.IRModule({"main": bound}), "llvm"), tvm.cpu())
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x)).numpy(), _run(mod), rtol=1e-5)
    with pytest.raises(TypeError, match=r"relax\.Function"):
        relay.build_module.bind_params_by_name(mod, {})


def test_analysis_vars():
    x, y, v = relay.var("x", shape=(2,)), relay.var("y", shape=(2,)), relay.var("v", shape=(2,))
    body = relay.Let(v, relay.add(x, y), relay.exp(v))
    func = relay.Function([x], body)
    assert relay.analysis.free_vars(func) == [y]
    assert set(map(id, relay.analysis.all_vars(func))) == {id(x), id(y), id(v)}
    assert relay.analysis.free_type_vars(func) == []


def test_the_docs_page_says_which_pass_is_real_and_which_an_identity():
    from pathlib import Path

    page = Path(__file__).resolve().parents[2] / "docs" / "relay-passes-and-workloads.md"
    rows = {
        line.split("`")[1].split("(")[0]: line
        for line in page.read_text().splitlines()
        if line.startswith("| `") and "opt level" not in line
    }
    for name, kind in PASS_KINDS.items():
        assert rows[name].split("|")[3].strip().startswith(kind.split(":")[0]), name
        opt_level = getattr(T, name)() if name != "ConvertLayout" else T.ConvertLayout({})
        assert f"| {opt_level.info.opt_level} |" in rows[name], name


# -- upstream Relay test files (test_type_infer): AnnotateSpans, InferTypeLocal ---------------
def test_annotate_spans_is_an_identity_and_infer_type_local_types_in_place():
    x = relay.var("x", shape=(10, 10))
    sb = relay.ScopeBuilder()
    t1 = sb.let("t1", relay.log(x))
    sb.ret(relay.add(t1, x))
    func = relay.Function([x], sb.get())
    mod = tvm.IRModule.from_expr(func)
    assert T.AnnotateSpans()(mod).same_as(mod)
    tp = relay.TensorType((10, 10))
    assert T.InferTypeLocal(func) == relay.FuncType([tp], tp)
    assert func.checked_type == relay.FuncType([tp], tp) and t1.checked_type == tp
