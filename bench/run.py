"""Benchmark: the shim against bare TVM, the new path, NumPy and (if installed) PyTorch.

Run ``python bench/run.py`` (``--quick`` for a smoke run, ``--only NAME...`` for some steps:
``models``, ``interleaved``, ``probe``, ...; ``--batches 1 2 4 8 16 32`` adds ResNet-18 at each
batch size, time per image, off by default as it is long: ``--only batch_sweep --batches ...``
runs it alone). One process measures everything except the persistent-cache rows, which need
fresh processes by definition. It prints a Markdown table
(shim time, other time, ratio, goal); ``bench/RESULTS.md`` keeps a run's output. Each time is
the median of several rounds, shown with the fastest and slowest round; ratios are of medians.
No measurement waits for other libraries' threads to settle: the rows run back to back, as a
program's calls do (the interleaved NumPy/kernel row measures exactly that).

The model rows export PyTorch models (``bench/models.py``: ResNet-18, MobileNetV2, a 2-layer
transformer encoder, random weights) to ONNX in memory. The shim's side is a Relay-era program:
``relay.frontend.from_onnx`` (weights frozen into the module, Relay's default), ``relay.build``
and ``graph_executor.GraphModule``; against onnxruntime and PyTorch eager in this process, and for
the build time against ``tvm.compile`` of TVM's own Relax ONNX import with the same weights bound.

Parallel kernels run on the shim's pool (``compile_engine_compat.runtime.thread_pool``). The last
step runs the model and interleaved rows again in a child process on TVM's own pool
(``COMPILE_ENGINE_COMPAT_THREAD_POOL=tvm``; the pool is chosen once per process), each row
compared within that child: the ``[TVM pool]`` rows.

PyTorch, onnx and onnxruntime are benchmark extras (``pip install compile-engine-compat[bench]``);
the rows that need them are skipped without them.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import tvm
import tvm_ffi
from tvm import relax

# Importing the shim starts its thread pool (all physical cores unless the user chose), before TVM
# builds anything: the shim rows and the bare-TVM rows share that pool.
from compile_engine_compat import (
    CompileEngineDeprecationWarning,
    compile_engine,
    schedules,
    thread_pool,
)

warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
R = relax.op
#: What jit builds a plain "llvm" for; the new-path rows build for it too (same code generator).
HOST_TARGET = schedules.host_target()
QUICK = False


# -- Relax functions ------------------------------------------------------------------------------


def build(name: str, params: list[tuple[str, tuple[int, ...]]], body: Callable[..., Any]) -> Any:
    """``name(params) = body(bb, *vars)`` in one dataflow block, float32 parameters."""
    vars_ = [relax.Var(n, relax.TensorType(list(s), "float32")) for n, s in params]
    bb = relax.BlockBuilder()
    with bb.function(name, vars_):
        with bb.dataflow():
            out = bb.emit_output(body(bb, *vars_))
        bb.emit_func_output(out)
    return bb.get()[name]


# tanh is left out: a long inlined tanh chain makes LLVM's compile time explode (see RESULTS.md).
_CHAIN_OPS: list[Callable[[Any, Any], Any]] = [
    lambda v, y: R.add(v, y),
    lambda v, y: R.exp(v),
    lambda v, y: R.multiply(v, y),
    lambda v, y: R.negative(v),
    lambda v, y: R.sigmoid(v),
    lambda v, y: R.subtract(v, y),
    lambda v, y: R.abs(v),
]


def chain(n_ops: int, shape: tuple[int, ...] = (64, 64)) -> Any:
    """A chain of ``n_ops`` elementwise ops on ``x`` with a second input ``y``."""

    def body(bb: Any, x: Any, y: Any) -> Any:
        v = x
        for i in range(n_ops - 1):
            v = bb.emit(_CHAIN_OPS[i % len(_CHAIN_OPS)](v, y))
        return _CHAIN_OPS[(n_ops - 1) % len(_CHAIN_OPS)](v, y)

    return build("main", [("x", shape), ("y", shape)], body)


def matmul(n: int) -> Any:
    return build("main", [("a", (n, n)), ("b", (n, n))], lambda bb, a, b: R.matmul(a, b))


def conv2d(
    x: tuple[int, ...] = (1, 64, 56, 56),
    w: tuple[int, ...] = (64, 64, 3, 3),
    stride: int = 1,
    pad: int = 1,
) -> Any:
    return build(
        "main",
        [("x", x), ("w", w)],
        lambda bb, x, w: R.nn.conv2d(x, w, strides=[stride] * 2, padding=[pad] * 2),
    )


def ew_chain(shape: tuple[int, int] = (1024, 1024)) -> Any:
    """out = max(x * y + x, 0) * y - x: five elementwise ops."""

    def body(bb: Any, x: Any, y: Any) -> Any:
        v = bb.emit(R.add(bb.emit(R.multiply(x, y)), x))
        v = bb.emit(R.multiply(bb.emit(R.maximum(v, relax.const(0.0, "float32"))), y))
        return R.subtract(v, x)

    return build("main", [("x", shape), ("y", shape)], body)


# -- timing ---------------------------------------------------------------------------------------


class Timing(float):
    """Seconds: the median of the rounds, remembering the fastest and the slowest round."""

    best: float
    worst: float

    def __new__(cls, rounds: Sequence[float]) -> Timing:
        ordered = sorted(rounds)
        timing = super().__new__(cls, ordered[len(ordered) // 2])
        timing.best, timing.worst = ordered[0], ordered[-1]
        return timing


def per_call(fn: Callable[[], Any], budget: float = 0.5, repeat: int = 7) -> Timing:
    """The time per call: ``repeat`` rounds of ``budget / repeat`` seconds each, after a warm-up
    call; the median round, with the spread."""
    fn()  # warm-up
    start = time.perf_counter()
    fn()
    first = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / repeat / first))
    if QUICK:
        number, repeat = max(1, number // 10), 2
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - start) / number)
    return Timing(rounds)


def once(fn: Callable[[], Any], repeat: int = 3) -> Timing:
    """Single runs of a cold operation: the median of ``repeat``, with the spread."""
    times = []
    for _ in range(1 if QUICK else repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return Timing(times)


def tensors(*shapes: tuple[int, ...], seed: int = 0) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [tvm.runtime.tensor(rng.standard_normal(s).astype("float32")) for s in shapes]


def out_like(cached: Any) -> list[Any]:
    return [
        tvm.runtime.empty([int(d) for d in t.shape], str(t.dtype), tvm.cpu())
        for t in cached.outputs
    ]


def vm_for(func: Any, target: Any = None) -> Any:
    """The new path: ``tvm.compile`` (default pipeline) + VM, for ``HOST_TARGET`` by default."""
    target = HOST_TARGET if target is None else target
    ex = tvm.compile(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}), target)
    return relax.VirtualMachine(ex, tvm.cpu())["main"]


# -- the rows -------------------------------------------------------------------------------------

Row = tuple[str, float, str, float, str]  # what, shim s, against, other s, goal
ROWS: list[Row] = []


def row(what: str, shim: float, against: str, other: float, goal: str = "") -> None:
    ROWS.append((what, shim, against, other, goal))
    print(f"  {what}: {_fmt(shim)} vs {against} {_fmt(other)}", file=sys.stderr, flush=True)


def bench_cache_hit(engine: Any) -> None:
    f, g = chain(10), chain(10)  # structurally equal, distinct objects
    engine.lower(f, "llvm")
    hit = per_call(lambda: engine.lower(g, "llvm"))
    stripped = f.without_attr("global_symbol")

    def bare() -> None:
        tvm_ffi.structural_hash(g.without_attr("global_symbol"))
        tvm_ffi.structural_equal(g.without_attr("global_symbol"), stripped)

    row(
        "cache-hit `lower`, 10-op chain",
        hit,
        "bare structural_hash+equal",
        per_call(bare),
        "<= 1.2x",
    )


def bench_cold_jit(engine: Any) -> None:
    def shim() -> None:
        engine.clear()
        engine.jit(chain(10), "llvm")

    def new_path() -> None:
        vm_for(chain(10))

    # 7 rounds: a cold build varies more than a call (LLVM allocations, page faults).
    row(
        "cold `jit`, 10-op chain",
        once(shim, repeat=7),
        "tvm.compile + VM creation",
        once(new_path, repeat=7),
        "<= 0.25x",
    )
    # 2x3 measures the call path (the goal); 64x64 is compute-bound, where both run the same math.
    for shape in ((2, 3), (64, 64)):
        kernel = engine.jit(chain(10, shape), "llvm")
        cached = engine.lower(chain(10, shape), "llvm")
        x, y = tensors(shape, shape)
        (out,) = out_like(cached)
        vm = vm_for(chain(10, shape))
        row(
            f"jitted call, 10-op chain {shape[0]}x{shape[1]}",
            per_call(functools.partial(kernel, x, y, out)),
            "VM call",
            per_call(functools.partial(vm, x, y)),
        )


def bench_probe(engine: Any) -> None:
    """The acceptance probe's three definitions, measured the way a user writes them."""
    # 1. A cache hit on a structurally equal but distinct function object, each call a new one.
    count = 20 if QUICK else 200
    engine.lower(chain(10), "llvm")
    hits = [chain(10) for _ in range(count)]
    bares = [chain(10) for _ in range(count)]
    stripped = chain(10).without_attr("global_symbol")

    def lower_each() -> None:
        for func in hits:
            engine.lower(func, "llvm")

    def bare_each() -> None:
        for func in bares:
            tvm_ffi.structural_hash(func.without_attr("global_symbol"))
            tvm_ffi.structural_equal(func.without_attr("global_symbol"), stripped)

    rounds = [(once(lower_each, repeat=1), once(bare_each, repeat=1)) for _ in range(7)]
    row(
        "probe: cache-hit `lower`, distinct equal 10-op functions",
        Timing([shim / count for shim, _ in rounds]),
        "bare structural_hash+equal",
        Timing([bare / count for _, bare in rounds]),
        "<= 1.2x",
    )
    # 2. A cold jit of a fresh 10-op chain, target "llvm" on both sides, nothing cached.
    shim_times, tvm_times = [], []
    for rows in (71, 72, 73):
        shim_func, tvm_func = chain(10, (rows, 64)), chain(10, (rows, 64))
        start = time.perf_counter()
        engine.jit(shim_func, "llvm")
        shim_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        mod = tvm.IRModule({"main": tvm_func.with_attr("global_symbol", "main")})
        relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
        tvm_times.append(time.perf_counter() - start)
    row(
        "probe: cold `jit`, fresh 10-op chain (71..73)x64, target llvm",
        Timing(shim_times),
        "tvm.compile(IRModule) + VM creation",
        Timing(tvm_times),
        "<= 0.3x",
    )
    # 3. A 256x256 matmul kernel timed right after a NumPy check of its result.
    kernel = engine.jit(matmul(256), "llvm")
    a, b = tensors((256, 256), (256, 256))
    an, bn = a.numpy(), b.numpy()
    (out,) = out_like(engine.lower(matmul(256), "llvm"))
    numpy_time = per_call(functools.partial(np.matmul, an, bn))
    kernel(a, b, out)
    np.testing.assert_allclose(out.numpy(), an @ bn, rtol=1e-3, atol=1e-3)
    row("probe: matmul 256x256 right after a NumPy check", per_call(
        functools.partial(kernel, a, b, out)), "NumPy", numpy_time, "<= 1.2x")  # fmt: skip


