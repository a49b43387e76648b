"""``ccompiler``: Relay's example external codegen, as C source the system C compiler builds.

TVM <=0.19 shipped it in C++ (``relay.ext.ccompiler``): a partition of elementwise ``add``,
``subtract`` and ``multiply`` on tensors of one shape became a C function. This one writes the
same C, against TVM 0.27's calling convention (``__tvm_ffi_<symbol>``: the inputs, then the
output, as tensors), as a C-source runtime module; ``export_library`` compiles it with the
system C compiler, as does the first run of a build that was not exported.
"""

from __future__ import annotations

from typing import Any

import tvm

from compile_engine_compat.relay._impl.registry import RelayOp
from compile_engine_compat.relay._impl.to_relax import infer
from compile_engine_compat.relay.expr import Call, Var
from compile_engine_compat.relay.function import Function
from compile_engine_compat.relay.ty import TensorType

__all__ = ["C_OPS", "PRELUDE", "c_source_module", "codegen"]

#: The Relay ops ccompiler takes, and their C operator.
C_OPS = {"add": "+", "subtract": "-", "multiply": "*"}

#: What every generated file starts with: reading a tensor argument of TVM's FFI.
PRELUDE = r"""#include <stdint.h>
#include <stdlib.h>
#include <tvm/ffi/c_api.h>

/* TVM's export compiles C sources with the system C++ compiler: keep the symbols unmangled. */
#ifdef __cplusplus
#define CEC_EXPORT extern "C" TVM_FFI_DLL_EXPORT
#else
#define CEC_EXPORT TVM_FFI_DLL_EXPORT
#endif

static DLTensor* cec_tensor(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)arg->v_ptr;
  return (DLTensor*)((char*)arg->v_obj + sizeof(TVMFFIObject));
}

static float* cec_data(const TVMFFIAny* arg) {
  DLTensor* t = cec_tensor(arg);
  return (float*)((char*)t->data + t->byte_offset);
}
"""


def c_source_module(code: str, symbols: list[str]) -> Any:
    """A C-source runtime module of ``code`` exporting ``symbols``."""
    create = tvm.get_global_func("runtime.CSourceModuleCreate")
    return create(code, "c", symbols, [])


class CcompilerError(ValueError):
    """A partition ccompiler cannot compile (the op or the types it names)."""


def _shape(ty: Any, what: str) -> tuple[int, ...]:
    if not isinstance(ty, TensorType) or ty.dtype != "float32":
        raise CcompilerError(f"ccompiler takes float32 tensors; {what} is {ty!r}")
    return ty.concrete_shape


def codegen(func: Function) -> Any:
    """The C-source module of a ``ccompiler`` partition (Relay's ``relay.ext.ccompiler``).

    Parameters
    ----------
    func : relay.Function
        The partition, with its ``global_symbol``.

    Returns
    -------
    tvm.runtime.Module
        C source exporting the symbol.

    Raises
    ------
    CcompilerError
        For an op other than add, subtract and multiply, or operands of other shapes or dtypes.
    """
    if not isinstance(func, Function):
        raise CcompilerError(f"ccompiler takes a Relay function, got {type(func).__name__}")
    symbol = str(func.attrs["global_symbol"])
    infer(func)
    shape = _shape(func.body.checked_type, "the partition's result")
    size = 1
    for dim in shape:
        size *= dim
    names: dict[int, str] = {id(p): f"in{i}" for i, p in enumerate(func.params)}
    lines: list[str] = []
    temps: list[str] = []

    def emit(node: Any) -> str:
        if id(node) in names:
            return names[id(node)]
        if (
            not (isinstance(node, Call) and isinstance(node.op, RelayOp))
            or node.op.name not in C_OPS
        ):
            what = node.op.name if isinstance(node, Call) and hasattr(node.op, "name") else node
            raise CcompilerError(f"ccompiler takes add, subtract and multiply only, not {what}")
        for arg in node.args:
            if isinstance(arg, Var) and id(arg) not in names:
                raise CcompilerError(f"free variable {arg!r} in the partition")
            if _shape(arg.checked_type, f"an operand of {node.op.name}") != shape:
                raise CcompilerError("ccompiler takes operands of one shape (no broadcasting)")
        a, b = (emit(arg) for arg in node.args)
        out = "out" if node is func.body else f"t{len(temps)}"
        if out != "out":
            temps.append(out)
            lines.append(f"  float* {out} = (float*)malloc({size} * sizeof(float));")
        c_op = C_OPS[node.op.name]
        lines.append(f"  for (int64_t i = 0; i < {size}; ++i) {out}[i] = {a}[i] {c_op} {b}[i];")
        names[id(node)] = out
        return out

    emit(func.body)
    n = len(func.params)
    inputs = "".join(f"  float* in{i} = cec_data(&args[{i}]);\n" for i in range(n))
    frees = "".join(f"  free({t});\n" for t in temps)
    code = (
        PRELUDE + f"\nCEC_EXPORT int __tvm_ffi_{symbol}(void* self, const TVMFFIAny* args, "
        "int32_t num_args, TVMFFIAny* result) {\n"
        f"  if (num_args != {n + 1}) {{\n"
        f'    TVMFFIErrorSetRaisedFromCStr("ValueError", "{symbol}: expected {n + 1} tensors");\n'
        "    return -1;\n  }\n"
        + inputs
        + f"  float* out = cec_data(&args[{n}]);\n"
        + "\n".join(lines)
        + "\n"
        + frees
        + "  result->type_index = kTVMFFINone;\n  result->v_int64 = 0;\n  return 0;\n}\n"
    )
    return c_source_module(code, [symbol])
