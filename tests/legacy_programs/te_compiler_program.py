"""Legacy program: upstream ``test_te_compiler`` (TVM 0.8-0.19), a Relax source in place of Relay.

Runs untouched apart from the function builder, once ``compile_engine_compat.install()`` is on.
"""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax
from tvm.relay.backend import te_compiler  # served by compile_engine_compat.install()


def get_func(shape):
    # was: x = relay.var("x", shape=shape); y = relay.add(x, x); z = relay.add(y, x)
    #      f = relay.Function([x], z); mod = tvm.IRModule.from_expr(f); mod = InferType()(mod)
    x = relax.Var("x", relax.TensorType(list(shape), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.add(x, x))
            z = bb.emit_output(bb.emit(relax.op.add(y, x)))
        bb.emit_func_output(z)
    return bb.get()["main"]


def main():
    engine = te_compiler.get()
    engine.clear()
    z1 = engine.lower(get_func((10,)), "llvm")
    z2 = engine.lower(get_func((10,)), "llvm")
    z3 = engine.lower(get_func(()), "llvm")
    assert z1.same_as(z2)
    assert not z3.same_as(z1)
    for target, dev in [("llvm", tvm.cpu(0))]:
        f = engine.jit(get_func((10,)), target)
        x = tvm.runtime.tensor(np.ones(10).astype("float32"), device=dev)  # was: tvm.nd.array
        y = tvm.runtime.empty((10,), device=dev)  # was: tvm.nd.empty
        f(x, y)
        np.testing.assert_allclose(y.numpy(), x.numpy() * 3)
    use_counts = sorted(v.use_count for _, v in engine.items())
    engine.clear()
    return {"names": [z1.prim_fn_var.name_hint, z3.prim_fn_var.name_hint], "use_counts": use_counts}


if __name__ == "__main__":
    import compile_engine_compat

    compile_engine_compat.install()
    print(main())