def bench_interleaved(engine: Any) -> None:
    """NumPy's 256x256 matmul then the shim's, in one loop, against the two alone (no pauses)."""
    kernel = engine.jit(matmul(256), "llvm")
    a, b = tensors((256, 256), (256, 256))
    an, bn = a.numpy(), b.numpy()
    (out,) = out_like(engine.lower(matmul(256), "llvm"))

    def pair() -> None:
        np.matmul(an, bn)
        kernel(a, b, out)

    numpy_alone, kernel_alone, both = [], [], []
    for _ in range(3):  # interleaved, so that a change of machine load hits all three alike
        numpy_alone.append(per_call(functools.partial(np.matmul, an, bn), repeat=3))
        kernel_alone.append(per_call(functools.partial(kernel, a, b, out), repeat=3))
        both.append(per_call(pair, repeat=3))
    parts = Timing([n + k for n, k in zip(numpy_alone, kernel_alone)])
    row("NumPy 256² matmul then kernel 256² matmul, looped", Timing(both),
        "sum of the two alone, back to back", parts, "<= 1.3x")  # fmt: skip
    row("kernel 256² matmul back to back", Timing(kernel_alone), "NumPy 256² matmul",
        Timing(numpy_alone))  # fmt: skip


# -- models ---------------------------------------------------------------------------------------


