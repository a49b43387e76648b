"""MergeComposite, AnnotateTarget, MergeCompilerRegions and PartitionGraph: Relay's output."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.origin import relay_origin
from compile_engine_compat.relay.analysis.annotated_regions import (
    AnnotatedRegionSet,
    is_annotation,
    region_graph_order,
)
from compile_engine_compat.relay.dataflow_pattern import is_op, wildcard
from compile_engine_compat.relay.transform import (
    AnnotateTarget,
    MergeCompilerRegions,
    MergeComposite,
    PartitionGraph,
)


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.fixture
def acc_ops() -> Iterator[None]:
    """add and multiply taken by compiler "acc" (op attributes are process-wide)."""
    for name in ("add", "multiply"):
        relay.op.get(name).set_attr("target.acc", lambda expr: True)
    yield
    for name in ("add", "multiply"):
        relay.op.get(name).reset_attr("target.acc")


def _graph() -> tuple[Any, Any]:
    """exp(x + y) * (x + y): add and multiply around a host op."""
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,))
    s = relay.add(x, y)
    return relay.Function([x, y], relay.multiply(relay.exp(s), s)), s


def _main(mod: tvm.IRModule) -> Any:
    return relay_origin(mod["main"])


def test_merge_composite_makes_local_composite_functions():
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,))
    mod = tvm.IRModule.from_expr(relay.Function([x, y], relay.nn.relu(relay.add(x, y))))
    table = [("acc.add_relu", is_op("nn.relu")(is_op("add")(wildcard(), wildcard())))]
    out = _main(MergeComposite(table)(mod))
    assert out.body.op.attrs == {
        "PartitionedFromPattern": "add_nn.relu_",
        "Composite": "acc.add_relu",
    }
    assert out.body.args == [x, y]


def test_annotate_target_wraps_each_node_in_begin_and_end(acc_ops):
    func, _ = _graph()
    out = _main(AnnotateTarget("acc")(tvm.IRModule.from_expr(func)))
    # The body's end names the multiply's compiler; its inputs enter through begins.
    assert is_annotation(out.body, "annotation.compiler_end")
    assert out.body.attrs["compiler"] == "acc"
    multiply = out.body.args[0]
    assert [is_annotation(a, "annotation.compiler_begin") for a in multiply.args] == [True, True]
    exp_end = multiply.args[0].args[0]
    assert exp_end.attrs["compiler"] == "default"  # exp is the host's


def test_regions_merge_unless_that_makes_a_cycle(acc_ops):
    func, _ = _graph()
    mod = MergeCompilerRegions()(AnnotateTarget("acc")(tvm.IRModule.from_expr(func)))
    regions = AnnotatedRegionSet(_main(mod).body)
    acc = [r for r in regions if r.target == "acc"]
    # add -> exp -> multiply and add -> multiply: merging add and multiply would pass through
    # the host's exp in both directions, so they stay two regions.
    assert len(acc) == 2
    x, y = relay.var("x", shape=(3,)), relay.var("y", shape=(3,))
    chain = relay.Function([x, y], relay.multiply(relay.add(x, y), y))
    mod = MergeCompilerRegions()(AnnotateTarget("acc")(tvm.IRModule.from_expr(chain)))
    assert len([r for r in AnnotatedRegionSet(_main(mod).body) if r.target == "acc"]) == 1


def test_partition_graph_makes_global_functions_with_relays_attributes(acc_ops):
    func, _ = _graph()
    mod = tvm.IRModule.from_expr(func)
    mod = PartitionGraph()(MergeCompilerRegions()(AnnotateTarget("acc")(mod)))
    names = sorted(g.name_hint for g in mod.get_global_vars())
    assert names == ["main", "tvmgen_default_acc_main_0", "tvmgen_default_acc_main_1"]
    for name in names[1:]:
        partition = relay_origin(mod[name])
        assert partition.attrs["Compiler"] == "acc"
        assert partition.attrs["global_symbol"] == name
        assert int(partition.attrs["Primitive"]) == 1 and int(partition.attrs["Inline"]) == 1
        assert mod[name].attrs["Codegen"] == "acc"  # the Relax form, for RunCodegen
    main = _main(mod)
    assert not any(is_annotation(n) for n in region_graph_order(main.body))  # none left
    assert isinstance(main.body.op, tvm.ir.GlobalVar)


def test_a_relax_function_without_relay_graph_is_refused():
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2,), "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    with pytest.raises(TypeError, match="PartitionGraph: @main is a Relax function"):
        PartitionGraph()(bb.get())


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="pattern table"):
        MergeComposite(None)
    with pytest.raises(TypeError, match=r"\(name, pattern\[, check\]\)"):
        MergeComposite([("acc.x",)])
    with pytest.raises(ValueError, match="at least one target"):
        AnnotateTarget([])
    with pytest.raises(TypeError, match="mod_name"):
        PartitionGraph(mod_name=3)  # type: ignore[arg-type]
