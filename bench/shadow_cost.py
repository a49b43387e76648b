"""What shadow mode costs: a jit kernel call with and without COMPILE_ENGINE_COMPAT_SHADOW.

Run: python bench/shadow_cost.py  (prints one line per function; numbers go to the README).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from tvm import relax

from compile_engine_compat import compile_engine, shadow_mode

R = relax.op


def dense_bias_relu(n: int, k: int, m: int) -> relax.Function:
    x = relax.Var("x", relax.TensorType([n, k], "float32"))
    w = relax.Var("w", relax.TensorType([k, m], "float32"))
    b = relax.Var("b", relax.TensorType([m], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b]):
        with bb.dataflow():
            y = bb.emit(R.nn.relu(bb.emit(R.add(bb.emit(R.matmul(x, w)), b))))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()["main"]


def per_call(kernel, args, repeat: int) -> float:
    kernel(*args)
    start = time.perf_counter()
    for _ in range(repeat):
        kernel(*args)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    warnings.simplefilter("ignore")
    engine = compile_engine.get()
    for n, k, m in [(4, 8, 16), (64, 64, 64)]:
        func = dense_bias_relu(n, k, m)
        rng = np.random.default_rng(0)
        args = [rng.standard_normal(s).astype("float32") for s in ((n, k), (k, m), (m,))]
        args.append(np.empty((n, m), "float32"))
        engine.clear()
        plain = per_call(engine.jit(func, "llvm"), args, 200)
        with shadow_mode():
            shadow = engine.jit(func, "llvm")
            start = time.perf_counter()
            shadow(*args)
            first = time.perf_counter() - start
            shadowed = per_call(shadow, args, 200)
        print(
            f"dense_bias_relu {n}x{k}x{m}: plain {plain * 1e6:.0f} us/call, shadowed "
            f"{shadowed * 1e6:.0f} us/call ({shadowed / plain:.1f}x), first shadowed call "
            f"{first * 1e3:.0f} ms (compiles the modern path)"
        )


if __name__ == "__main__":
    main()