def _model_stack() -> tuple[Any, Any, Any] | None:
    """``(models module, onnxruntime, torch)``, or None when a benchmark extra is missing."""
    try:
        import onnx  # noqa: F401
        import onnxruntime
        import torch
    except ImportError:
        print("  (torch, onnx or onnxruntime not installed: model rows skipped)", file=sys.stderr)
        return None
    sys.path.insert(0, str(Path(__file__).parent))
    import models

    return models, onnxruntime, torch


def _relay_model_stack() -> tuple[Any, Any, Any] | None:
    """:func:`_model_stack`, with the shim serving ``tvm.relay`` and PyTorch on 2 threads."""
    stack = _model_stack()
    if stack is not None:
        import compile_engine_compat

        compile_engine_compat.install()
        stack[2].set_num_threads(2)
    return stack


def _ort_session(ort: Any, data: bytes) -> Any:
    """An onnxruntime session of the ONNX model ``data`` on 2 threads."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def bench_models(engine: Any) -> None:
    """ResNet-18, MobileNetV2 and the encoder: relay.build + GraphModule, onnxruntime, PyTorch."""
    stack = _relay_model_stack()
    if stack is None:
        return
    models, ort, torch = stack
    for model in models.MODELS:
        _bench_model(models, model, ort, torch)


def _bench_model(models: Any, model: Any, ort: Any, torch: Any) -> None:
    import onnx
    from tvm import relay  # the shim's Relay front end, served by install()
    from tvm.contrib import graph_executor

    net, x = model.make(), model.example()
    data = models.onnx_bytes(net, x)
    mod, params = models.relax_module(data, model.input_shape)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()

    # As a Relay-era program writes it; the import is not part of the build time (TVM's side
    # below imports once too).
    relay_mod, relay_params = relay.frontend.from_onnx(
        onnx.load_from_string(data), {"input": model.input_shape}
    )

    def shim_build() -> Any:
        lib = relay.build(relay_mod, target="llvm", params=relay_params)
        return graph_executor.GraphModule(lib["default"](tvm.cpu()))

    bound = relax.transform.BindParams("main", params)(mod)

    def tvm_build() -> Any:
        return relax.VirtualMachine(tvm.compile(bound, target="llvm"), tvm.cpu())

    module = shim_build()
    module.set_input("input", x)
    module.run()
    np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)
    session = _ort_session(ort, data)
    np.testing.assert_allclose(session.run(None, {"input": x})[0], expected, rtol=1e-4, atol=1e-4)

    def shim_run() -> None:
        module.set_input("input", x)
        module.run()
        module.get_output(0)

    times: dict[str, list[float]] = {"shim": [], "ort": [], "torch": []}
    with torch.no_grad():
        eager = functools.partial(net, torch.from_numpy(x))
        for _ in range(1 if QUICK else 3):  # interleaved, so load changes hit all three alike
            times["shim"].append(per_call(shim_run, repeat=3))
            times["ort"].append(per_call(functools.partial(session.run, None, {"input": x}),
                                         repeat=3))  # fmt: skip
            times["torch"].append(per_call(eager, repeat=3))
    shim = Timing(times["shim"])
    what = f"{model.name}: relay.build + GraphModule"
    row(what, shim, "onnxruntime (2 threads)", Timing(times["ort"]), "<= 1.25x")
    row(what, shim, "PyTorch eager (2 threads)", Timing(times["torch"]), "<= 1.0x")
    goal = "<= 1.5x" if model.name.startswith("MobileNet") else ""
    build_time = once(shim_build, repeat=1 if QUICK else 2)
    row(f"{model.name}: build (relay.build + GraphModule)", build_time,
        "tvm.compile(llvm) + VM creation", once(tvm_build, repeat=1), goal)  # fmt: skip


def bench_batch_sweep(batches: Sequence[int]) -> None:
    """ResNet-18 at each batch size: time per image against onnxruntime's and the shim's at the
    first batch size (``--batches 1 2 4 8 16 32``; long, so only on request)."""
    stack = _relay_model_stack()
    if stack is None:
        return
    models, ort, _ = stack
    import onnx
    from tvm import relay  # the shim's Relay front end, served by install()
    from tvm.contrib import graph_executor

    model = models.MODELS[0]
    net = model.make()
    first: Timing | None = None
    for batch in batches:
        x = np.random.default_rng(0).standard_normal((batch, *model.input_shape[1:]))
        x = x.astype("float32")
        data = models.onnx_bytes(net, x)
        relay_mod, relay_params = relay.frontend.from_onnx(
            onnx.load_from_string(data), {"input": x.shape}
        )
        lib = relay.build(relay_mod, target="llvm", params=relay_params)
        module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
        session = _ort_session(ort, data)
        module.set_input("input", x)
        module.run()
        expected = session.run(None, {"input": x})[0]
        np.testing.assert_allclose(module.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)

        def shim_run(module: Any = module, x: np.ndarray = x) -> None:
            module.set_input("input", x)
            module.run()
            module.get_output(0)

        ort_run = functools.partial(session.run, None, {"input": x})
        shim = _per_image(per_call(shim_run, repeat=3), batch)
        other = _per_image(per_call(ort_run, repeat=3), batch)
        what = f"{model.name}, batch {batch}: time per image"
        row(what, shim, "onnxruntime (2 threads), per image", other, "<= 1.0x")
        if first is None:
            first = shim
        else:
            row(what, shim, f"the shim at batch {batches[0]}, per image", first, "<= 1.0x")


def _per_image(timing: Timing, batch: int) -> Timing:
    return Timing([timing.best / batch, timing / batch, timing.worst / batch])


_MODEL_CHILD = """
import json, sys, time, warnings
sys.path.insert(0, {bench!r})
warnings.simplefilter("ignore")
import models, tvm
import compile_engine_compat
compile_engine_compat.install()
from tvm import relay
from tvm.contrib import graph_executor
import onnx
model = models.MODELS[0]
proto = onnx.load_from_string(models.onnx_bytes(model.make(), model.example()))
mod, params = relay.frontend.from_onnx(proto, {{"input": model.input_shape}})
start = time.perf_counter()
lib = relay.build(mod, target="llvm", params=params)
module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
print(json.dumps({{"build": time.perf_counter() - start}}))
"""


def bench_model_cache() -> None:
    """A second process's relay.build of an unchanged ResNet-18, through the persistent cache."""
    if _model_stack() is None:
        return
    child = _MODEL_CHILD.format(bench=str(Path(__file__).parent))
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "cache")
        storing = _child_time(child, cache, "build")
        warm = _child_time(child, cache, "build")
    row("ResNet-18: relay.build + GraphModule, 2nd process (persistent cache)", warm,
        "1st process (builds, stores)", storing, "< 0.2 s")  # fmt: skip


