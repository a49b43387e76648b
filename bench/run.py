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

The int8 rows quantize ResNet-18 and MobileNetV2 with onnxruntime's ``quantize_static`` (QDQ,
per-tensor, calibrated on random inputs; ``bench/models.py``'s ``quantized_onnx`` caches the file
in the temp dir) and run that file through the shim, against onnxruntime on the same file and the
fp32 model through the shim, with the top-1 agreement with onnxruntime on 8 inputs.

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
import contextlib
import functools
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
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
#: ``--models``: the model rows run only for the models whose name contains one of these.
MODEL_NAMES: list[str] = []


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
    """Issue 38's definition: a cache-hit ``lower`` of an equal but distinct function each call,
    target ``"llvm"``, against a bare structural hash + equal of such a function; interleaved
    rounds, no pause."""
    count = 20 if QUICK else 200
    engine.lower(chain(10), "llvm")
    stripped = chain(10).without_attr("global_symbol")
    hit_rounds, bare_rounds = [], []
    for _ in range(7):
        hits, bares = [chain(10) for _ in range(count)], [chain(10) for _ in range(count)]
        start = time.perf_counter()
        for func in hits:
            engine.lower(func, "llvm")
        hit_rounds.append((time.perf_counter() - start) / count)
        start = time.perf_counter()
        for func in bares:
            tvm_ffi.structural_hash(func.without_attr("global_symbol"))
            tvm_ffi.structural_equal(func.without_attr("global_symbol"), stripped)
        bare_rounds.append((time.perf_counter() - start) / count)
    row("cache-hit `lower`, an equal but distinct 10-op chain each call", Timing(hit_rounds),
        "bare structural_hash+equal", Timing(bare_rounds), "<= 1.2x")  # fmt: skip


def bench_cold_jit(engine: Any) -> None:
    """Issue 38's definition: a cold ``jit`` (engine cleared) of an equal but distinct 10-op
    chain each round against ``tvm.compile`` + VM creation of one, target ``"llvm"`` on both
    sides; interleaved rounds, no pause."""

    def shim() -> None:
        engine.clear()
        engine.jit(chain(10), "llvm")

    def new_path() -> None:
        vm_for(chain(10), "llvm")

    shim()  # first use (imports, LLVM's start-up) is no round's
    new_path()
    shim_rounds, tvm_rounds = [], []
    for _ in range(1 if QUICK else 7):
        shim_rounds.append(once(shim, repeat=1))
        tvm_rounds.append(once(new_path, repeat=1))
    row("cold `jit`, an equal but distinct 10-op chain each round", Timing(shim_rounds),
        "tvm.compile + VM creation, target llvm", Timing(tvm_rounds), "<= 0.25x")  # fmt: skip
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
    """A 256x256 matmul kernel timed right after a NumPy check of its result (the cache-hit
    and cold-``jit`` definitions are :func:`bench_cache_hit` and :func:`bench_cold_jit`)."""
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
        if MODEL_NAMES and not any(word in model.name for word in MODEL_NAMES):
            continue
        _bench_model(models, model, ort, torch)


def _bench_model(
    models: Any, model: Any, ort: Any, torch: Any, batch: int = 1, build_rows: bool = True
) -> None:
    import onnx
    from tvm import relay  # the shim's Relay front end, served by install()
    from tvm.contrib import graph_executor

    shape = (batch, *model.input_shape[1:])
    net = model.make()
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    data = models.onnx_bytes(net, x)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()

    # As a Relay-era program writes it; the import is not part of the build time (TVM's side
    # below imports once too).
    relay_mod, relay_params = relay.frontend.from_onnx(
        onnx.load_from_string(data), {"input": shape}
    )

    def shim_build() -> Any:
        lib = relay.build(relay_mod, target="llvm", params=relay_params)
        return graph_executor.GraphModule(lib["default"](tvm.cpu()))

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
    shim, ort_time = Timing(times["shim"]), Timing(times["ort"])
    work = models.gflop(data)
    name = model.name if batch == 1 else f"{model.name}, batch {batch}"
    what = f"{name}: relay.build + GraphModule {_rate(work, shim)}"
    goal = "<= 0.9x" if model in models.MODELS and batch == 1 else "<= 1.0x"
    row(what, shim, f"onnxruntime (2 threads) {_rate(work, ort_time)}", ort_time, goal)
    row(what, shim, "PyTorch eager (2 threads)", Timing(times["torch"]), "<= 1.0x")
    if build_rows:
        _bench_build(models, model, data, shape, shim_build)


