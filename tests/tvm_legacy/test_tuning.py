"""Tuning under ``install()``: apply-history scopes run (one warning; empty records change no
build); the entry points the shim cannot serve import and refuse at the call, naming
``tvm.s_tir.meta_schedule`` (tests/tvm_legacy/tune tests what is served)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import tvm

from compile_engine_compat import CompileEngineDeprecationWarning, relay
from compile_engine_compat.api_table import lookup
from compile_engine_compat.tvm_legacy import auto_scheduler, autotvm
from compile_engine_compat.tvm_legacy.tuning import TuningRemovedError

REFUSED = [
    lambda: autotvm.record.pick_best("in.log", "out.log"),
    lambda: auto_scheduler.SearchTask(func=None, args=(), target="llvm"),
    lambda: auto_scheduler.auto_schedule(None),
    lambda: auto_scheduler.LocalRPCMeasureContext(),
]


@pytest.mark.parametrize("call", REFUSED, ids=range(len(REFUSED)))
def test_tuning_entry_points_refuse_at_the_call_naming_meta_schedule(call):
    with pytest.raises(TuningRemovedError) as raised:
        call()
    message = str(raised.value)
    assert "tvm.s_tir.meta_schedule" in message
    assert f"MIGRATION.md#{lookup('tvm.autotvm.tuning').anchor}" in message
    assert importlib.import_module("tvm.s_tir.meta_schedule")  # what it names exists in 0.27
    assert isinstance(raised.value, NotImplementedError)


def test_history_scopes_run_with_one_warning_and_the_build_is_unchanged():
    x = relay.var("x", shape=(4,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    data = np.arange(4, dtype="float32")

    def build_and_run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib = relay.build(mod, target="llvm")
        return tvm.relax.VirtualMachine(lib.get_lib(), tvm.cpu())["main"](
            tvm.runtime.tensor(data)
        ).numpy()

    plain = build_and_run()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scope = auto_scheduler.ApplyHistoryBest([])
    ours = [w for w in caught if issubclass(w.category, CompileEngineDeprecationWarning)]
    assert len(ours) == 1 and "auto_scheduler" in str(ours[0].message)
    with scope:
        assert auto_scheduler.DispatchContext.current is scope
        np.testing.assert_array_equal(build_and_run(), plain)
    assert auto_scheduler.DispatchContext.current is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autotvm.apply_history_best([]), autotvm.FallbackContext():
            np.testing.assert_array_equal(build_and_run(), plain)
    assert auto_scheduler.register_workload(len) is len
    assert auto_scheduler.register_workload("name")(len) is len
    assert auto_scheduler.is_auto_scheduler_enabled() is False


def test_a_tutorial_that_tunes_behind_a_flag_runs_under_install():
    """The imports a tuning tutorial does at the top succeed; only the tuning call refuses."""
    program = textwrap.dedent(
        """
        import compile_engine_compat
        compile_engine_compat.install()
        from tvm import auto_scheduler, autotvm
        from tvm.autotvm.tuner import XGBTuner
        import tvm.auto_scheduler
        TUNE = False
        if TUNE:
            XGBTuner(None)
        try:
            auto_scheduler.auto_schedule(None)
        except NotImplementedError as err:
            print("refused:", type(err).__name__)
        print(auto_scheduler is tvm.auto_scheduler, autotvm.tuner.XGBTuner is XGBTuner)
        """
    )
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", program],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    assert "refused: TuningRemovedError" in out and "True True" in out
