"""The ``relay`` namespace: every legacy name the Relay wing warns about has an API table row."""

from __future__ import annotations

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
    }
    assert names <= set(API_TABLE)
