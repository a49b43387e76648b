"""``tvm.autotvm`` served: computes keep running, tuning records refuse selection."""

from __future__ import annotations

import warnings

import pytest
import tvm
from _relay_strategies import conv_call, placeholders, plain_conv

from compile_engine_compat import CompileEngineDeprecationWarning, relay, te_compiler
from compile_engine_compat.relay.op import OpStrategy, strategy
from compile_engine_compat.relay.testing.temp_op_attr import TempOpAttr
from compile_engine_compat.tvm_legacy import autotvm
from compile_engine_compat.tvm_legacy.tune.records import SIGNATURE


def test_autotvm_computes_run_and_records_refuse_selection():
    seen = []

    @autotvm.register_topi_compute("shim/conv2d")
    def compute(cfg, data, kernel, strides, padding, dilation, out_dtype):
        seen.append(cfg.is_fallback)
        return plain_conv(data, kernel, strides, padding, dilation, out_dtype)

    @autotvm.register_topi_schedule("shim/conv2d")
    def schedule(cfg, outs):
        raise AssertionError("never run")

    def fstrategy(attrs, inputs, out_type, target):
        s = OpStrategy()
        s.add_implementation(
            strategy.wrap_compute_conv2d(compute), strategy.wrap_topi_schedule(schedule), "tuned"
        )
        return s

    call = conv_call(4)
    target = tvm.target.Target("llvm")
    args = (relay.op.get("nn.conv2d"), call.attrs, placeholders(call), call.checked_type, target)
    with TempOpAttr("nn.conv2d", "FTVMStrategy", fstrategy), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        impl, _ = te_compiler.select_implementation(*args, True)
        assert impl.name == "tuned" and seen == [True]
        task = autotvm.task.create("shim/conv2d", [], target)
        cfg = autotvm.ConfigEntity(0, None, {}, [])
        record = (autotvm.MeasureInput(target, task, cfg), autotvm.MeasureResult((1.0,), 0, 1, 0))
        with pytest.raises(autotvm.TuningRecordsError, match="re-tune"):
            autotvm.apply_history_best([record])  # TVM 0.19's records: another search space
        shim_record = {"signature": SIGNATURE, "version": 1, "workload": "0", "use": "shim"}
        with pytest.warns(CompileEngineDeprecationWarning, match="apply_history_best"):
            context = autotvm.apply_history_best([shim_record])
        with context:
            assert te_compiler.select_implementation(*args, False)[0].name == "tuned"
            with pytest.raises(autotvm.AutoTVMRecordsError, match=r"plevel.*s_tir"):
                te_compiler.select_implementation(*args, True)
        with autotvm.apply_history_best([]):  # nothing to ignore
            te_compiler.select_implementation(*args, True)
