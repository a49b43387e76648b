"""``relay.ExprFunctor``/``ExprVisitor``/``ExprMutator``: user passes over the Relay graph."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.deprecations import CompileEngineDeprecationWarning
from compile_engine_compat.relay._impl import origin
from compile_engine_compat.tvm_legacy import graph_executor


class ReluToClip(relay.ExprMutator):
    """Relay-era user code: nn.relu(x) becomes clip(x, 0, 6)."""

    def visit_call(self, call: Any) -> Any:
        new = super().visit_call(call)
        if new.op == relay.op.get("nn.relu"):
            return relay.clip(new.args[0], 0.0, 6.0)
        return new


@relay.transform.function_pass(opt_level=1)
class ReluToClipPass:
    """The same rewrite as a Relay function pass (a class, as Relay's docs wrote them)."""

    def transform_function(self, func: Any, mod: Any, ctx: Any) -> Any:
        return ReluToClip().visit(func)


def _relu_module() -> tvm.IRModule:
    x = relay.var("x", shape=(5,))
    return tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) * relay.const(2.0)))


def _build_and_run(mod: tvm.IRModule, data: np.ndarray) -> np.ndarray:
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, "llvm")
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("x", data)
    module.run()
    return module.get_output(0).numpy()


def test_an_expr_mutator_pass_in_sequential_changes_what_relay_build_runs(installed_alias):
    data = np.array([-3.0, -0.5, 0.5, 4.0, 100.0], dtype="float32")
    mod = _relu_module()
    seq = tvm.transform.Sequential([relay.transform.InferType(), ReluToClipPass()])
    with tvm.transform.PassContext(opt_level=3):
        rewritten = seq(mod)
    np.testing.assert_allclose(_build_and_run(mod, data), [0, 0, 1, 8, 200])
    np.testing.assert_allclose(_build_and_run(rewritten, data), [0, 0, 1, 8, 12])
    assert "clip(" in rewritten.astext() and "nn.relu" not in rewritten.astext()


def test_a_function_pass_decorating_a_function_sees_the_relay_function():
    seen: list[str] = []

    @relay.transform.function_pass(opt_level=0, name="Record")
    def record(func: Any, mod: Any, ctx: Any) -> Any:
        seen.append(type(func).__name__)
        return func

    mod = _relu_module()
    assert record(mod)["main"].same_as(mod["main"])  # unchanged: the same Relax function
    assert seen == ["Function"]
    assert record.info.name == "Record"


def test_the_pass_is_skipped_below_its_opt_level(installed_alias):
    mod = _relu_module()
    with tvm.transform.PassContext(opt_level=0):
        out = tvm.transform.Sequential([ReluToClipPass()])(mod)
    assert "nn.relu" in out.astext()


def test_a_relax_function_without_relay_origin_reaches_the_pass_as_relax():
    seen: list[Any] = []

    @relay.transform.function_pass(opt_level=0)
    def record(func: Any, mod: Any, ctx: Any) -> Any:
        seen.append(func)
        return func

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([2], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    record(bb.get())
    assert isinstance(seen[0], relax.Function)
    with pytest.raises(TypeError, match=r"relax\.PyExprMutator"):
        relay.ExprVisitor().visit(seen[0])


def test_visitor_visits_each_node_once_in_relays_order():
    x = relay.var("x", shape=(3,))
    shared = relay.exp(x)
    body = relay.Tuple([relay.add(shared, shared), relay.TupleGetItem(relay.Tuple([shared]), 0)])
    func = relay.Function([x], body)

    class Counter(relay.ExprVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[str] = []
            self.vars = 0

        def visit_call(self, call: Any) -> None:
            self.calls.append(call.op.name)
            super().visit_call(call)

        def visit_var(self, var: Any) -> None:
            self.vars += 1

    counter = Counter()
    counter.visit(func)
    assert counter.calls == ["add", "exp"]  # exp is shared: visited once (memo_map)
    assert counter.vars == 1
    assert counter.memo_map[shared] is None and func in counter.memo_map


def test_mutator_keeps_unchanged_nodes_and_rebuilds_changed_ones():
    x = relay.var("x", shape=(3,))
    y = relay.var("y", shape=(3,))
    left = relay.exp(x)
    func = relay.Function([x, y], relay.Tuple([left, relay.nn.relu(y)]))
    assert relay.ExprMutator().visit(func) is func
    out = ReluToClip().visit(func)
    assert out is not func and out.body.fields[0] is left
    assert out.body.fields[1].op == relay.op.get("clip")


def test_visit_takes_the_main_function_of_a_front_end_module():
    mod = _relu_module()
    calls: list[str] = []

    class Names(relay.ExprVisitor):
        def visit_call(self, call: Any) -> None:
            calls.append(call.op.name)
            super().visit_call(call)

    Names().visit(mod["main"])
    assert calls == ["multiply", "nn.relu"]
    assert origin.relay_of(mod) is not None


def test_functor_leaves_are_abstract_and_unknown_nodes_are_refused():
    functor = relay.ExprFunctor()
    with pytest.raises(NotImplementedError):
        functor.visit(relay.var("x", shape=(1,)))
    with pytest.raises(TypeError, match="unhandled case int"):
        relay.ExprVisitor().visit(3)


@pytest.mark.warnings_visible
def test_constructing_a_functor_warns_once_naming_the_relax_replacement():
    with pytest.warns(CompileEngineDeprecationWarning, match="PyExprMutator"):
        ReluToClip()
