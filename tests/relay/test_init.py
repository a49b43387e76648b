"""The ``relay`` namespace: every legacy name the Relay wing warns about has an API table row."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay


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
        "tvm.device",
        "tvm.gpu",
        "tvm.cl",
        "tvm.mtl",
        # Relay programs end to end: passes, params, tuning, targets, DLPack.
        "relay.transform",
        # The vendors' path (BYOC).
        "relay.dataflow_pattern",
        "relay.op.contrib.register_pattern_table",
        "relay.transform.MergeComposite",
        "relay.transform.PartitionGraph",
        "relay.build_module.bind_params_by_name",
        "tvm.auto_scheduler",
        "tvm.autotvm.tuning",
        "target.constructors",
        "tvm.nd.dlpack",
        # Relay programs end to end: the importers, reloading an export, the VM, param dicts
        "relay.frontend.from_onnx",
        "relay.frontend.from_pytorch",
        "relay.frontend.from_tflite",
        "relay.frontend.unserved",
        "relay.vm",
        "relay.save_param_dict",
        "tvm.runtime.load_module",
        # The IR side: the expression functors, relay.analysis, the rest of relay.transform
        "relay.expr_functor",
        "relay.analysis",
        "relay.transform.more_passes",
        # QNN: automatic quantization
        "relay.quantize",
        # The Relay interpreter: the Prelude, run_as_python
        "relay.prelude",
        "relay.testing.run_as_python",
        # Tuning: MetaSchedule over Relay (TVM 0.12-0.19)
        "tvm.meta_schedule.relay_integration",
    }
    assert names <= set(API_TABLE)


def test_the_names_tvm_019_re_exported_are_the_same_objects():
    assert relay.op.Call is relay.Call and relay.op.const is relay.const
    assert relay.op.image.Expr is relay.Expr and relay.op.nn.const is relay.const
    assert relay.op.vision.expr is relay.expr and relay.op.nn.expr is relay.expr
    assert relay.op.reg is relay.op.op and relay.reg is relay.op.op
    assert relay.op.target is tvm.target is relay.target
    # set where the package is assembled (the modules import each other): not seen by mypy
    assert getattr(relay.analysis, "build_module") is relay.build_module  # noqa: B009
    assert getattr(relay.analysis, "transform") is relay.transform  # noqa: B009
    assert getattr(relay.transform, "relay") is relay  # noqa: B009
    assert relay.analysis.IRModule is tvm.IRModule and relay.analysis.cpu is tvm.cpu
    assert relay.SequentialSpan is tvm.ir.SequentialSpan
    assert relay.op.nn.get_pad_tuple2d((1, 2)) == (1, 2, 1, 2)
    assert relay.op.nn.get_pad_tuple3d(1) == (1,) * 6
    with pytest.raises(ValueError, match="padding must have 1, 1 or 2 values"):
        relay.op.nn.get_pad_tuple1d((1, 2, 3))