def _child_time(child: str, cache: str | None, field: str) -> float:
    """Run ``child`` in a fresh process (with ``cache`` as the cache directory); its ``field``."""
    env = dict(os.environ)
    env.pop("COMPILE_ENGINE_COMPAT_CACHE_DIR", None)
    if cache:
        env["COMPILE_ENGINE_COMPAT_CACHE_DIR"] = cache
    out = subprocess.run(
        [sys.executable, "-c", child], env=env, capture_output=True, text=True, check=True
    ).stdout
    return float(json.loads(out.strip().splitlines()[-1])[field])


#: The child's setting: TVM's own pool (workers asleep between kernels, as the shim sets it).
TVM_POOL = {"COMPILE_ENGINE_COMPAT_THREAD_POOL": "tvm"}


def bench_tvm_pool() -> None:
    """The model and interleaved rows again in a child whose kernels run on TVM's own pool.

    The pool is chosen once per process (``thread_pool.start``), so TVM's needs another process.
    Each child row compares within the child.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        command = [sys.executable, __file__, "--only", "bench_models", "bench_interleaved",
                   "--json", str(out), *(["--quick"] if QUICK else [])]  # fmt: skip
        env = {**os.environ, **TVM_POOL}
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        for what, shim, against, other, goal in json.loads(out.read_text()):
            # [median, fastest, slowest] as rounds: a Timing's median, fastest and slowest again
            row(f"{what} [TVM pool]", Timing(shim), against, Timing(other), goal)


def _as_json(value: float) -> list[float]:
    if isinstance(value, Timing):
        return [float(value), value.best, value.worst]
    return [float(value)] * 3


# A plain "llvm" is the host CPU in jit (on AVX-512 hosts, 512-bit vectors: LLVM's 256-bit
# preference cleared where the CPU has one); GENERIC is what TVM alone builds for "llvm" (x86-64,
# SSE2); NARROW is the host CPU held to 256-bit vectors.
HOST = "llvm"
GENERIC = {"kind": "llvm", "mcpu": "x86-64"}
_NARROW_ATTRS = [a for a in map(str, HOST_TARGET.attrs.get("mattr", [])) if a != "-prefer-256-bit"]
NARROW = {**dict(HOST_TARGET.export()), "mattr": [*_NARROW_ATTRS, "+prefer-256-bit"]}
_CPU_TARGETS = (
    (f"llvm (host: {HOST_TARGET.attrs.get('mcpu', 'generic')})", HOST),
    ("generic x86-64", GENERIC),
    ("host, 256-bit vectors", NARROW),
)


def bench_matmul(engine: Any) -> None:
    for n in (256, 512, 1024, 2048):
        a, b = tensors((n, n), (n, n))
        an, bn = a.numpy(), b.numpy()
        numpy_time = per_call(functools.partial(np.matmul, an, bn))
        for label, target in _CPU_TARGETS:
            cached = engine.lower(matmul(n), target)
            kernel = engine.jit(matmul(n), target)
            (out,) = out_like(cached)
            kernel(a, b, out)
            np.testing.assert_allclose(out.numpy(), an @ bn, rtol=1e-3, atol=1e-3)
            goal = "<= 1.2x" if target is HOST else ""
            t = per_call(functools.partial(kernel, a, b, out))
            row(f"matmul {n}x{n} f32, target {label}", t, "NumPy", numpy_time, goal)


# ResNet-50 layers: (name, input shape, weight shape, stride, padding, goal against PyTorch).
_CONV_LAYERS = (
    ("3x3 1x64x56x56", (1, 64, 56, 56), (64, 64, 3, 3), 1, 1, "<= 1.0x"),
    ("3x3 1x128x28x28", (1, 128, 28, 28), (128, 128, 3, 3), 1, 1, "<= 1.5x"),
    ("3x3 1x256x14x14", (1, 256, 14, 14), (256, 256, 3, 3), 1, 1, "<= 1.5x"),
    ("1x1 1x64x56x56 -> 256", (1, 64, 56, 56), (256, 64, 1, 1), 1, 0, "<= 1.5x"),
    ("7x7/2 stem 1x3x224x224", (1, 3, 224, 224), (64, 3, 7, 7), 2, 3, "<= 1.5x"),
)


def bench_conv2d(engine: Any) -> None:
    for name, x_shape, w_shape, stride, pad, goal in _CONV_LAYERS:
        x, w = tensors(x_shape, w_shape)
        func = conv2d(x_shape, w_shape, stride, pad)
        vm = vm_for(func)
        expected = vm(x, w).numpy()
        new_path = None
        if name == _CONV_LAYERS[0][0]:  # the unscheduled path is slow: one layer is enough
            new_path = per_call(functools.partial(vm, x, w), budget=1.0, repeat=3)
        torch_time = _torch_conv(x.numpy(), w.numpy(), expected, stride, pad)
        for label, target in _CPU_TARGETS:
            cached = engine.lower(func, target)
            kernel = engine.jit(func, target)
            (out,) = out_like(cached)
            kernel(x, w, out)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-3)
            t = per_call(functools.partial(kernel, x, w, out))
            what = f"conv2d {name}, target {label}"
            if new_path is not None:
                row(what, t, "new path (VM, same host target)", new_path, "<= 1.0x")
            if torch_time is not None:
                row(what, t, "PyTorch CPU conv2d", torch_time, goal if target is HOST else "")


def bench_modern_pipeline(engine: Any) -> None:
    """tvm.compile with ``schedules.relax_pipeline`` (the migration target) against the shim."""
    from compile_engine_compat import schedules

    cases = (
        ("conv2d 3x3 1x64x56x56", conv2d(), ((1, 64, 56, 56), (64, 64, 3, 3))),
        ("matmul 512x512", matmul(512), ((512, 512), (512, 512))),
    )
    for what, func, shapes in cases:
        args = tensors(*shapes)
        mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
        pipeline_pass = schedules.relax_pipeline(HOST_TARGET)
        fast = relax.VirtualMachine(
            tvm.compile(mod, HOST_TARGET, relax_pipeline=pipeline_pass), tvm.cpu()
        )["main"]
        plain = vm_for(func)  # the default pipeline, same target
        np.testing.assert_array_equal(fast(*args).numpy(), plain(*args).numpy())
        cached = engine.lower(func, "llvm")
        kernel = engine.jit(func, "llvm")
        (out,) = out_like(cached)
        shim = per_call(functools.partial(kernel, *args, out))
        pipeline = per_call(functools.partial(fast, *args))
        row(
            f"{what}: tvm.compile + schedules.relax_pipeline", pipeline, "shim jit", shim, "<= 1.1x"
        )
        row(f"{what}: tvm.compile + schedules.relax_pipeline", pipeline, "tvm.compile default",
            per_call(functools.partial(plain, *args), budget=1.0, repeat=3))  # fmt: skip


def _resnet_block() -> tuple[Any, Any, Any] | None:
    """A ResNet basic block (conv-bn-relu-conv-bn-add-relu, 64 channels at 56x56) through
    ``torch.export`` and TVM's Relax importer: (Relax function, input array, PyTorch module)."""
    try:
        import torch
        from tvm.relax.frontend.torch import from_exported_program
    except ImportError:
        return None

    class Block(torch.nn.Module):
        def __init__(self, channels: int = 64) -> None:
            super().__init__()
            conv = functools.partial(torch.nn.Conv2d, channels, channels, 3, padding=1, bias=False)
            self.conv1, self.bn1 = conv(), torch.nn.BatchNorm2d(channels)
            self.conv2, self.bn2 = conv(), torch.nn.BatchNorm2d(channels)

        def forward(self, x: Any) -> Any:
            y = torch.relu(self.bn1(self.conv1(x)))
            return torch.relu(self.bn2(self.conv2(y)) + x)

    torch.manual_seed(0)
    block = Block().eval()
    x = torch.randn(1, 64, 56, 56)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.export's own deprecation chatter
        program = torch.export.export(block, (x,))
    mod = from_exported_program(program, keep_params_as_input=False)
    return mod["main"], x, block


