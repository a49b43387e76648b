"""``relay.transform.FuseOps`` and ``DefuseOps`` on the Relay graph, as TVM 0.19 fused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.fusion import is_primitive
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.transform.module_functions import relay_definitions

pytestmark = pytest.mark.usefixtures("installed_alias")


def _net() -> relay.Function:
    x = relay.var("x", shape=(1, 2, 4, 4))
    w = relay.var("w", shape=(2, 2, 3, 3))
    y = relay.nn.relu(relay.nn.conv2d(x, w, channels=2, kernel_size=(3, 3), padding=(1, 1)) + x)
    z = relay.exp(relay.reshape(y, (1, 32)))
    return relay.Function([x, w], relay.sum(z, axis=[1]))


def _fused(func: relay.Function, *args: int, **config: int) -> relay.Function:
    mod = tvm.IRModule()
    mod["main"] = func
    keys = {f"relay.FuseOps.{k}": v for k, v in config.items()}
    with tvm.transform.PassContext(opt_level=2, config=keys):
        out = relay.transform.FuseOps(*args)(mod)
    return relay_definitions(out)[out.get_global_var("main")]


def _groups(func: relay.Function) -> list[list[str]]:
    """The op names of each fused function, in call order (innermost first)."""
    found: list[list[str]] = []
    node = func.body
    while isinstance(node, relay.Call) and is_primitive(node.op):
        body, names = node.op.body, []
        while isinstance(body, relay.Call):
            names.append(body.op.name)
            body = body.args[0]
        found.insert(0, names[::-1])
        node = node.args[0]
    return found


def test_an_anchor_takes_its_elementwise_consumers_and_a_reduction_its_elementwise_input():
    fused = _fused(_net())
    assert _groups(fused) == [["nn.conv2d", "add", "nn.relu"], ["reshape"], ["exp", "sum"]]
    assert isinstance(fused.body, relay.Call)  # an injective op stays out of a reduction
    assert int(fused.body.op.attrs["Primitive"]) == 1


def test_level_0_gives_each_op_its_function_and_max_depth_caps_a_group():
    assert len(_groups(_fused(_net(), 0))) == 6
    x = relay.var("x", shape=(2, 3))
    chain = relay.exp(relay.exp(relay.exp(relay.exp(x))))
    assert _groups(_fused(relay.Function([x], chain), max_depth=2)) == [["exp", "exp"]] * 2


@pytest.mark.parametrize("link_params", [False, True])
def test_link_params_keeps_the_constants_in_the_fused_function(link_params):
    x = relay.var("x", shape=(2, 3))
    func = relay.Function([x], relay.exp(x + relay.const(np.ones((2, 3), "float32"))))
    call: Any = _fused(func, link_params=link_params).body
    assert len(call.args) == (1 if link_params else 2)
    add = call.op.body.args[0]
    assert isinstance(add.args[1], relay.Constant) == link_params


def test_defuse_ops_restores_the_graph_and_the_fused_module_builds():
    func = _net()
    mod = tvm.IRModule()
    mod["main"] = _fused(func)
    back = relay.transform.DefuseOps()(mod)
    assert relay_equal(relay_definitions(back)[back.get_global_var("main")], func)
    x = np.random.rand(1, 2, 4, 4).astype("float32")
    w = np.random.rand(2, 2, 3, 3).astype("float32")
    results = []
    for module in (mod, tvm.IRModule.from_expr(func)):
        runner = tvm.contrib.graph_executor.GraphModule(
            relay.build(module, "llvm")["default"](tvm.cpu())
        )
        runner.run(x=x, w=w)
        results.append(runner.get_output(0).numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-5)


def test_a_called_primitive_function_is_kept_whole():
    # TVM 0.19's FuseOps left an already-fused function alone (its body was not walked again).
    x = relay.var("x", shape=(10, 20))
    body = relay.squeeze(relay.exp(relay.add(x, relay.const(1, "float32"))))
    primitive = relay.Function([x], body).with_attr("Primitive", 1)
    y = relay.var("y", shape=(10, 20))
    fused = _fused(relay.Function([y], relay.Call(primitive, [y])))
    assert isinstance(fused.body, relay.Call) and is_primitive(fused.body.op)
    assert relay_equal(fused.body.op.body, body)