def _bench_build(models: Any, model: Any, data: bytes, shape: Any, shim_build: Any) -> None:
    """The build, cold, with the persistent cache on (a fresh directory each round) and off,
    against ``tvm.compile`` + VM creation of TVM's own import; interleaved rounds."""
    from compile_engine_compat.cache import store_behind
    from compile_engine_compat.pipeline.model import vm_executable

    mod, params = models.relax_module(data, shape)
    bound = relax.transform.BindParams("main", params)(mod)

    def tvm_build() -> Any:
        return relax.VirtualMachine(tvm.compile(bound, target="llvm"), tvm.cpu())

    def cold(cache: str | None) -> float:
        vm_executable.forget_schedules()  # cold: no kernel scheduled before in this process
        with _cache_dir(cache):
            start = time.perf_counter()
            shim_build()
            took = time.perf_counter() - start
            # The store runs behind the build (cache/store_behind.py): waited for here, outside
            # the build's time, so that it never overlaps the next round's builds.
            start = time.perf_counter()
            store_behind.flush()
            if cache is not None:
                rounds["store"].append(time.perf_counter() - start)
            return took

    rounds: dict[str, list[float]] = {"on": [], "off": [], "tvm": [], "store": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(1 if QUICK else 3):
            rounds["on"].append(cold(str(Path(tmp) / f"cache{i}")))
            rounds["off"].append(cold(None))
            start = time.perf_counter()
            tvm_build()
            rounds["tvm"].append(time.perf_counter() - start)
    goal = "<= 1.2x" if model.name.startswith(("MobileNet", "ResNet-18")) else ""
    against = "tvm.compile(llvm) + VM creation"
    row(f"{model.name}: cold build, disk cache on (relay.build + GraphModule)",
        Timing(rounds["on"]), against, Timing(rounds["tvm"]), goal)  # fmt: skip
    row(f"{model.name}: cold build, disk cache off", Timing(rounds["off"]), against,
        Timing(rounds["tvm"]))  # fmt: skip
    row(f"{model.name}: the store behind the cold build, after it returned (off its path)",
        Timing(rounds["store"]), against, Timing(rounds["tvm"]))  # fmt: skip


@contextlib.contextmanager
def _cache_dir(path: str | None) -> Iterator[None]:
    """``COMPILE_ENGINE_COMPAT_CACHE_DIR`` set to ``path`` (unset for None) for the block."""
    saved = os.environ.pop("COMPILE_ENGINE_COMPAT_CACHE_DIR", None)
    if path is not None:
        os.environ["COMPILE_ENGINE_COMPAT_CACHE_DIR"] = path
    try:
        yield
    finally:
        os.environ.pop("COMPILE_ENGINE_COMPAT_CACHE_DIR", None)
        if saved is not None:
            os.environ["COMPILE_ENGINE_COMPAT_CACHE_DIR"] = saved


def _rate(work: float, seconds: float) -> str:
    """``[N GFLOP/s, P% of peak]`` for ``work`` GFLOP done in ``seconds``."""
    peak, _ = fma_peak()
    rate = work / seconds
    return f"[{rate:.0f} GFLOP/s, {100 * rate / peak:.0f}% of peak]"


@functools.cache
def fma_peak() -> tuple[float, str]:
    """The CPUs' fp32 FMA peak in GFLOP/s, and how it was computed, from ``/proc/cpuinfo``:
    CPUs this process may use x FMA units x fp32 lanes x 2 x clock.

    Lanes: 16 with AVX-512, 8 with AVX2, 4 otherwise; AMD's Zen 4 (LLVM's ``znver4``, family 25
    in ``/proc/cpuinfo``) runs 512-bit vectors on 256-bit units, so 8 there (Zen 5 has full-width
    units). FMA units: 2 per core with FMA (every x86 core since Haswell and Zen), else 1. Clock:
    the ``cpu MHz`` the kernel reports (a VM reports the nominal clock, not a boost clock).
    """
    from compile_engine_compat import targets

    host = targets.host_cpu()
    cpu_name = host[0] if host else "unknown"
    info: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    flags = set(info.get("flags", "").split())
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    family = int(info.get("cpu family", "0") or 0)
    if cpu_name in ("znver1", "znver2", "znver3", "znver4") or (
        cpu_name == "unknown" and info.get("vendor_id") == "AuthenticAMD" and family in (23, 25)
    ):
        lanes = min(lanes, 8)
    units = 2 if "fma" in flags else 1
    ghz = float(info.get("cpu MHz", "0") or 0) / 1e3 or 1.0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    peak = (cpus or 1) * units * lanes * 2 * ghz
    vendor = info.get("vendor_id", "?")
    text = (f"{cpus} CPUs x {units} FMA units x {lanes} fp32 lanes x 2 x {ghz:.2f} GHz = "
            f"{peak:.0f} GFLOP/s (LLVM's CPU {cpu_name}, {vendor} family {family})")  # fmt: skip
    return peak, text


def bench_big(engine: Any) -> None:
    """``--big``: ResNet-50 and the BERT-base encoder at batch 1, ResNet-18 and the encoder at
    batch 8, and ResNet-18 with a dynamic batch through the Relay VM against its static build."""
    stack = _relay_model_stack()
    if stack is None:
        return
    models, ort, torch = stack
    _bench_dynamic_batch(models, torch)
    for model, batches in models.BIG_MODELS:
        for batch in batches:
            _bench_model(models, model, ort, torch, batch, build_rows=False)


def _bench_dynamic_batch(models: Any, torch: Any) -> None:
    """ResNet-18 exported with a symbolic batch, imported with ``relay.Any()``, compiled once by
    ``relay.vm.compile``: run at batch 1 and 8 against ``relay.build`` of the static model."""
    import onnx
    from tvm import relay
    from tvm.contrib import graph_executor

    model = models.MODELS[0]
    net = model.make()
    data = models.onnx_bytes(net, model.example(), dynamic_batch=True)
    dynamic_mod, dynamic_params = relay.frontend.from_onnx(
        onnx.load_from_string(data),
        {"input": (relay.Any(), *model.input_shape[1:])},  # type: ignore[attr-defined,unused-ignore]
    )
    executable = relay.vm.compile(dynamic_mod, target="llvm", params=dynamic_params)
    vm = tvm.runtime.vm.VirtualMachine(executable, tvm.cpu())
    for batch in (1, 8):
        x = np.random.default_rng(0).standard_normal((batch, *model.input_shape[1:]))
        x = x.astype("float32")
        static_data = models.onnx_bytes(net, x)
        static_mod, static_params = relay.frontend.from_onnx(
            onnx.load_from_string(static_data), {"input": x.shape}
        )
        lib = relay.build(static_mod, target="llvm", params=static_params)
        static = graph_executor.GraphModule(lib["default"](tvm.cpu()))
        with torch.no_grad():
            expected = net(torch.from_numpy(x)).numpy()
        np.testing.assert_allclose(vm.run(x).numpy(), expected, rtol=1e-4, atol=1e-4)

        def static_run(static: Any = static, x: np.ndarray = x) -> None:
            static.set_input("input", x)
            static.run()
            static.get_output(0)

        dynamic_times, static_times = [], []
        for _ in range(1 if QUICK else 3):  # interleaved
            dynamic_times.append(per_call(functools.partial(vm.run, x), repeat=3))
            static_times.append(per_call(static_run, repeat=3))
        work = models.gflop(static_data)
        dynamic = Timing(dynamic_times)
        row(f"{model.name}, dynamic batch (relay.Any), VM, batch {batch} {_rate(work, dynamic)}",
            dynamic, "the static build (relay.build + GraphModule)", Timing(static_times),
            "<= 1.25x")  # fmt: skip


def bench_int8_models(engine: Any) -> None:
    """Int8 ResNet-18 and MobileNetV2 (onnxruntime's ``quantize_static``, QDQ, calibrated on
    random inputs, cached in the temp dir): ``from_onnx`` -> ``relay.build`` -> ``GraphModule``
    against onnxruntime on the same file and against the fp32 model through the shim."""
    stack = _relay_model_stack()
    if stack is None:
        return
    models, ort, _ = stack
    for model in models.MODELS[:2]:
        _bench_int8_model(models, model, ort)


def _graph_module(data: bytes, input_shape: tuple[int, ...]) -> Any:
    """The ONNX model ``data`` as a Relay-era program builds it: a ``GraphModule``."""
    import onnx
    from tvm import relay  # the shim's Relay front end, served by install()
    from tvm.contrib import graph_executor

    mod, params = relay.frontend.from_onnx(onnx.load_from_string(data), {"input": input_shape})
    lib = relay.build(mod, target="llvm", params=params)
    return graph_executor.GraphModule(lib["default"](tvm.cpu()))


def _bench_int8_model(models: Any, model: Any, ort: Any) -> None:
    int8 = models.quantized_onnx(model)
    int8_module = _graph_module(int8, model.input_shape)
    fp32_module = _graph_module(models.onnx_bytes(model.make(), model.example()), model.input_shape)
    session = _ort_session(ort, int8)
    inputs = [model.example(seed) for seed in range(2 if QUICK else 8)]
    agree = 0
    for x in inputs:
        int8_module.set_input("input", x)
        int8_module.run()
        expected = session.run(None, {"input": x})[0]
        agree += int(int8_module.get_output(0).numpy().argmax() == expected.argmax())
    print(f"  {model.name} int8: top-1 = onnxruntime's on {agree}/{len(inputs)} inputs",
          file=sys.stderr, flush=True)  # fmt: skip
    x = inputs[0]

    def run(module: Any) -> None:
        module.set_input("input", x)
        module.run()
        module.get_output(0)

    times: dict[str, list[float]] = {"int8": [], "ort": [], "fp32": []}
    for _ in range(1 if QUICK else 3):  # interleaved, so load changes hit all three alike
        times["int8"].append(per_call(functools.partial(run, int8_module), repeat=3))
        times["ort"].append(per_call(functools.partial(session.run, None, {"input": x}),
                                     repeat=3))  # fmt: skip
        times["fp32"].append(per_call(functools.partial(run, fp32_module), repeat=3))
    shim = Timing(times["int8"])
    what = f"{model.name} int8 QDQ (top-1 {agree}/{len(inputs)}): relay.build + GraphModule"
    row(what, shim, "onnxruntime int8, same file (2 threads)", Timing(times["ort"]), "<= 1.0x")
    row(what, shim, "fp32 model, relay.build + GraphModule", Timing(times["fp32"]), "<= 0.67x")


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


# Quantized layers (batch 1): (name, data shape, weight shape, padding, multiply-adds).
_INT8_LAYERS = (
    ("conv2d 3x3 64->64 56x56 NHWC", (1, 56, 56, 64), (64, 3, 3, 64), 1, 56 * 56 * 64 * 64 * 9),
    ("conv2d 1x1 64->64 56x56 NHWC", (1, 56, 56, 64), (64, 1, 1, 64), 0, 56 * 56 * 64 * 64),
    ("dense 512->1000 batch 1", (1, 512), (512, 1000), 0, 512 * 1000),
)


def _layer(x_shape: tuple[int, ...], w_shape: tuple[int, ...], pad: int, dtype: str) -> Any:
    """A conv2d (NHWC/OHWI) or matmul of ``dtype`` data and weights, int32 out for 8-bit ones."""
    out = "int32" if dtype in ("uint8", "int8") else ""
    weight_dtype = "int8" if out else dtype

    def body(bb: Any, x: Any, w: Any) -> Any:
        if len(x_shape) == 2:
            return relax.op.matmul(x, w, out_dtype=out or None)
        return relax.op.nn.conv2d(x, w, padding=[pad] * 2, data_layout="NHWC",
                                  kernel_layout="OHWI", out_dtype=out or None)  # fmt: skip

    params = [relax.Var("x", relax.TensorType(list(x_shape), dtype)),
              relax.Var("w", relax.TensorType(list(w_shape), weight_dtype))]  # fmt: skip
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            result = bb.emit_output(body(bb, *params))
        bb.emit_func_output(result)
    return bb.get()["main"]


def _int8_arrays(x_shape: tuple[int, ...], w_shape: tuple[int, ...], dtype: str) -> tuple:
    rng = np.random.default_rng(0)
    if dtype == "float32":
        return rng.standard_normal(x_shape).astype(dtype), rng.standard_normal(w_shape).astype(
            dtype
        )
    low = 0 if dtype == "uint8" else -128
    x = rng.integers(low, low + 256, x_shape).astype(dtype)
    return x, rng.integers(-128, 128, w_shape).astype("int8")


def _constant_weights_vm(func: Any, w: np.ndarray, shim: bool) -> Any:
    """``func`` with its weights bound as constants, through the shim's module pipeline
    (``schedules.relax_pipeline``: weights packed at build time) or TVM's default one."""
    from compile_engine_compat import schedules

    mod = relax.transform.BindParams("main", {"w": tvm.runtime.tensor(w)})(
        tvm.IRModule({"main": func})
    )
    kwargs = {"relax_pipeline": schedules.relax_pipeline(HOST_TARGET)} if shim else {}
    return relax.VirtualMachine(tvm.compile(mod, HOST_TARGET, **kwargs), tvm.cpu())["main"]


def bench_int8(engine: Any) -> None:
    """Quantized layers: the shim's int8 kernels (VNNI where the CPU has it) against the shim's
    float32 kernels of the same shapes and TVM's default pipeline on the same int8 function; one
    process, weights bound as constants (the way ``relay.build`` gets them)."""
    del engine
    for name, x_shape, w_shape, pad, macs in _INT8_LAYERS:
        timings = {}
        for dtype in ("uint8", "float32"):
            x, w = _int8_arrays(x_shape, w_shape, dtype)
            vm = _constant_weights_vm(_layer(x_shape, w_shape, pad, dtype), w, shim=True)
            arg = tvm.runtime.tensor(x)
            timings[dtype] = per_call(functools.partial(vm, arg))
            if dtype == "uint8":
                expected = vm(arg).numpy()
                plain = _constant_weights_vm(_layer(x_shape, w_shape, pad, dtype), w, shim=False)
                np.testing.assert_array_equal(plain(arg).numpy(), expected)
                timings["default"] = per_call(functools.partial(plain, arg), budget=1.0, repeat=3)
        int8, fp32 = timings["uint8"], timings["float32"]
        gops = f"{2 * macs / int8 / 1e9:.0f} vs {2 * macs / fp32 / 1e9:.0f} GOPS"
        row(f"int8 (u8 x i8) {name} ({gops})", int8, "shim float32", fp32, ">= 1.5x faster")
        row(f"int8 (u8 x i8) {name}", int8, "TVM default pipeline int8", timings["default"])


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
        f"- fp32 FMA peak (the model rows' %): {fma_peak()[1]}; GFLOP counts 2 per multiply-add "
        "of the convolutions and matrix products (ONNX shape inference)",
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


#: The tuned ResNet-18 row's budget: the tasks with the most time under the shim's schedules
#: (calls x seconds of their kernels), and the trials of all of them, shared by that time.
TUNED_TASKS, TUNED_TRIALS = 2, 32


def _paired(first: Callable[[], Any], second: Callable[[], Any], rounds: int = 25) -> tuple[
    Timing, Timing
]:  # fmt: skip
    """Per-call times of two runs measured in alternating rounds (a load that comes and goes on
    a shared machine falls on both alike)."""
    first(), second()  # warm-up
    start = time.perf_counter()
    first()
    number = max(1, int(0.25 / max(time.perf_counter() - start, 1e-7)))
    if QUICK:
        number, rounds = max(1, number // 10), 3
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for fn, out in ((first, times[0]), (second, times[1])):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return Timing(times[0]), Timing(times[1])


def bench_tuned_resnet18() -> None:
    """ResNet-18 (1x3x224x224) tuned as the AutoTVM tutorial tunes it, against the untuned shim.

    Budget: the :data:`TUNED_TASKS` of its 14 tasks (TVM 0.19's: 12 convolutions, the dense's
    two templates) that take the most time under the shim's schedules (each kernel timed once,
    calls x seconds), :data:`TUNED_TRIALS` trials in all, shared by that time, then among the
    kernels that compute the task's op (XGBTuner: MetaSchedule's evolutionary search on xgb;
    at 2 to 4 trials a kernel its samples were all slower than the shim's rules); the shim's own
    schedule of each kernel timed beside, built the same way; the records applied with
    ``autotvm.apply_history_best``, each kernel at the faster of the two. Needs the ``[tune]``
    extra. Both builds are timed in alternating rounds.
    """
    import compile_engine_compat

    compile_engine_compat.install()
    from tvm import autotvm
    from tvm.autotvm.tuner import XGBTuner
    from tvm.contrib import graph_executor
    from tvm.relay import testing

    from compile_engine_compat import relay
    from compile_engine_compat.tvm_legacy.tune.measure import MeasureConfig
    from compile_engine_compat.tvm_legacy.tune.search import time_weights, trial_shares

    mod, params = testing.resnet.get_workload(num_layers=18, batch_size=1)
    data = np.random.default_rng(0).random((1, 3, 224, 224), dtype="float32")

    def runner() -> Callable[[], Any]:
        lib = relay.build(mod, target="llvm", params=params)
        module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
        module.set_input("data", data)
        return module.run

    untuned_run = runner()
    tasks = autotvm.task.extract_from_program(mod["main"], target="llvm", params=params)
    started = time.perf_counter()
    config = MeasureConfig(number=3, repeat=3)
    task_time = [sum(time_weights(t.kernels, config)) for t in tasks]
    ranked = sorted(zip(task_time, range(len(tasks))), reverse=True)[:TUNED_TASKS]
    tasks = [tasks[i] for _, i in ranked]
    trials = trial_shares(TUNED_TRIALS, [seconds for seconds, _ in ranked])
    with tempfile.TemporaryDirectory() as tmp:
        log = str(Path(tmp) / "resnet18.log")
        measure = autotvm.measure_option(
            builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner(number=3, repeat=1)
        )
        for i, (task, n_trial) in enumerate(zip(tasks, trials)):
            XGBTuner(task).tune(
                n_trial=n_trial,
                measure_option=measure,
                callbacks=[
                    autotvm.callback.progress_bar(n_trial, prefix=f"[Task {i + 1}] "),
                    autotvm.callback.log_to_file(log),
                ],
            )
        tuning = time.perf_counter() - started
        with autotvm.apply_history_best(log) as context:
            tuned_run = runner()
        kept = sum(1 for line in Path(log).read_text().splitlines() if '"use": "tuned"' in line)
    untuned, tuned = _paired(untuned_run, tuned_run)
    gain = (untuned / tuned - 1) * 100
    row(
        f"ResNet-18 tuned ({TUNED_TASKS} slowest tasks, {TUNED_TRIALS} trials, XGBTuner; "
        f"{context.records.applied} kernels tuned, {kept} kept; tuning {tuning:.0f} s)",
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
    bench_int8,
    bench_modern_pipeline,
    bench_torch_block,
    bench_elementwise,
    bench_jit_many,
    bench_lower_growth,
    bench_models,
    bench_int8_models,
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
    parser.add_argument(
        "--big",
        action="store_true",
        help="also ResNet-50, BERT-base (12 layers, seq 128, d 768), batch 8 and a dynamic batch "
        "through the Relay VM (minutes)",
    )
    parser.add_argument(
        "--models",
        nargs="+",
        metavar="NAME",
        default=[],
        help="the model rows (bench_models) only for the models whose name contains one of "
        "these (e.g. ResNet-18 MobileNet)",
    )
    args = parser.parse_args()
    QUICK = args.quick
    MODEL_NAMES[:] = args.models
    engine = compile_engine.get()
    load_before = _load()
    started = time.perf_counter()
    steps: list[Callable[[], None]] = [
        *(functools.partial(step, engine) for step in _ENGINE_STEPS),
        bench_persistent_cache,
        bench_model_cache,
        bench_tvm_pool,
    ]
    if args.big:
        steps.append(functools.partial(bench_big, engine))
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