def bench_torch_block(engine: Any) -> None:
    """A torch.export model: the shim's jit, tvm.compile + the shim's pipeline, tvm.compile."""
    from compile_engine_compat import schedules

    made = _resnet_block()
    if made is None:
        print("  (PyTorch not installed: skipped)", file=sys.stderr)
        return
    func, x, block = made
    import torch

    torch.set_num_threads(2)  # as in the conv2d rows

    arg = tvm.runtime.tensor(x.numpy())
    mod = tvm.IRModule({"main": func.with_attr("global_symbol", "main")})
    pipeline_pass = schedules.relax_pipeline(HOST_TARGET)
    fast = relax.VirtualMachine(
        tvm.compile(mod, HOST_TARGET, relax_pipeline=pipeline_pass), tvm.cpu()
    )["main"]
    default = vm_for(func)
    kernel = engine.jit(func, "llvm")
    (out,) = out_like(engine.lower(func, "llvm"))
    kernel(arg, out)
    with torch.no_grad():
        expected = block(x).numpy()
    for got in (out.numpy(), _first(fast(arg)).numpy(), _first(default(arg)).numpy()):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    shim = per_call(functools.partial(kernel, arg, out))
    what = "ResNet block (torch.export)"
    row(f"{what}: tvm.compile + schedules.relax_pipeline", per_call(functools.partial(fast, arg)),
        "shim jit", shim, "<= 1.1x")  # fmt: skip
    row(f"{what}: shim jit", shim, "tvm.compile default",
        per_call(functools.partial(default, arg), budget=1.0, repeat=3))  # fmt: skip
    with torch.no_grad():
        row(f"{what}: shim jit", shim, "PyTorch CPU", per_call(functools.partial(block, x)))


