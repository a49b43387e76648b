"""Relay-era strategies, relay.build/executors and the TVM <=0.19 names served by install()."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import te, topi

import compile_engine_compat
from compile_engine_compat import CompileEngineDeprecationWarning, relay, te_compiler
from compile_engine_compat.relay.op import OpStrategy, strategy
from compile_engine_compat.relay.op.op import SpecializedCondition
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr
from compile_engine_compat.tvm_legacy import autotvm, graph_executor


@pytest.fixture
def alias():
    compile_engine_compat.install()
    yield
    compile_engine_compat.uninstall()


def _plain_conv(data, kernel, strides, padding, dilation, out_dtype):
    return topi.nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)


def _conv_plus(amount):
    def compute(data, kernel, strides, padding, dilation, out_dtype):
        out = topi.nn.conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)
        return te.compute(out.shape, lambda *i: out(*i) + amount, name="shifted")

    return compute


def _te_schedule(outs):  # a Relay-era schedule: never run on modern TVM
    raise AssertionError("TE schedules must not run")


def _wide_strategy(attrs, inputs, out_type, target):
    """Three implementations; the best one applies only to 16 or more input channels."""
    s = OpStrategy()
    s.add_implementation(
        strategy.wrap_compute_conv2d(_conv_plus(1.0)),
        strategy.wrap_topi_schedule(_te_schedule),
        name="plus_one",
        plevel=5,
    )
    s.add_implementation(
        strategy.wrap_compute_conv2d(_conv_plus(2.0)), None, name="plus_two", plevel=12
    )
    with SpecializedCondition(inputs[0].shape[1] >= 16):
        s.add_implementation(
            strategy.wrap_compute_conv2d(_plain_conv), None, name="wide", plevel=30
        )
    return s


def _conv(channels):
    data = relay.var("data", shape=(1, channels, 5, 5))
    weight = relay.var("weight", shape=(4, channels, 3, 3))
    return relay.testing.run_infer_type(relay.nn.conv2d(data, weight, padding=(1, 1)))


def _tensors(call):
    return [te.placeholder(a.checked_type.concrete_shape) for a in call.args]


def test_relay_strategy_drives_selection():
    target = tvm.target.Target("llvm")
    op = relay.op.get("nn.conv2d")
    with TempOpAttr("nn.conv2d", "FTVMStrategy", _wide_strategy):
        narrow, wide = _conv(4), _conv(16)
        names = [
            i.name
            for i in te_compiler.get_valid_implementations(
                op, narrow.attrs, _tensors(narrow), narrow.checked_type, target
            )
        ]
        assert names == ["plus_one", "plus_two"]
        impls = te_compiler.get_valid_implementations(
            op, wide.attrs, _tensors(wide), wide.checked_type, target
        )
        assert [i.name for i in impls] == ["plus_one", "plus_two", "wide"]
        impl, outs = te_compiler.select_implementation(
            op, narrow.attrs, _tensors(narrow), narrow.checked_type, target, False
        )
        assert impl.name == "plus_two" and outs[0].name == "shifted"
    # The op's own legalization is back.
    names = [i.name for i in te_compiler.get_valid_implementations(op, None, [], None, target)]
    assert names == ["nn.conv2d.legalize"]


def test_relay_strategy_is_used_inside_lower_and_jit(engine):
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(3, 2, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=1))
    xs = np.random.default_rng(1).standard_normal((1, 2, 4, 4)).astype("float32")
    ws = np.random.default_rng(2).standard_normal((3, 2, 3, 3)).astype("float32")

    def run():
        out = tvm.runtime.empty((1, 3, 4, 4), "float32", tvm.cpu())
        engine.jit(f, "llvm")(tvm.runtime.tensor(xs), tvm.runtime.tensor(ws), out)
        return out.numpy()

    plain = run()
    engine.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with TempOpAttr("nn.conv2d", "FTVMStrategy", _wide_strategy):
            shifted = run()
    np.testing.assert_allclose(shifted, plain + 2.0, rtol=1e-5, atol=1e-5)
    skipped = [w for w in caught if "wrap_topi_schedule" in str(w.message)]
    assert skipped and "s_tir" in str(skipped[0].message)


def test_autotvm_computes_run_and_records_refuse_selection():
    seen = []

    @autotvm.register_topi_compute("shim/conv2d")
    def compute(cfg, data, kernel, strides, padding, dilation, out_dtype):
        seen.append(cfg.is_fallback)
        return _plain_conv(data, kernel, strides, padding, dilation, out_dtype)

    @autotvm.register_topi_schedule("shim/conv2d")
    def schedule(cfg, outs):
        raise AssertionError("never run")

    def fstrategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(
            strategy.wrap_compute_conv2d(compute), strategy.wrap_topi_schedule(schedule), "tuned"
        )
        return s

    call = _conv(4)
    target = tvm.target.Target("llvm")
    args = (relay.op.get("nn.conv2d"), call.attrs, _tensors(call), call.checked_type, target)
    with TempOpAttr("nn.conv2d", "FTVMStrategy", fstrategy), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        impl, _ = te_compiler.select_implementation(*args, True)
        assert impl.name == "tuned" and seen == [True]
        task = autotvm.task.create("shim/conv2d", [], target)
        cfg = autotvm.ConfigEntity(0, None, {}, [])
        record = (autotvm.MeasureInput(target, task, cfg), autotvm.MeasureResult((1.0,), 0, 1, 0))
        with pytest.warns(CompileEngineDeprecationWarning, match="no AutoTVM records"):
            context = autotvm.apply_history_best([record])
        with context:
            assert te_compiler.select_implementation(*args, False)[0].name == "tuned"
            with pytest.raises(autotvm.AutoTVMRecordsError, match=r"plevel.*s_tir"):
                te_compiler.select_implementation(*args, True)
        with autotvm.apply_history_best([]):  # nothing to ignore
            te_compiler.select_implementation(*args, True)


def test_generic_func_dispatches_on_target_keys():
    from compile_engine_compat.tvm_legacy.target import generic_func, override_native_generic_func

    @generic_func
    def pick():
        return "default"

    @pick.register(["gpu"])
    def _gpu():
        return "gpu"

    assert pick() == "default"
    with tvm.target.Target("cuda"):
        assert pick() == "gpu"
    with tvm.target.Target("llvm"):
        assert pick() == "default"
    named = override_native_generic_func("some_strategy")(lambda: 1)
    assert named.name == "some_strategy" and named() == 1


# -- relay.build and the executors --------------------------------------------------------------


def _mlp():
    x = relay.var("x", shape=(2, 4))
    w = relay.var("w", shape=(3, 4))
    b = relay.var("b", shape=(3,))
    out = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b, axis=-1))
    return relay.Function([x, w, b], relay.Tuple([out, relay.exp(x)]))


def test_relay_build_and_graph_module():
    rng = np.random.default_rng(3)
    xs, ws, bs = (rng.standard_normal(s).astype("float32") for s in ((2, 4), (3, 4), (3,)))
    with pytest.warns(CompileEngineDeprecationWarning, match="relay.build"):
        lib = relay.build(tvm.IRModule.from_expr(_mlp()), "llvm -mcpu=x86-64", params={"b": bs})
    with pytest.warns(CompileEngineDeprecationWarning, match="GraphModule"):
        module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("x", xs)
    module.set_input(w=ws)
    module.run()
    assert module.get_num_outputs() == 2
    np.testing.assert_allclose(
        module.get_output(0).numpy(), np.maximum(xs @ ws.T + bs, 0), rtol=1e-5
    )
    np.testing.assert_allclose(module.get_output(1).numpy(), np.exp(xs), rtol=1e-5)
    graph, built, params = relay.build(_mlp(), target="llvm")
    assert "inputs" in graph and built is not None and params == {}


def test_create_executor_evaluates_on_the_vm():
    with pytest.warns(CompileEngineDeprecationWarning, match="create_executor"):
        executor = relay.create_executor("graph", _mlp(), tvm.cpu(), "llvm")
    xs = np.ones((2, 4), "float32")
    result = executor.evaluate()(xs, np.ones((3, 4), "float32"), np.zeros(3, "float32"))
    np.testing.assert_allclose(result[0].numpy(), np.full((2, 3), 4.0, "float32"))
    with pytest.raises(ValueError, match="unknown executor kind"):
        relay.create_executor("interpreter2")


# -- the names install() serves -----------------------------------------------------------------


def test_install_serves_and_uninstall_removes_the_legacy_names(alias):
    import tvm.autotvm
    import tvm.contrib.graph_executor
    from tvm import autotvm as served

    assert served is autotvm and tvm.contrib.graph_executor is graph_executor
    assert tvm.tir.IntImm("int32", 3).value == 3
    assert tvm.te.SpecializedCondition is SpecializedCondition
    assert tvm.context("llvm") == tvm.cpu() == tvm.device("llvm")
    array = tvm.nd.array(np.arange(3, dtype="float32"), ctx=tvm.cpu())
    np.testing.assert_array_equal(array.asnumpy(), [0, 1, 2])
    assert tvm.nd.empty((2,), device=tvm.cpu()).shape == (2,)
    compile_engine_compat.uninstall()
    for name in ("context", "nd", "tir", "autotvm"):
        assert not hasattr(tvm, name), name
    assert not hasattr(tvm.te, "SpecializedCondition")
    assert not hasattr(tvm.runtime.Tensor, "asnumpy")
    assert "tvm.autotvm" not in sys.modules
    with pytest.raises(ValueError):
        tvm.device("llvm")
    compile_engine_compat.install()  # the fixture uninstalls again


def test_strategies_that_cannot_apply_are_refused():
    from compile_engine_compat.relay import UnsupportedRelayError

    with pytest.raises(UnsupportedRelayError, match=r"relax\.matmul.*register_implementation"):
        with TempOpAttr("nn.dense", "FTVMStrategy", _wide_strategy):
            pass
    with pytest.raises(UnsupportedRelayError, match=r"FTVMAlterOpLayout.*FLegalize"):
        with TempOpAttr("nn.conv2d", "FTVMAlterOpLayout", lambda *a: None):
            pass
    with TempOpAttr("nn.conv2d", "TOpPattern", 4):  # described Relay's fusion only
        assert relay.op.get("nn.conv2d").get_attr("TOpPattern") == 4
    assert relay.op.get("nn.conv2d").get_attr("TOpPattern") is None


def test_relay_computes_read_relay_attribute_names_inside_jit(engine):
    seen: dict[str, Any] = {}

    def compute(attrs, inputs, out_type):
        seen.update(channels=attrs.channels, padding=attrs.get_int_tuple("padding"))
        seen["out_dtype"] = attrs.out_dtype
        return [_plain_conv(inputs[0], inputs[1], attrs.strides, attrs.padding, (1, 1), "float32")]

    def fstrategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(compute, None, "reads_relay_names", 10)
        return s

    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(3, 2, 3, 3))
    f = relay.Function([x, w], relay.nn.conv2d(x, w, padding=1, channels=3))
    with TempOpAttr("nn.conv2d", "FTVMStrategy", fstrategy):
        engine.jit(f, "llvm")
    # Relax keeps no `channels`: it reads as Relay's default; unset out_dtype reads as "".
    assert seen == {"channels": None, "padding": (1, 1, 1, 1), "out_dtype": ""}


def test_every_name_the_front_end_warns_has_a_row():
    import ast
    import pathlib

    from compile_engine_compat import tvm_legacy
    from compile_engine_compat.api_table import API_TABLE

    roots = [pathlib.Path(relay.__file__).parent, pathlib.Path(tvm_legacy.__file__).parent]
    names = {
        node.args[0].value
        for root in roots
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in ("warn_legacy", "legacy_api")
        and isinstance(node.args[0], ast.Constant)
    }
    assert names == {
        "relay.build",
        "relay.create_executor",
        "relay.op.strategy.wrap_topi_schedule",
        "tvm.contrib.graph_executor.GraphModule",
        "tvm.autotvm.apply_history_best",
        "tvm.nd",
        "tvm.context",
    }
    assert names <= set(API_TABLE)
