"""Benchmark: a CI fleet sharing one compile cache. The first runner compiles, the others load.

Run ``python bench/fleet_cache.py`` (``--runners N``, default 4; ``--no-model`` to skip the
ResNet-18 build; ``--quick`` for a smoke run of 10 functions). It starts a ``redis-server`` on a
free loopback port (persistence off) and runs the runners one after another, each a fresh
process with a local cache directory of its own and the same Redis as remote tier and key:
simulated CI machines. Each runner

1. jits the same 50-function suite (elementwise chains, matmuls, conv2ds, softmaxes,
   reductions; distinct shapes) through ``compile_engine.jit``, timed as a whole;
2. builds ResNet-18 (a torchvision-shaped model defined here in PyTorch, imported with
   ``torch.export`` and TVM's Relax frontend, built with ``tvm.compile`` for the host CPU) through
   the cache's generic artifact API (``disk.load_artifact``, else ``tvm.compile`` +
   ``export_library`` + ``disk.store_artifact``): the calls a whole-module cache in
   ``relay.build`` makes. ``relay.build`` itself does not cache yet; the import from PyTorch is
   the user's program and is not timed, the structural hash that keys the build is. The weights
   are run-time arguments, as ``relay.build``'s ``(graph, lib, params)`` kept them apart from the
   library; ``--bind-params`` binds them into the module instead (a 47 MB entry to move);
3. waits for its write-behind queue to drain (what its exit would wait for), timed.

Every runner runs each kernel and the model once on fixed inputs; the parent checks that all
runners computed the same numbers. Printed: each runner's times, then the first runner's total
against the median (and range) of the others', with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

SUITE_SIZE = 50
BENCH_KEY = "fleet-benchmark-key-" + "0123456789abcdef" * 2


# -- the runner (a fresh process) -----------------------------------------------------------------


def _suite(count: int) -> list[Any]:
    """``count`` distinct functions of a typical kernel test suite (each its own shapes)."""
    from tvm import relax

    R = relax.op

    def build(params: list[tuple[int, ...]], body: Callable[..., Any]) -> Any:
        vars_ = [
            relax.Var(f"p{i}", relax.TensorType(list(s), "float32")) for i, s in enumerate(params)
        ]
        bb = relax.BlockBuilder()
        with bb.function("main", vars_):
            with bb.dataflow():
                out = bb.emit_output(body(bb, *vars_))
            bb.emit_func_output(out)
        return bb.get()["main"]

    chain_ops = [R.add, lambda v, y: R.exp(v), R.multiply, lambda v, y: R.negative(v),
                 lambda v, y: R.sigmoid(v), R.subtract, lambda v, y: R.abs(v)]  # fmt: skip

    def chain(length: int, shape: tuple[int, ...]) -> Any:
        def body(bb: Any, x: Any, y: Any) -> Any:
            v = x
            for i in range(length - 1):
                v = bb.emit(chain_ops[i % len(chain_ops)](v, y))
            return chain_ops[(length - 1) % len(chain_ops)](v, y)

        return build([shape, shape], body)

    funcs: list[Any] = []
    for i in range(20):
        funcs.append(chain(2 + i % 7, (16 + 8 * i, 64)))
    for i in range(10):
        n = 32 + 16 * i
        funcs.append(build([(n, 64), (64, n)], lambda bb, a, b: R.matmul(a, b)))
    for i in range(8):
        c = 8 + 4 * i
        funcs.append(build([(1, c, 28, 28), (c, c, 3, 3)],
                           lambda bb, x, w: R.nn.conv2d(x, w, padding=[1, 1])))  # fmt: skip
    for i in range(6):
        funcs.append(build([(8 + 4 * i, 128)], lambda bb, x: R.nn.softmax(x, axis=-1)))
    for i in range(6):
        shape = (4 + 2 * i, 96)
        reduce = [R.sum, R.max, R.mean][i % 3]
        funcs.append(build([shape], lambda bb, x, r=reduce: r(x, axis=[1])))
    return funcs[:count]


def _run_once(kernel: Any, func: Any, rng: Any) -> float:
    import numpy as np

    inputs = [
        rng.standard_normal([int(d) for d in p.ty.shape]).astype("float32") for p in func.params
    ]
    out = np.empty([int(d) for d in func.ret_ty.shape], "float32")
    kernel(*inputs, out)
    return float(np.abs(out).sum())


def _resnet18(bind_params: bool) -> tuple[Any, list[Any]]:
    """Return ResNet-18 (ImageNet shapes, batch 1) as a Relax IRModule, and its arguments: an
    input, then the weights (none when ``bind_params``: they are constants in the module)."""
    import torch
    import tvm
    from torch import nn
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    class Block(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = (
                nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                if stride != 1 or cin != cout
                else None
            )

        def forward(self, x: Any) -> Any:
            y = self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(
                nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                nn.MaxPool2d(3, 2, 1),
            )  # fmt: skip
            layers, cin = [], 64
            for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
                layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x: Any) -> Any:
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    torch.manual_seed(0)
    model = ResNet18().eval()
    example = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        exported = torch.export.export(model, (example,))
    mod = from_exported_program(exported, keep_params_as_input=not bind_params)
    weights: list[Any] = []
    if not bind_params:  # relay.build's way: the library is code, the parameters stay data
        mod, params = relax.frontend.detach_params(mod)
        weights = [tvm.runtime.tensor(p.numpy()) for p in params["main"]]
    return mod, [tvm.runtime.tensor(example.numpy()), *weights]


def _model(mod: Any, arguments: list[Any], staging: Path) -> tuple[float, float]:
    """Build (or load) ``mod`` through the artifact cache; return (seconds, output checksum)."""
    import numpy as np
    import tvm
    import tvm_ffi
    from tvm import relax

    from compile_engine_compat import schedules
    from compile_engine_compat.cache import disk
    from compile_engine_compat.targets import pass_context_text, target_text

    target = schedules.host_target()
    started = time.perf_counter()
    key = disk.artifact_key(
        "module",
        target=target_text(target),
        pass_context=pass_context_text(),
        structural_hash=tvm_ffi.structural_hash(mod),
    )
    stored = disk.load_artifact(key)
    if stored is None:
        built = tvm.compile(mod, target=target)
        built.export_library(str(staging / "module.so"))
        disk.store_artifact(key, {"module.so": staging / "module.so"}, {"entry": "main"})
        library = built
    else:
        library = tvm.runtime.load_module(str(stored.path("module.so")))
    vm = relax.VirtualMachine(library, tvm.cpu())
    seconds = time.perf_counter() - started
    out = vm["main"](*arguments)
    out = out if hasattr(out, "numpy") else out[0]
    return seconds, float(np.abs(out.numpy()).sum())


def runner(count: int, with_model: bool, bind_params: bool) -> None:
    """One CI machine: print a JSON line with its timings, checksums and cache counters."""
    import numpy as np

    from compile_engine_compat import CompileEngineDeprecationWarning, compile_engine
    from compile_engine_compat.cache import remote, stats

    warnings.simplefilter("ignore", CompileEngineDeprecationWarning)
    funcs = _suite(count)
    model = _resnet18(bind_params) if with_model else None  # the user's program: not timed
    engine = compile_engine.get()
    started = time.perf_counter()
    kernels = [engine.jit(func, "llvm") for func in funcs]
    suite_s = time.perf_counter() - started
    rng = np.random.default_rng(0)
    checksums = [_run_once(kernel, func, rng) for kernel, func in zip(kernels, funcs)]
    model_s, model_sum = 0.0, 0.0
    if model is not None:
        with tempfile.TemporaryDirectory() as staging:
            model_s, model_sum = _model(*model, Path(staging))
    started = time.perf_counter()
    remote.flush(600)
    flush_s = time.perf_counter() - started
    loaded = sum(type(k.module).__name__ != "Executable" for k in kernels)
    print(json.dumps({
        "suite_s": suite_s, "model_s": model_s, "flush_s": flush_s, "loaded": loaded,
        "checksums": checksums, "model_sum": model_sum, "counts": stats.snapshot(),
    }))  # fmt: skip


# -- the fleet (the parent) -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    server = shutil.which("redis-server")
    if server is None:
        sys.exit("redis-server is not installed (Debian package redis-server)")
    import redis

    port = _free_port()
    process = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(500):
        try:
            client.ping()
            return process, f"redis://127.0.0.1:{port}/0"
        except redis.exceptions.ConnectionError:
            time.sleep(0.01)
    process.kill()
    sys.exit("redis-server did not start")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runners", type=int, default=4)
    parser.add_argument("--no-model", action="store_true", help="skip the ResNet-18 build")
    parser.add_argument("--quick", action="store_true", help="10 functions, no model")
    parser.add_argument(
        "--bind-params",
        action="store_true",
        help="bind ResNet-18's weights into the module as constants (a 47 MB library to move) "
        "instead of passing them at run time as relay.build's (graph, lib, params) did",
    )
    parser.add_argument("--runner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, default=SUITE_SIZE, help=argparse.SUPPRESS)
    args = parser.parse_args()
    with_model = not (args.no_model or args.quick)
    count = 10 if args.quick else args.count
    if args.runner:
        runner(count, with_model, args.bind_params)
        return
    if with_model:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("PyTorch is not installed: ResNet-18 is skipped (pip install torch)")
            with_model = False
    with tempfile.TemporaryDirectory() as tmp:
        redis_process, url = _start_redis(Path(tmp))
        try:
            results = []
            for index in range(args.runners):
                local = Path(tmp) / f"runner-{index}"
                local.mkdir(mode=0o700)
                env = {k: v for k, v in os.environ.items()
                       if not k.startswith("COMPILE_ENGINE_COMPAT_")}  # fmt: skip
                env.update(
                    PYTHONPATH=str(Path(__file__).resolve().parents[1]),
                    COMPILE_ENGINE_COMPAT_CACHE_DIR=str(local),
                    COMPILE_ENGINE_COMPAT_REMOTE_CACHE=url,
                    COMPILE_ENGINE_COMPAT_CACHE_KEY=BENCH_KEY,
                )
                command = [sys.executable, __file__, "--runner", "--count", str(count)]
                if not with_model:
                    command.append("--no-model")
                if args.bind_params:
                    command.append("--bind-params")
                done = subprocess.run(command, env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"runner {index + 1} failed:\n{done.stderr}")
                results.append(json.loads(done.stdout.splitlines()[-1]))
                _report_runner(index, results[-1], count)
        finally:
            redis_process.kill()
            redis_process.wait()
    _summary(results)


def _report_runner(index: int, result: dict[str, Any], count: int) -> None:
    counts = result["counts"]
    total = result["suite_s"] + result["model_s"] + result["flush_s"]
    hits = sum(v for k, v in counts.items() if k.startswith("remote.hit."))
    print(
        f"runner {index + 1}: {_fmt(total)} = suite {_fmt(result['suite_s'])} "
        f"({result['loaded']}/{count} kernels loaded) + ResNet-18 {_fmt(result['model_s'])} "
        f"+ publish wait {_fmt(result['flush_s'])}; remote hits {hits}, published "
        f"{counts.get('remote.published', 0)}, {counts.get('remote.bytes_in', 0) / 2**20:.1f} MiB "
        f"in, {counts.get('remote.bytes_out', 0) / 2**20:.1f} MiB out",
        flush=True,
    )


def _summary(results: list[dict[str, Any]]) -> None:
    import statistics

    first, others = results[0], results[1:]
    if any(r["checksums"] != first["checksums"] or r["model_sum"] != first["model_sum"]
           for r in others):  # fmt: skip
        sys.exit("the runners computed different results")
    print("all runners computed the same results")
    if not others:
        return

    def total(result: dict[str, Any]) -> float:
        return float(result["suite_s"] + result["model_s"] + result["flush_s"])

    for label, part in (
        ("total", total),
        ("50-function suite", lambda r: float(r["suite_s"])),
        ("ResNet-18 build", lambda r: float(r["model_s"])),
    ):
        rest = [part(r) for r in others]
        median = statistics.median(rest)
        if part(first) == 0:
            continue
        print(
            f"{label}: first runner {_fmt(part(first))}, the others {_fmt(median)} "
            f"[{_fmt(min(rest))}-{_fmt(max(rest))}]: {part(first) / median:.1f}x less"
        )


if __name__ == "__main__":
    main()
