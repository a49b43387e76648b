"""Tuning without tuning runs: task extraction from a small model, the record format and its
refusals, the ``[tune]`` extra's refusal (the runs themselves: ``-m tune``, test_tutorials.py)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy import auto_scheduler, autotvm
from compile_engine_compat.tvm_legacy.autotvm.tuner import RandomTuner, XGBTuner
from compile_engine_compat.tvm_legacy.tune import extra
from compile_engine_compat.tvm_legacy.tune.measure import MeasureConfig
from compile_engine_compat.tvm_legacy.tune.records import (
    SIGNATURE,
    TuningRecordsError,
    append_record,
    read_records,
)
from compile_engine_compat.tvm_legacy.tune.search import shim_seconds, time_weights


@pytest.fixture(scope="module")
def small_model():
    """conv2d + relu, twice the same conv (one kernel, two calls), then dense."""
    data = relay.var("data", shape=(1, 4, 8, 8))
    weight = relay.var("weight", shape=(4, 4, 3, 3))
    dense_w = relay.var("dense_w", shape=(10, 256))
    conv = relay.nn.relu(relay.nn.conv2d(data, weight, padding=(1, 1)))
    conv = relay.nn.relu(relay.nn.conv2d(conv, weight, padding=(1, 1)))
    out = relay.nn.dense(relay.reshape(conv, (1, 256)), dense_w)
    func = relay.Function([data, weight, dense_w], out)
    rng = np.random.default_rng(0)
    params = {
        "weight": rng.standard_normal((4, 4, 3, 3)).astype("float32"),
        "dense_w": rng.standard_normal((10, 256)).astype("float32"),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = tvm.IRModule.from_expr(func)
        tasks = autotvm.task.extract_from_program(mod["main"], params=params, target="llvm")
        search_tasks, weights = auto_scheduler.extract_tasks(mod["main"], params, "llvm")
    return mod, params, tasks, search_tasks, weights


def test_autotvm_tasks_are_tvm019s_template_workloads(small_model):
    mod, params, tasks, search_tasks, _ = small_model
    # As TVM 0.19 on llvm: the two equal convolutions one conv2d_NCHWc task, the dense its two
    # x86 templates.
    assert [task.name for task in tasks] == ["conv2d_NCHWc.x86", "dense_nopack.x86",
                                             "dense_pack.x86"]  # fmt: skip
    conv, nopack, pack = tasks
    assert conv.args == (("TENSOR", (1, 4, 8, 8), "float32"), ("TENSOR", (4, 4, 3, 3), "float32"),
                         (1, 1), (1, 1, 1, 1), (1, 1), "NCHW", "NCHW", "float32")  # fmt: skip
    assert conv.calls == 2 and nopack.args == pack.args
    for task in tasks:
        assert task.workload == (task.name, *task.args)
        assert len(task.config_space) > 1 and task.flop > 0
    # Tuning a task tunes the kernels of the shim's build that compute its op.
    built = {json.loads(t.workload_key)[0]: t.desc for t in search_tasks}
    assert [built[k.workload_key] for k in conv.kernels] == [
        name for name in built.values() if "conv2d" in name
    ]
    assert [k.workload_key for k in nopack.kernels] == [k.workload_key for k in pack.kernels]
    assert ["matmul" in built[k.workload_key] for k in pack.kernels] == [True]
    conv2d, dense = relay.op.get("nn.conv2d"), relay.op.get("nn.dense")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        only_conv = autotvm.task.extract_from_program(mod, params=params, target="llvm",
                                                      ops=(conv2d,))  # fmt: skip
        only_dense = autotvm.task.extract_from_program(mod, params=params, target="llvm",
                                                       ops=(dense,))  # fmt: skip
        on_cuda = autotvm.task.extract_from_program(mod, params=params, target="cuda",
                                                    ops=(dense,))  # fmt: skip
    assert [t.name for t in only_conv] == ["conv2d_NCHWc.x86"]
    assert [t.name for t in only_dense] == ["dense_nopack.x86", "dense_pack.x86"]
    assert [t.name for t in on_cuda] == ["dense_small_batch.gpu"]
    with pytest.raises(ValueError, match="llvm"):
        RandomTuner(on_cuda[0]).tune(n_trial=1)  # extracted as TVM 0.19 did, tuned on CPUs only


def test_auto_scheduler_tasks_carry_their_call_counts(small_model):
    _, _, _, search_tasks, weights = small_model
    by_name = dict(zip([t.desc for t in search_tasks], weights))
    assert sorted(by_name.values()) == [1, 2]  # the shared convolution is called twice
    assert all("conv2d" in name for name, w in by_name.items() if w == 2)


def test_tuners_and_scheduler_take_only_extracted_tasks(small_model):
    with pytest.raises(TypeError, match="extract_from_program"):
        XGBTuner(autotvm.task.create("dense", [], "llvm"))
    with pytest.raises(TypeError, match="extract_tasks"):
        auto_scheduler.TaskScheduler([object()])  # type: ignore[list-item]
    task = small_model[2][0]
    with pytest.raises(ValueError, match="n_trial"):
        RandomTuner(task).tune(n_trial=0)
    with pytest.raises(ValueError, match="number"):
        autotvm.LocalRunner(number=0)


def test_without_the_tune_extra_tuning_names_it(small_model, monkeypatch):
    monkeypatch.setattr(extra, "TUNE_EXTRA", ("psutil", "compile_engine_compat_no_such_module"))
    with pytest.raises(ImportError, match=r"compile-engine-compat\[tune\]"):
        RandomTuner(small_model[2][0]).tune(n_trial=1)


LEGACY_AUTOTVM = {
    "input": ["llvm", "conv2d_NCHWc.x86", [["TENSOR", [1, 3, 224, 224], "float32"]], {}],
    "config": {"index": 1, "code_hash": None, "entity": []},
    "result": [[0.001], 0, 1.2, 1700000000.0],
    "version": 0.2,
    "tvm_version": "0.19.0",
}
LEGACY_ANSOR = {"i": [["[\"key\"]", "llvm -keys=cpu", [], [], "", []], [[], []]],
                "r": [[0.001], 0, 1.0, 1700000000], "v": "v0.6"}  # fmt: skip


@pytest.mark.parametrize(
    ("line", "match"),
    [
        (LEGACY_AUTOTVM, "AutoTVM record written by TVM <=0.19"),
        (LEGACY_ANSOR, r"auto_scheduler \(Ansor\) record"),
        ({"anything": 1}, "not a compile-engine-compat tuning record"),
        ({"signature": SIGNATURE, "version": 99}, "version 99"),
    ],
    ids=["autotvm", "ansor", "foreign", "newer"],
)
def test_records_of_another_format_are_refused_by_format(tmp_path, line, match):
    log = tmp_path / "tuning.log"
    log.write_text(json.dumps(line) + "\n")
    with pytest.raises(TuningRecordsError, match=match):
        autotvm.apply_history_best(str(log))
    with pytest.raises(TuningRecordsError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto_scheduler.ApplyHistoryBest(str(log))
    with pytest.raises(TuningRecordsError):
        append_record(log, {"workload": "0"})  # never appended to someone else's file
    assert log.read_text() == json.dumps(line) + "\n"
    (tmp_path / "text.log").write_text("not json\n")
    with pytest.raises(TuningRecordsError, match="line 1"):
        list(read_records(tmp_path / "text.log"))


def test_records_are_appended_whole_and_read_back(tmp_path):
    log = tmp_path / "tuning.log"
    append_record(log, {"workload": "a", "use": "shim"})
    append_record(log, {"workload": "b", "use": "shim"})
    records = list(read_records(log))
    assert [r["workload"] for r in records] == ["a", "b"]
    assert all(r["signature"] == SIGNATURE and r["version"] == 1 for r in records)
    assert list(tmp_path.iterdir()) == [log]  # no staging file left behind


def _extract(func, include_simple_tasks=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod = tvm.IRModule.from_expr(func)
        return auto_scheduler.extract_tasks(mod["main"], None, "llvm",
                                            include_simple_tasks=include_simple_tasks)  # fmt: skip


def _two_convs():
    data = relay.var("data", shape=(1, 2, 6, 6))
    w1, w2 = relay.var("w1", shape=(2, 2, 3, 3)), relay.var("w2", shape=(3, 2, 3, 3))
    conv = relay.nn.relu(relay.nn.conv2d(data, w1, padding=(1, 1)))
    out = relay.nn.relu(relay.nn.conv2d(conv, w2, padding=(1, 1)))
    return relay.Function([data, w1, w2], out)


def test_a_primitive_function_is_one_kernel_as_in_tvm019():
    plain = _two_convs()
    marked = plain.with_attr("Primitive", tvm.tirx.IntImm("int32", 1))
    args = [relay.var(p.name_hint, shape=p.type_annotation.shape) for p in plain.params]
    caller = relay.Function(args, relay.Call(marked, args))
    assert len(_extract(plain)[0]) == 2  # Relax's fusion: one kernel per convolution
    tasks, weights = _extract(caller)
    assert len(tasks) == 1 and weights == [1]
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(tuple(int(d) for d in p.type_annotation.shape))
              .astype("float32") for p in plain.params]  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [relay.create_executor("graph", mod=tvm.IRModule.from_expr(f), target="llvm")
                   .evaluate()(*values).numpy() for f in (caller, plain)]  # fmt: skip
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5, atol=1e-5)


def test_shape_of_a_dynamic_shape_is_a_simple_task_never_timed():
    data = relay.var("data", shape=(relay.Any(), 4), dtype="float32")
    func = relay.Function([data], relay.shape_of(data))
    assert _extract(func) == ([], [])
    tasks, weights = _extract(func, include_simple_tasks=True)
    assert len(tasks) == 1 and weights == [1]
    assert not tasks[0].kernel.measurable and json.loads(tasks[0].workload_key)[1:] == [[2]]
    assert time_weights([tasks[0].kernel], MeasureConfig()) == [0.0]  # no trials for it


def test_time_weights_are_calls_times_the_shims_seconds(small_model):
    *_, search_tasks, _ = small_model
    conv = next(task.kernel for task in search_tasks if task.kernel.weight == 2)
    config = MeasureConfig(number=1, repeat=1)
    (weight,) = time_weights([conv], config)
    seconds = shim_seconds(conv, config)
    # Timed twice under a varying load: the same order of magnitude, twice one call's seconds.
    assert seconds is not None and 0 < weight < 1 and 0.2 < weight / (2 * seconds) < 5
