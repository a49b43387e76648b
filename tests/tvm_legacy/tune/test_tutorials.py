"""Tuning programs as the TVM 0.19 tutorials wrote them, run end to end (``pytest -m tune``).

A ResNet-18 at 32x32 (14 AutoTVM tasks as TVM 0.19 extracted them, 19 auto_scheduler tasks, one per
kernel): a few tasks tuned with a handful of trials each, the records
applied in ``relay.build``, the output compared with the untuned build. A build under records
whose tuned schedules are forced in is compared too, so that the tuned-schedule path runs even
where the shim's schedule won every timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.cache import store_behind
from compile_engine_compat.relay.testing import resnet
from compile_engine_compat.tvm_legacy import auto_scheduler, autotvm
from compile_engine_compat.tvm_legacy.autotvm.tuner import GATuner, RandomTuner, XGBTuner
from compile_engine_compat.tvm_legacy.graph_executor import GraphModule

pytestmark = [pytest.mark.tune, pytest.mark.filterwarnings("ignore")]

TASKS = 3  # tuned tasks per program
TRIALS = 3


@pytest.fixture(scope="module")
def resnet18():
    mod, params = resnet.get_workload(num_layers=18, batch_size=1, image_shape=(3, 32, 32))
    data = np.random.default_rng(0).random((1, 3, 32, 32), dtype="float32")
    return mod, params, data, _run(mod, params, data)


def _run(mod, params, data, config=None):
    with tvm.transform.PassContext(opt_level=3, config=config or {}):
        lib = relay.build(mod, target="llvm", params=params)
    module = GraphModule(lib["default"](tvm.cpu()))
    module.set_input("data", data)
    module.run()
    return module.get_output(0).numpy()


def _forced(log, out):
    """``log`` with every record set to use its tuned schedule, written to ``out``."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for record in records:
        record["use"] = "tuned" if record["schedule"] else "shim"
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    return sum(1 for r in records if r["use"] == "tuned")


def test_autotvm_tutorial_tunes_applies_and_keeps_the_output(
    resnet18, tmp_path, capsys, monkeypatch
):
    mod, params, data, untuned = resnet18
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    assert len(tasks) == 14  # 12 convolutions, the dense's two x86 templates: as TVM 0.19
    log = tmp_path / "resnet18.log"
    measure = autotvm.measure_option(
        builder=autotvm.LocalBuilder(timeout=60),
        runner=autotvm.LocalRunner(number=2, repeat=1, min_repeat_ms=0, timeout=60),
    )
    for i, (task, tuner_class) in enumerate(zip(tasks, (XGBTuner, GATuner, RandomTuner))):
        tuner = tuner_class(task)
        n_trial = min(TRIALS, len(task.config_space))
        tuner.tune(
            n_trial=n_trial,
            measure_option=measure,
            early_stopping=10,
            callbacks=[
                autotvm.callback.progress_bar(n_trial, prefix=f"[Task {i + 1:2d}/{len(tasks)}] "),
                autotvm.callback.log_to_file(str(log)),
            ],
        )
        assert tuner.best_flops > 0
    shown = capsys.readouterr().out
    assert "[Task  1/14] Current/Best:" in shown and "GFLOPS | Progress: (" in shown
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # One record per kernel tuned: the 3x3 64-channel convolution is two kernels (one fused with
    # the residual add).
    assert len(records) == sum(len(task.kernels) for task in tasks[:TASKS]) > TASKS
    assert all(r["use"] in ("tuned", "shim") and r["shim_seconds"] for r in records)
    with autotvm.apply_history_best(str(log)):
        np.testing.assert_allclose(_run(mod, params, data), untuned, rtol=1e-4, atol=1e-5)
    forced = tmp_path / "forced.log"
    assert _forced(log, forced) >= 1
    # With the persistent cache on: the untuned build is stored, and a build under the records
    # neither loads it (its kernels get the tuned schedules) nor stores its own.
    cache = tmp_path / "cache"
    monkeypatch.setenv("COMPILE_ENGINE_COMPAT_CACHE_DIR", str(cache))
    _run(mod, params, data)
    store_behind.flush()  # the build returned; its store runs behind it
    stored = sorted(cache.rglob("*"))
    assert stored
    with autotvm.apply_history_best(str(forced)) as context:
        np.testing.assert_allclose(_run(mod, params, data), untuned, rtol=1e-4, atol=1e-5)
    assert context.records.applied >= 1
    assert sorted(cache.rglob("*")) == stored


def test_auto_scheduler_program_tunes_and_applies_under_its_key(resnet18, tmp_path):
    mod, params, data, untuned = resnet18
    tasks, weights = auto_scheduler.extract_tasks(mod["main"], params, "llvm")
    assert len(tasks) == 19 and sum(weights) > len(tasks)
    log = tmp_path / "ansor.json"
    scheduler = auto_scheduler.TaskScheduler(tasks[:TASKS], weights[:TASKS])
    scheduler.tune(
        auto_scheduler.TuningOptions(
            num_measure_trials=TASKS * TRIALS,
            runner=auto_scheduler.LocalRunner(repeat=1, min_repeat_ms=0),
            measure_callbacks=[auto_scheduler.RecordToFile(str(log))],
        )
    )
    assert all(cost < float("inf") for cost in scheduler.best_costs)
    forced = tmp_path / "forced.json"
    assert _forced(log, forced) >= 1
    key = {"relay.backend.use_auto_scheduler": True}
    with auto_scheduler.ApplyHistoryBest(str(forced)) as context:
        np.testing.assert_allclose(_run(mod, params, data, key), untuned, rtol=1e-4, atol=1e-5)
        assert context.records.applied >= 1
        applied = context.records.applied
        _run(mod, params, data)  # without the key: records not applied, as in TVM 0.19
        assert context.records.applied == applied


def test_tensor_intrinsics_import_lean_and_on_demand():
    program = (
        "import sys, time; import tvm\n"
        "from compile_engine_compat.boundary import cpu_tensor_intrinsics\n"
        "start = time.monotonic(); cpu_tensor_intrinsics()\n"
        "import tvm.s_tir.tensor_intrin as ti\n"
        "print(sorted(m for m in sys.modules if m.startswith('tvm.s_tir.tensor_intrin.')))\n"
        "from tvm.s_tir.tensor_intrin import arm_cpu\n"
        "print('tensor_intrin.arm_cpu' in arm_cpu.__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True, timeout=600
    ).stdout.splitlines()
    assert "x86" in out[0] and "cuda" not in out[0]
    assert out[1] == "True"
