"""Legacy program: FFI users of the registered globals (py_converter, RAF, tvm-clj style).

``relay/testing/py_converter.py`` jitted each primitive op through the global engine and
registered the kernel as ``_lowered_op_<hash>``; bindings called ``relay.backend._CompileEngine*``
by name.
"""

from __future__ import annotations

import numpy as np
import tvm
import tvm_ffi
from tvm import relax
from tvm.relay.backend import compile_engine


def op_function():
    x = relax.Var("x", relax.TensorType((6,), "float32"))
    y = relax.Var("y", relax.TensorType((6,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.multiply(x, y)))
        bb.emit_func_output(out)
    return bb.get()["main"]


def main():
    engine = compile_engine.get()
    tgt = tvm.target.Target("llvm")
    op = op_function()
    key = compile_engine.CCacheKey(op, tgt)
    name = f"_lowered_op_{tvm_ffi.structural_hash(op)}"  # was: tvm.ir.structural_hash
    if not tvm.get_global_func(name, allow_missing=True):
        jitted = engine.jit(key, tgt)
        tvm.register_global_func(name, jitted, override=True)  # was: tvm.register_func
    x = tvm.runtime.tensor(np.arange(6, dtype="float32"))
    y = tvm.runtime.tensor(np.full(6, 2.0, dtype="float32"))
    out = tvm.runtime.tensor(np.empty(6, dtype="float32"))  # was: nd.array(numpy.empty(...))
    tvm.get_global_func(name)(x, y, out)

    # A binding that only knows the global names.
    get_engine = tvm.get_global_func("relay.backend._CompileEngineGlobal")
    list_items = tvm.get_global_func("relay.backend._CompileEngineListItems")
    flat = list_items(get_engine())
    assert len(flat) % 2 == 0
    return {"out": out.numpy().tolist(), "items": len(flat) // 2}


if __name__ == "__main__":
    import compile_engine_compat

    compile_engine_compat.install()
    print(main())
