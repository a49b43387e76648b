"""A partitioned model: a small ResNet with every conv2d+bias(+relu) offloaded to a C-source
codegen registered as ``relay.ext.convc`` (``tests/_byoc_codegen.py``) runs to the end and
matches the unpartitioned build."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import tvm
from _byoc_codegen import composite_calls, convc_pattern_table, register_convc

from compile_engine_compat.relay._impl.origin import relay_origin
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall


@pytest.fixture
def relay_alias() -> Iterator[Any]:
    was = installed()
    install()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tvm import relay

        yield relay
    if not was:
        uninstall()


def _small_resnet(relay: Any) -> tuple[Any, dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    params: dict[str, np.ndarray] = {}

    def conv(x: Any, name: str, cin: int, cout: int, stride: int, relu: bool) -> Any:
        w = relay.var(f"{name}_w", shape=(cout, cin, 3, 3))
        b = relay.var(f"{name}_b", shape=(cout,))
        params[w.name_hint] = rng.normal(0, 0.3, (cout, cin, 3, 3)).astype("float32")
        params[b.name_hint] = rng.normal(0, 0.1, (cout,)).astype("float32")
        y = relay.nn.conv2d(
            x, w, strides=(stride, stride), padding=(1, 1), channels=cout, kernel_size=(3, 3)
        )
        y = relay.nn.bias_add(y, b)
        return relay.nn.relu(y) if relu else y

    data = relay.var("data", shape=(1, 3, 16, 16))
    x = conv(data, "stem", 3, 8, 1, True)
    for i in range(2):  # two basic blocks: conv-bias-relu, conv-bias, add the shortcut, relu
        y = conv(conv(x, f"b{i}a", 8, 8, 1, True), f"b{i}b", 8, 8, 1, False)
        x = relay.nn.relu(relay.add(y, x))
    x = conv(x, "down", 8, 16, 2, True)
    x = relay.nn.batch_flatten(relay.nn.global_avg_pool2d(x))
    fc = relay.var("fc_w", shape=(10, 16))
    params["fc_w"] = rng.normal(0, 0.3, (10, 16)).astype("float32")
    out = relay.nn.dense(x, fc)
    free = relay.analysis.free_vars(out)
    return relay.Function(free, out), params


def _run(relay: Any, mod: Any, params: dict[str, np.ndarray], data: np.ndarray) -> np.ndarray:
    from tvm.contrib import graph_executor

    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("data", data)
    module.run()
    return module.get_output(0).numpy()


def test_partitioned_resnet_matches_the_unpartitioned_build(relay_alias):
    relay = relay_alias
    from tvm.relay import transform

    register_convc()
    table = convc_pattern_table()
    func, params = _small_resnet(relay)
    data = np.random.default_rng(1).uniform(-1, 1, (1, 3, 16, 16)).astype("float32")
    reference = _run(relay, tvm.IRModule.from_expr(func), params, data)

    mod = tvm.IRModule.from_expr(func)
    mod = transform.MergeComposite(table)(mod)
    mod = transform.AnnotateTarget(["convc"])(mod)
    mod = transform.MergeCompilerRegions()(mod)
    mod = transform.PartitionGraph()(mod)
    partitions = [g.name_hint for g in mod.get_global_vars() if g.name_hint != "main"]
    # stem + block 0's first conv, block 0's second conv ... : every conv is offloaded.
    # The stored functions are the Relax forms (mod[g] in this Relay-era code reads Relay back).
    stored = {g.name_hint: f for g, f in mod.functions.items()}
    offloaded = [node for g in partitions for node in composite_calls(relay_origin(stored[g]).body)]
    assert len(offloaded) == 6
    assert all(relay_origin(stored[g]).attrs["Compiler"] == "convc" for g in partitions)
    assert stored[partitions[0]].attrs["Codegen"] == "convc"  # the Relax form, for RunCodegen
    assert mod[partitions[0]].attrs["Compiler"] == "convc"  # the Relay view

    partitioned = _run(relay, mod, params, data)
    np.testing.assert_allclose(partitioned, reference, rtol=1e-4, atol=1e-4)