def _first(value: Any) -> Any:
    """The first tensor of a VM result (a tuple for an exported program)."""
    return value if isinstance(value, tvm.runtime.Tensor) else _first(value[0])


def _torch_conv(
    x: np.ndarray, w: np.ndarray, expected: np.ndarray, stride: int = 1, pad: int = 1
) -> float | None:
    try:
        import torch
    except ImportError:
        print("  PyTorch not installed: its conv2d row is skipped", file=sys.stderr)
        return None
    torch.set_num_threads(2)  # as many as NumPy's BLAS and TVM's pool on this 2-core machine
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)

    def conv() -> Any:
        return torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad)

    with torch.no_grad():
        np.testing.assert_allclose(conv().numpy(), expected, rtol=1e-4, atol=1e-3)
        return per_call(conv)


def bench_elementwise(engine: Any) -> None:
    x, y = tensors((1024, 1024), (1024, 1024))
    xn, yn = x.numpy(), y.numpy()
    func = ew_chain()
    cached = engine.lower(func, "llvm")
    kernel = engine.jit(func, "llvm")
    (out,) = out_like(cached)
    kernel(x, y, out)
    expected = np.maximum(xn * yn + xn, 0) * yn - xn
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    row(
        "elementwise chain (5 ops) 1024x1024",
        per_call(lambda: kernel(x, y, out)),
        "NumPy",
        per_call(lambda: np.maximum(xn * yn + xn, 0) * yn - xn),
    )


