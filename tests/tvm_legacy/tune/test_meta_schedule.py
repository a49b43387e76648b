"""``tvm.meta_schedule`` and its ``relay_integration`` (TVM 0.12-0.19 spellings): the refusals
here, extraction and a ``tune_relay``/``compile_relay`` run behind the ``tune`` marker."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.deprecations import CompileEngineDeprecationWarning
from compile_engine_compat.tvm_legacy import meta_schedule
from compile_engine_compat.tvm_legacy.graph_executor import GraphModule
from compile_engine_compat.tvm_legacy.meta_schedule import relay_integration as ms_relay
from compile_engine_compat.tvm_legacy.tune.records import TuningRecordsError


@pytest.fixture(scope="module")
def conv_dense():
    """conv2d + relu, then dense: two kernels with a reduction."""
    data = relay.var("data", shape=(1, 4, 8, 8))
    weight = relay.var("weight", shape=(8, 4, 3, 3))
    dense_w = relay.var("dense_w", shape=(10, 512))
    conv = relay.nn.relu(relay.nn.conv2d(data, weight, padding=(1, 1)))
    out = relay.nn.dense(relay.reshape(conv, (1, 512)), dense_w)
    mod = tvm.IRModule.from_expr(relay.Function([data, weight, dense_w], out))
    rng = np.random.default_rng(0)
    params = {
        "weight": rng.standard_normal((8, 4, 3, 3)).astype("float32"),
        "dense_w": rng.standard_normal((10, 512)).astype("float32"),
    }
    return mod, params, rng.standard_normal((1, 4, 8, 8)).astype("float32")


def test_meta_schedule_is_tvm_s_tir_meta_schedule_under_its_old_path():
    from tvm.s_tir import meta_schedule as modern

    with pytest.warns(
        CompileEngineDeprecationWarning, match=r"tvm\.s_tir\.meta_schedule\.tune_tir"
    ):
        assert meta_schedule.tune_tir is modern.tune_tir
    with pytest.raises(AttributeError, match="no 'relay_build_everything'"):
        _ = meta_schedule.relay_build_everything


@pytest.mark.tune  # a module build (seconds): kept out of the default suite
def test_extract_tasks_gives_the_kernels_of_the_build(conv_dense):
    mod, params, _ = conv_dense
    with pytest.warns(CompileEngineDeprecationWarning, match="relax_integration"):
        tasks = ms_relay.extract_tasks(mod, "llvm", params)
    names = [task.task_name for task in tasks]
    assert any("conv2d" in n for n in names) and any("matmul" in n for n in names), names
    for task in tasks:
        assert task.weight == 1 and task.dispatched == [task.mod]
        assert isinstance(task.mod["main"], tvm.tirx.PrimFunc)


def test_compile_relay_refuses_what_tune_relay_did_not_write(conv_dense):
    mod, params, _ = conv_dense
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TuningRecordsError, match="re-tune with tune_relay"):
            ms_relay.compile_relay(object(), mod, "llvm", params)
        with pytest.raises(ValueError, match="'graph' or 'vm'"):
            ms_relay.compile_relay(ms_relay.TunedRecords("x"), mod, "llvm", params, backend="aot")
        with pytest.raises(ValueError, match="max_trials_global"):
            ms_relay.tune_relay(mod, params, "llvm", "unused", max_trials_global=0)


@pytest.mark.tune
@pytest.mark.filterwarnings("ignore")
def test_tune_relay_then_compile_relay_keeps_the_output(conv_dense, tmp_path):
    mod, params, data = conv_dense

    def run(lib):
        module = GraphModule(lib["default"](tvm.cpu()))
        module.set_input("data", data)
        module.run()
        return module.get_output(0).numpy()

    untuned = run(relay.build(mod, target="llvm", params=params))
    database = ms_relay.tune_relay(mod, params, "llvm", tmp_path / "work", max_trials_global=3)
    assert len(database) == 2  # the convolution's kernel and the dense's
    np.testing.assert_allclose(
        run(ms_relay.compile_relay(database, mod, "llvm", params)), untuned, rtol=1e-4, atol=1e-5
    )
