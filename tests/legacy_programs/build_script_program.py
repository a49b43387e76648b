"""Legacy program: a build script setting the relay.backend PassContext keys.

auto_scheduler's task extraction entered a PassContext with ``relay.backend.use_auto_scheduler``
and ``relay.backend.disable_compile_engine_cache``, and cleared the global engine around builds.
"""

from __future__ import annotations

import tvm
from tvm import relax
from tvm.relay.backend import compile_engine


def get_func():
    x = relax.Var("x", relax.TensorType((4, 4), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.relu(bb.emit(relax.op.add(x, x)))))
        bb.emit_func_output(out)
    return bb.get()["main"]


def main():
    compile_engine.get().clear()
    with tvm.transform.PassContext(
        opt_level=3,
        config={
            "relay.backend.use_auto_scheduler": True,
            "relay.backend.disable_compile_engine_cache": True,
        },
        disabled_pass={"AutoSchedulerLayoutRewrite"},
    ):
        engine = compile_engine.get()
        first = engine.lower(get_func(), "llvm")
        second = engine.lower(get_func(), "llvm")
        cached_inside = len(engine.items())
    compile_engine.get().clear()
    return {
        "cached_inside": cached_inside,
        "distinct": not first.same_as(second),
        "names": [first.prim_fn_var.name_hint, second.prim_fn_var.name_hint],
    }


if __name__ == "__main__":
    import compile_engine_compat

    compile_engine_compat.install()
    print(main())