def bench_jit_many(engine: Any) -> None:
    count = 10 if QUICK else 50

    def funcs(offset: int) -> list[Any]:
        return [chain(3, (16, offset + i)) for i in range(count)]

    # Distinct shapes, so nothing is shared, and of one size class (16 x 1..150, all below the
    # parallel threshold), so both sides build the same kind of kernel.
    separate, batched, module_funcs = funcs(1), funcs(101), funcs(201)

    def one_by_one() -> None:
        for f in separate:
            engine.jit(f, "llvm")

    engine.clear()
    t_separate = once(one_by_one, repeat=1)
    engine.clear()
    t_many = once(lambda: engine.jit_many(batched, "llvm"), repeat=1)
    row(
        f"`jit_many` of {count} functions",
        t_many,
        f"{count} separate `jit`s",
        t_separate,
        ">= 3x faster",
    )

    # The peer a migrating user measures: tvm.compile of one Relax module holding the same
    # number of functions (its own shapes, so no cache helps), plus the VM's creation.
    def one_module() -> None:
        mod = tvm.IRModule({f"f{i}": f.with_attr("global_symbol", f"f{i}") for i, f in
                            enumerate(module_funcs)})  # fmt: skip
        relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())

    row(
        f"`jit_many` of {count} functions",
        t_many,
        f"`tvm.compile` of one module of {count} + VM",
        once(one_module, repeat=1),
        "<= 0.5x",
    )


def bench_lower_growth(engine: Any) -> None:
    def cold_lower(n: int) -> Callable[[], None]:
        def run() -> None:
            engine.clear()
            engine.lower(chain(n), "llvm")

        return run

    small = once(cold_lower(10), repeat=5)
    large = once(cold_lower(200), repeat=5)
    row("`lower` 200-op chain", large, "`lower` 10-op chain", small, "<= 25x")


_CHILD = """
import json, os, sys, time, warnings
sys.path.insert(0, {bench!r})
import run as bench
engine = bench.compile_engine.get()
func = bench.chain(10)
start = time.perf_counter()
engine.jit(func, "llvm")
print(json.dumps({{"jit": time.perf_counter() - start}}))
"""


def bench_persistent_cache() -> None:
    child = _CHILD.format(bench=str(Path(__file__).parent))

    def run(cache: str | None) -> float:
        return _child_time(child, cache, "jit")

    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "cache")
        cold = run(None)
        storing = run(cache)
        warm = run(cache)
    row(
        "warm persistent-cache `jit` (2nd process)",
        warm,
        "cold `jit`, no cache",
        cold,
        ">= 20x faster",
    )
    row("warm persistent-cache `jit` (2nd process)", warm, "cold `jit` that stores", storing)


# -- report ---------------------------------------------------------------------------------------


def _fmt(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def _numpy_threads() -> str:
    for knob in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(knob):
            return f"{os.environ[knob]} ({knob})"
    return f"{os.cpu_count()} (OpenBLAS default: logical CPUs)"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} (1 / 5 / 15 min)"


def _pool_text() -> str:
    pool = thread_pool.status()
    if pool.kind == "shim":
        return f"the shim's pool, {pool.threads} threads"
    return f"TVM's pool ({pool.reason})"


def header(load_before: str) -> str:
    lines = [
        f"- machine: {_cpu_model()}, {os.cpu_count()} logical CPUs, {platform.platform()}",
        f"- load average: {load_before} before, {_load()} after the run",
        f"- Python {platform.python_version()}, TVM {tvm.__version__}, NumPy {np.__version__}",
        f"- kernel threads: {_pool_text()}",
        f"- TVM's pool: {tvm.runtime.num_threads()} threads (TVM_NUM_THREADS="
        f"{os.environ.get('TVM_NUM_THREADS', 'unset')}, TVM_THREAD_POOL_SPIN_COUNT="
        f"{os.environ.get('TVM_THREAD_POOL_SPIN_COUNT', 'unset')}, TVM_BIND_THREADS="
        f"{os.environ.get('TVM_BIND_THREADS', 'unset')}); NumPy threads: "
        f"{_numpy_threads()}",
        f"- CPU affinity of this process after TVM started: {sorted(os.sched_getaffinity(0))}",
    ]
    try:
        import torch

        lines.append(f"- PyTorch {torch.__version__}, {torch.get_num_threads()} threads")
    except ImportError:
        lines.append("- PyTorch: not installed (its rows are skipped)")
    try:
        import onnxruntime

        lines.append(f"- onnxruntime {onnxruntime.__version__}, 2 intra-op threads")
    except ImportError:
        lines.append("- onnxruntime: not installed (the model rows are skipped)")
    return "\n".join(lines)


