"""``relay.ext.convc``: a C-source codegen for conv2d (+bias) (+relu) composites, shared by the
BYOC model tests (``tests/relay/transform/test_byoc_model.py``, the ResNet-18 one of
``tests/relay/test_whole_models.py``).

It emits plain C loops (NCHW data, OIHW weights, batch 1, no groups or dilation) against TVM 0.27's
calling convention (``__tvm_ffi_<symbol>``: the inputs, then one output tensor per result).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import tvm

from compile_engine_compat.relay._impl.to_relax import infer

#: The composites the codegen takes, most specific first (MergeComposite tries them in order).
CONV_BIAS_RELU = "convc.conv2d_bias_relu"
CONV_BIAS = "convc.conv2d_bias"
CONV = "convc.conv2d"

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


def convc_pattern_table(with_bare_conv: bool = False) -> list[tuple[str, Any]]:
    """conv2d+bias_add+relu, then conv2d+bias_add (then conv2d alone, if ``with_bare_conv``)."""
    from compile_engine_compat.relay.dataflow_pattern import is_op, wildcard

    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    conv_bias = is_op("nn.bias_add")(conv, wildcard())
    table = [(CONV_BIAS_RELU, is_op("nn.relu")(conv_bias)), (CONV_BIAS, conv_bias)]
    return [*table, (CONV, conv)] if with_bare_conv else table


def _conv_of(composite: str, body: Any) -> Any:
    """The nn.conv2d call inside a composite's body."""
    if composite == CONV_BIAS_RELU:
        body = body.args[0]
    if composite in (CONV_BIAS_RELU, CONV_BIAS):
        body = body.args[0]
    attrs = body.attrs
    if (
        int(attrs.groups) != 1
        or any(int(d) != 1 for d in attrs.dilation)
        or (str(attrs.data_layout), str(attrs.kernel_layout)) != ("NCHW", "OIHW")
    ):
        raise ValueError(f"convc takes NCHW/OIHW conv2d without groups or dilation, not {attrs}")
    return body


def _conv_loop(out: str, args: list[str], call: Any, conv: Any, relu: bool) -> str:
    """C for conv2d (NCHW, OIHW, batch 1) (+ bias) (+ relu) of one composite call."""
    data, weight = args[:2]
    start = f"{args[2]}[o]" if len(args) == 3 else "0.0f"
    n, c, h, w = call.args[0].checked_type.concrete_shape
    if n != 1:
        raise ValueError(f"convc takes batch 1, not {n}")
    o, _, kh, kw = call.args[1].checked_type.concrete_shape
    _, _, oh, ow = call.checked_type.concrete_shape
    sh, sw = (int(s) for s in conv.attrs.strides)
    pt, pl = (int(p) for p in conv.attrs.padding[:2])
    value = "acc > 0 ? acc : 0" if relu else "acc"
    return f"""  for (int o = 0; o < {o}; ++o)
    for (int y = 0; y < {oh}; ++y)
      for (int x = 0; x < {ow}; ++x) {{
        float acc = {start};
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
    """relay.ext.convc: C for the partition's conv composites (a partition with several outputs
    returns a tuple: one output tensor each, after the inputs)."""
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
        composite = str(node.op.attrs["Composite"])  # only composites are offloaded
        args = [emit(a) for a in node.args]
        out = outs.get(id(node), f"t{len(temps)}")
        if id(node) not in outs:
            temps.append(out)
            size = int(np.prod(node.checked_type.concrete_shape))
            lines.append(f"  float* {out} = (float*)malloc({size} * sizeof(float));")
        conv = _conv_of(composite, node.op.body)
        lines.append(_conv_loop(out, args, node, conv, composite == CONV_BIAS_RELU))
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


def register_convc() -> None:
    """Register :func:`convc_codegen` as ``relay.ext.convc`` (under ``install()``: Relay form)."""
    tvm.register_func("relay.ext.convc", convc_codegen, override=True)


def composite_calls(body: Any) -> list[Any]:
    """The calls of composite functions in a Relay graph, in graph order."""
    from compile_engine_compat.relay.analysis.annotated_regions import region_graph_order

    return [
        n
        for n in region_graph_order(body)
        if hasattr(n, "op") and hasattr(n.op, "attrs") and "Composite" in n.op.attrs
    ]
