"""A partitioned model: a small ResNet with every conv2d+bias(+relu) offloaded to a C-source
codegen registered as ``relay.ext.convc`` runs to the end and matches the unpartitioned build."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import tvm

from compile_engine_compat.relay._impl.origin import relay_origin
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.surfaces.import_alias import install, installed, uninstall

PRELUDE = """#include <stdint.h>
#include <stdlib.h>
#include <tvm/ffi/c_api.h>
#ifdef __cplusplus
#define EXPORT extern "C" TVM_FFI_DLL_EXPORT
#else
#define EXPORT TVM_FFI_DLL_EXPORT
#endif
static float* data_of(const TVMFFIAny* arg) {
  DLTensor* t = arg->type_index == kTVMFFIDLTensorPtr
      ? (DLTensor*)arg->v_ptr : (DLTensor*)((char*)arg->v_obj + sizeof(TVMFFIObject));
  return (float*)((char*)t->data + t->byte_offset);
}
"""


def _conv_loop(out: str, args: list[str], call: Any, conv: Any, relu: bool) -> str:
    """C for conv2d (NCHW, OIHW, batch 1) + bias (+ relu) of one composite call."""
    data, weight, bias = args
    _, c, h, w = call.args[0].checked_type.concrete_shape
    o, _, kh, kw = call.args[1].checked_type.concrete_shape
    _, _, oh, ow = call.checked_type.concrete_shape
    sh, sw = (int(s) for s in conv.attrs.strides)
    pt, pl = (int(p) for p in conv.attrs.padding[:2])
    value = "acc > 0 ? acc : 0" if relu else "acc"
    return f"""  for (int o = 0; o < {o}; ++o)
    for (int y = 0; y < {oh}; ++y)
      for (int x = 0; x < {ow}; ++x) {{
        float acc = {bias}[o];
        for (int c = 0; c < {c}; ++c)
          for (int ky = 0; ky < {kh}; ++ky)
            for (int kx = 0; kx < {kw}; ++kx) {{
              int iy = y * {sh} - {pt} + ky, ix = x * {sw} - {pl} + kx;
              if (iy >= 0 && iy < {h} && ix >= 0 && ix < {w})
                acc += {data}[(c * {h} + iy) * {w} + ix]
                     * {weight}[((o * {c} + c) * {kh} + ky) * {kw} + kx];
            }}
        {out}[(o * {oh} + y) * {ow} + x] = {value};
      }}
"""


def convc_codegen(func: Any) -> Any:
    """relay.ext.convc: C for the partition's conv2d+bias(+relu) composites (a partition with
    several outputs returns a tuple: one output tensor each, after the inputs)."""
    symbol = str(func.attrs["global_symbol"])
    infer(func)
    names = {id(p): f"in{i}" for i, p in enumerate(func.params)}
    results = list(func.body.fields) if hasattr(func.body, "fields") else [func.body]
    outs = {id(r): f"out{i}" for i, r in enumerate(results)}
    lines: list[str] = []
    temps: list[str] = []

    def emit(node: Any) -> str:
        if id(node) in names:
            return names[id(node)]
        composite = node.op.attrs["Composite"]  # only composites are offloaded
        args = [emit(a) for a in node.args]
        out = outs.get(id(node), f"t{len(temps)}")
        if id(node) not in outs:
            temps.append(out)
            size = int(np.prod(node.checked_type.concrete_shape))
            lines.append(f"  float* {out} = (float*)malloc({size} * sizeof(float));")
        inner = node.op.body
        relu = composite == "convc.conv2d_bias_relu"
        conv = (inner.args[0] if relu else inner).args[0]
        lines.append(_conv_loop(out, args, node, conv, relu))
        names[id(node)] = out
        return out

    for result in results:
        emit(result)
    n = len(func.params)
    code = (
        PRELUDE
        + f"EXPORT int __tvm_ffi_{symbol}(void* self, const TVMFFIAny* args, int32_t num_args,"
        " TVMFFIAny* result) {\n"
        + "".join(f"  float* in{i} = data_of(&args[{i}]);\n" for i in range(n))
        + "".join(f"  float* out{i} = data_of(&args[{n + i}]);\n" for i in range(len(results)))
        + "".join(lines)
        + "".join(f"  free({t});\n" for t in temps)
        + "  result->type_index = kTVMFFINone;\n  return 0;\n}\n"
    )
    return tvm.get_global_func("runtime.CSourceModuleCreate")(code, "c", [symbol], [])


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
    from tvm.relay.dataflow_pattern import is_op, wildcard

    tvm.register_func("relay.ext.convc", convc_codegen, override=True)
    conv_bias = is_op("nn.bias_add")(is_op("nn.conv2d")(wildcard(), wildcard()), wildcard())
    table = [
        ("convc.conv2d_bias_relu", is_op("nn.relu")(conv_bias)),
        ("convc.conv2d_bias", conv_bias),
    ]
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
    offloaded = [node for g in partitions for node in _composite_calls(relay_origin(mod[g]).body)]
    assert len(offloaded) == 6
    assert all(relay_origin(mod[g]).attrs["Compiler"] == "convc" for g in partitions)
    assert mod[partitions[0]].attrs["Codegen"] == "convc"  # the Relax form, for RunCodegen

    partitioned = _run(relay, mod, params, data)
    np.testing.assert_allclose(partitioned, reference, rtol=1e-4, atol=1e-4)


def _composite_calls(body: Any) -> list[Any]:
    from compile_engine_compat.relay.analysis.annotated_regions import region_graph_order

    return [
        n
        for n in region_graph_order(body)
        if hasattr(n, "op") and hasattr(n.op, "attrs") and "Composite" in n.op.attrs
    ]