def _spread(value: float) -> str:
    """``median [fastest-slowest]`` for a :class:`Timing`; the value alone otherwise."""
    if isinstance(value, Timing) and value.worst > value.best:
        return f"{_fmt(value)} [{_fmt(value.best)}-{_fmt(value.worst)}]"
    return _fmt(value)


def table() -> str:
    lines = [
        "| what | shim: median [min-max] | against | other: median [min-max] "
        "| ratio of medians | goal |",
        "|---|---|---|---|---|---|",
    ]
    for what, shim, against, other, goal in ROWS:
        ratio = shim / other if other else float("nan")
        speed = f"{ratio:.2f}x" + (f" ({1 / ratio:.1f}x faster)" if ratio < 1 else "")
        lines.append(
            f"| {what} | {_spread(shim)} | {against} | {_spread(other)} | {speed} | {goal} |"
        )
    return "\n".join(lines)


#: The tuned ResNet-18 row's budget: its heaviest tasks (FLOP x calls), trials per task.
TUNED_TASKS, TUNED_TRIALS = 8, 4


def bench_tuned_resnet18() -> None:
    """ResNet-18 (1x3x224x224) tuned as the AutoTVM tutorial tunes it, against the untuned shim.

    Budget: the :data:`TUNED_TASKS` heaviest of its tasks, :data:`TUNED_TRIALS` trials each
    (XGBTuner: MetaSchedule's evolutionary search on xgb), about 5 minutes on 2 cores; the
    records applied with ``autotvm.apply_history_best``. Needs the ``[tune]`` extra.
    """
    import compile_engine_compat

    compile_engine_compat.install()
    from tvm import autotvm
    from tvm.autotvm.tuner import XGBTuner
    from tvm.contrib import graph_executor
    from tvm.relay import testing

    from compile_engine_compat import relay

    mod, params = testing.resnet.get_workload(num_layers=18, batch_size=1)
    data = np.random.default_rng(0).random((1, 3, 224, 224), dtype="float32")

    def runner() -> Callable[[], Any]:
        lib = relay.build(mod, target="llvm", params=params)
        module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
        module.set_input("data", data)
        return module.run

    untuned = per_call(runner(), budget=2.0)
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    tasks = sorted(tasks, key=lambda t: -t.flop * t.kernel.weight)[:TUNED_TASKS]
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "resnet18.log")
        measure = autotvm.measure_option(
            builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=3, repeat=1)
        )
        for i, task in enumerate(tasks):
            XGBTuner(task).tune(
                n_trial=TUNED_TRIALS,
                measure_option=measure,
                callbacks=[
                    autotvm.callback.progress_bar(TUNED_TRIALS, prefix=f"[Task {i + 1}] "),
                    autotvm.callback.log_to_file(log),
                ],
            )
        with autotvm.apply_history_best(log):
            tuned = per_call(runner(), budget=2.0)
    gain = (untuned / tuned - 1) * 100
    row(
        f"ResNet-18 tuned ({TUNED_TASKS} tasks x {TUNED_TRIALS} trials, XGBTuner)",
        tuned,
        "untuned shim",
        untuned,
        f"at least as fast; gain {gain:+.1f}%",
    )


_ENGINE_STEPS = (
    bench_cache_hit,
    bench_probe,
    bench_cold_jit,
    bench_interleaved,
    bench_matmul,
    bench_conv2d,
    bench_modern_pipeline,
    bench_torch_block,
    bench_elementwise,
    bench_jit_many,
    bench_lower_growth,
    bench_models,
)


def main() -> None:
    global QUICK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast smoke run")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="run only the steps whose name contains one of these (e.g. jit_many persistent)",
    )
    parser.add_argument("--json", metavar="PATH", help="also write the rows to PATH as JSON")
    parser.add_argument(
        "--tune", action="store_true", help="also tune ResNet-18 (the [tune] extra, ~5 min)"
    )
    parser.add_argument(
        "--batches",
        nargs="+",
        type=int,
        metavar="N",
        help="also sweep ResNet-18 over these batch sizes, time per image (e.g. 1 2 4 8 16 32)",
    )
    args = parser.parse_args()
    QUICK = args.quick
    engine = compile_engine.get()
    load_before = _load()
    started = time.perf_counter()
    steps: list[Callable[[], None]] = [
        *(functools.partial(step, engine) for step in _ENGINE_STEPS),
        bench_persistent_cache,
        bench_model_cache,
        bench_tvm_pool,
    ]
    if args.batches:
        steps.append(functools.partial(bench_batch_sweep, args.batches))
    if args.tune:
        steps.append(bench_tuned_resnet18)
    for step in steps:
        name = getattr(step, "func", step).__name__
        if args.only and not any(word in name for word in args.only):
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        step()
    print(header(load_before))
    print(f"- total benchmark time: {time.perf_counter() - started:.0f} s\n")
    print(table())
    if args.json:
        rows = [(w, _as_json(shim), a, _as_json(other), g) for w, shim, a, other, g in ROWS]
        Path(args.json).write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
