"""A legacy-style program run through the shim (``compile-engine-compat demo``).

It does what pre-0.8 code did with ``tvm.relay.backend.compile_engine`` (lower, print the TE
outputs, jit, run destination-passing, inspect the cache), with a Relax source, then checks every
kernel against ``tvm.compile`` + ``relax.VirtualMachine`` and prints the warnings ledger.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np


def _functions() -> dict[str, tuple[object, list[np.ndarray]]]:
    from tvm import relax
    from tvm.relax import TensorType

    rng = np.random.default_rng(0)

    def add3() -> object:
        x = relax.Var("x", TensorType([10], "float32"))
        bb = relax.BlockBuilder()
        with bb.function("main", [x]):
            with bb.dataflow():
                a = bb.emit(relax.op.add(x, x))
                out = bb.emit_output(bb.emit(relax.op.add(a, x)))
            bb.emit_func_output(out)
        return bb.get()["main"]

    def dense_bias_relu() -> object:
        x = relax.Var("x", TensorType([4, 8], "float32"))
        w = relax.Var("w", TensorType([8, 16], "float32"))
        b = relax.Var("b", TensorType([16], "float32"))
        bb = relax.BlockBuilder()
        with bb.function("main", [x, w, b]):
            with bb.dataflow():
                mm = bb.emit(relax.op.matmul(x, w))
                out = bb.emit_output(bb.emit(relax.op.nn.relu(bb.emit(relax.op.add(mm, b)))))
            bb.emit_func_output(out)
        return bb.get()["main"]

    def softmax_matmul() -> object:
        x = relax.Var("x", TensorType([4, 8], "float32"))
        w = relax.Var("w", TensorType([8, 3], "float32"))
        bb = relax.BlockBuilder()
        with bb.function("main", [x, w]):
            with bb.dataflow():
                s = bb.emit(relax.op.nn.softmax(x, axis=-1))
                out = bb.emit_output(bb.emit(relax.op.matmul(s, w)))
            bb.emit_func_output(out)
        return bb.get()["main"]

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype("float32")

    return {
        "(x + x) + x": (add3(), [np.ones(10, "float32")]),
        "relu(x @ w + b)": (dense_bias_relu(), [f32(4, 8), f32(8, 16), f32(16)]),
        "softmax(x) @ w": (softmax_matmul(), [f32(4, 8), f32(8, 3)]),
    }


def _new_path(func: object, arrays: Sequence[np.ndarray]) -> np.ndarray:
    import tvm
    from tvm import relax

    ex = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    vm = relax.VirtualMachine(ex, tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def main(argv: Sequence[str] = ()) -> int:
    """Run the demo; return 0 when every kernel matches the new path."""
    import compile_engine_compat
    from compile_engine_compat import compile_engine

    compile_engine_compat.reset_ledger()
    ok = True
    # The demo's own legacy calls are the point of the demo: show each warning once.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        engine = compile_engine.get()
        for title, (func, arrays) in _functions().items():
            cached = engine.lower(func, "llvm")
            print(f"== {title}: lowered to {cached.prim_fn_var.name_hint}")
            print(f"   inputs : {list(cached.inputs)}")
            print(f"   outputs: {list(cached.outputs)}")
            kernel = engine.jit(func, "llvm")
            out = np.empty([int(d) for d in cached.outputs[0].shape], "float32")
            kernel(*arrays, out)
            expected = _new_path(func, arrays)
            match = np.allclose(out, expected, rtol=1e-5, atol=1e-5)
            ok = ok and match
            verdict = "matches" if match else "DIFFERS FROM"
            print(f"   jit -> {verdict} tvm.compile + relax.VirtualMachine")
        again = engine.lower(_functions()["(x + x) + x"][0], "llvm")
        print(f"\ncache: {len(engine.items())} entries; a rebuilt function hits the same entry:")
        for _key, value in engine.items():
            print(f"   {value.cached_func.prim_fn_var.name_hint}: use_count={value.use_count}")
        rebuilt = engine.lower(_functions()["(x + x) + x"][0], "llvm")
        print(f"   same object on hit: {again.same_as(rebuilt)}")
        engine.clear()
        print(f"   after clear(): {len(engine.items())} entries")

    print(f"\n{len(caught)} deprecation warning(s) shown, e.g.:")
    if caught:
        first = caught[0]
        print(f"   {first.filename}:{first.lineno}: {first.message}")
    print("\nlegacy-call ledger (api, site, count):")
    for entry in compile_engine_compat.ledger():
        print(f"   {entry.count:3d}  {entry.api:45s} {entry.filename}:{entry.lineno}")
    print("\nOK: every kernel matches the new path" if ok else "\nFAILED: a kernel differs")
    return 0 if ok else 1
