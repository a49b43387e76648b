"""``lower_many`` / ``jit_many``: one IRModule, one build, the same cache entries as lower/jit."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat import ledger, reset_ledger
from compile_engine_compat.pipeline.build_pool import MAX_CHUNK, build_threads, chunk_sizes

R = relax.op
OPS = [R.exp, R.negative, R.abs, R.sigmoid, R.tanh]


def _funcs(count: int) -> list[relax.Function]:
    return [
        build("main", [("x", (3, i + 1), "float32")], lambda bb, x, i=i: OPS[i % len(OPS)](x))
        for i in range(count)
    ]


def _reference(i: int, x: np.ndarray) -> np.ndarray:
    numpy_ops: list[Callable[[np.ndarray], np.ndarray]] = [
        np.exp,
        np.negative,
        np.abs,
        lambda v: 1 / (1 + np.exp(-v)),
        np.tanh,
    ]
    return numpy_ops[i % len(numpy_ops)](x)


def _odd_funcs(count: int) -> list[relax.Function]:
    """Like :func:`_funcs`, with sizes no vector width divides: all built at one LLVM level.

    (Kernels the rules vectorize build at -O1, a target of their own: see test_opt_level.)
    """
    return [
        build("main", [("x", (3, 2 * i + 1), "float32")], lambda bb, x, i=i: OPS[i % len(OPS)](x))
        for i in range(count)
    ]


def test_jit_many_builds_modules_of_several_functions_and_every_kernel_is_right(engine):
    funcs = _odd_funcs(8)
    kernels = engine.jit_many(funcs, "llvm")
    assert len(kernels) == 8
    # One tvm.compile per chunk: a chunk per build thread, MAX_CHUNK functions at most.
    assert len({id(k.module) for k in kernels}) == len(chunk_sizes(8, build_threads()))
    rng = np.random.default_rng(3)
    for i, kernel in enumerate(kernels):
        x = rng.standard_normal((3, 2 * i + 1)).astype("float32")
        out = np.empty_like(x)
        kernel(x, out)
        np.testing.assert_allclose(out, _reference(i, x), rtol=1e-5, atol=1e-6)


def test_jit_many_fills_the_entries_jit_and_lower_use(engine):
    funcs = _funcs(4)
    kernels = engine.jit_many(funcs, "llvm")
    assert [engine.jit(f, "llvm") for f in funcs] == kernels  # the same kernel objects
    assert len(engine.items()) == 4
    cached = engine.lower(funcs[2], "llvm")
    assert cached.prim_fn_var.name_hint == kernels[2].name


def _code(kernel) -> str:
    """A kernel's LLVM IR, with what names one build made neutral: its symbol (numbered per
    build, and so the length of the error strings holding it) and the buffer addresses TVM
    writes into the alias-analysis metadata."""
    code = kernel.module.mod.inspect_source("ll").replace(kernel.name, "KERNEL")
    code = re.sub(r"\[\d+ x i8\]", "[N x i8]", code)
    return re.sub(r'!"0x[0-9a-f]+"', '!"ADDRESS"', code)


def test_jit_and_jit_many_build_the_same_code_under_the_same_key(engine):
    # A convolution whose weights stream from memory: the shim's TIR pipeline adds its prefetch,
    # which a batch build once left out, under the cache key jit's kernel is stored with.
    func = build(
        "main",
        [("x", (1, 64, 14, 14), "float32"), ("w", (64, 64, 3, 3), "float32")],
        lambda bb, x, w: relax.op.nn.conv2d(x, w, padding=1),
    )
    alone = engine.jit(func, "llvm")
    engine.clear()
    (batched,) = engine.jit_many([func], "llvm")
    assert batched is not alone
    assert "llvm.prefetch" in _code(alone)
    assert _code(batched) == _code(alone)


def test_jit_many_reuses_kernels_already_built(engine):
    funcs = _funcs(3)
    first = engine.jit(funcs[1], "llvm")
    kernels = engine.jit_many(funcs, "llvm")
    assert kernels[1] is first
    assert kernels[0].module is kernels[2].module is not first.module


def test_jit_many_with_repeats_and_an_empty_list(engine):
    funcs = _funcs(2)
    kernels = engine.jit_many([funcs[0], funcs[1], funcs[0]], "llvm")
    assert kernels[0] is kernels[2]
    assert engine.jit_many([], "llvm") == []


def test_lower_many_returns_what_lower_returns(engine):
    funcs = _funcs(3)
    lowered = engine.lower_many(funcs, "llvm")
    assert [engine.lower(f, "llvm") for f in funcs] == lowered
    assert all(v.use_count == 1 for _, v in engine.items())


@pytest.mark.warnings_visible
def test_lower_many_and_jit_many_are_counted_as_legacy_calls(engine):
    reset_ledger()
    with pytest.warns(DeprecationWarning):
        engine.lower_many(_funcs(1), "llvm")
    with pytest.warns(DeprecationWarning):
        engine.jit_many(_funcs(1), "llvm")
    names = {entry.api for entry in ledger() if entry.filename == __file__}
    assert {
        "compile_engine.CompileEngine.lower_many",
        "compile_engine.CompileEngine.jit_many",
    } <= names


def test_jit_many_builds_on_threads_under_the_callers_pass_context(engine):
    seen: list[tuple[str, str]] = []

    @tvm.instrument.pass_instrument
    class Recorder:
        def run_before_pass(self, mod, info):
            seen.append((threading.current_thread().name, info.name))

    funcs = _funcs(6)
    with tvm.transform.PassContext(instruments=[Recorder()]):
        kernels = engine.jit_many(funcs, "llvm")
    assert len(kernels) == 6
    build_threads_seen = {name for name, _ in seen if name.startswith("compile-engine-compat")}
    assert build_threads_seen, "the builds ran outside the pool or without the caller's context"
    assert any(p == "tirx.MakePackedAPI" for _, p in seen)


def test_jit_many_refuses_a_wrong_type_as_jit_does(engine):
    with pytest.raises(TypeError, match=r"Expect source_func to be CCacheKey.*got builtins\.str"):
        engine.jit_many([*_funcs(3), "not a function"], "llvm")
    # The functions before it were lowered (and their chunks built or dropped) without harm.
    assert len(engine.jit_many(_funcs(3), "llvm")) == 3


def test_a_failed_chunk_is_a_lowering_error_and_the_other_chunks_keep_their_kernels(engine):
    from tvm import topi

    from compile_engine_compat import LoweringError, compile_engine

    def gpu_only(sch, names):  # a schedule no CPU build accepts
        for name in names:
            sch.bind(sch.get_loops(sch.get_sblock(name))[0], "threadIdx.x")

    exp_gpu = compile_engine.OpImplementation(
        "exp_gpu_only", lambda attrs, inputs, ty: [topi.exp(inputs[0])], gpu_only, plevel=30
    )
    # Odd sizes: no vector width divides them, so every good kernel has the same (-O3) target.
    good = [
        build("main", [("x", (5, 2 * i + 1), "float32")], lambda bb, x: R.negative(x))
        for i in range(8)
    ]
    bad = build("main", [("x", (5, 9), "float32")], lambda bb, x: R.exp(x))
    compile_engine.register_implementation("relax.exp", exp_gpu)
    try:
        with pytest.raises(LoweringError, match="Error during compile func") as info:
            engine.jit_many([*good, bad], "llvm")
    finally:
        compile_engine.unregister_implementation("relax.exp", exp_gpu)
    assert "threadIdx.x" in str(info.value)
    # Every good function in a chunk without the bad one was built and kept.
    sizes = chunk_sizes(9, build_threads())
    kept = [v for _, v in engine.items() if v.kernel_record and v.kernel_record.kernel is not None]
    assert len(kept) == sum(sizes[:-1])  # the bad function came last, in the last chunk
    kernels = engine.jit_many(good, "llvm")
    x = np.ones((5, 5), "float32")
    out = np.empty_like(x)
    kernels[2](x, out)
    np.testing.assert_array_equal(out, -x)


@pytest.mark.parametrize("expected", [1, 2, 3, 8, 9, 17, 50, 100])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_chunks_are_even_bounded_and_a_multiple_of_the_threads(expected, threads):
    sizes = chunk_sizes(expected, threads)
    assert sum(sizes) == expected
    assert max(sizes) <= MAX_CHUNK and max(sizes) - min(sizes) <= 1
    assert len(sizes) % threads == 0 or len(sizes) == expected


@pytest.fixture
def builds(monkeypatch):
    """Count the kernels the engine builds, by the shim's own build functions (not TVM's)."""
    from compile_engine_compat.facade import kernels as _disk_cache

    built: list[str] = []
    lock = threading.Lock()
    kernel_for, kernels_for = _disk_cache.kernel_for, _disk_cache.kernels_for

    def counted_kernel_for(cached, *args, **kwargs):
        with lock:
            built.append(cached.prim_fn_var.name_hint)
        return kernel_for(cached, *args, **kwargs)

    def counted_kernels_for(cacheds, *args, **kwargs):
        with lock:
            built.extend(c.prim_fn_var.name_hint for c in cacheds)
        return kernels_for(cacheds, *args, **kwargs)

    monkeypatch.setattr(_disk_cache, "kernel_for", counted_kernel_for)
    monkeypatch.setattr(_disk_cache, "kernels_for", counted_kernels_for)
    return built


def _in_threads(work, count):
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i):
        barrier.wait()
        try:
            results[i] = work(i)
        except BaseException as err:  # re-raised in the test's thread
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def test_jit_many_from_four_threads_builds_each_function_once(engine, builds):
    funcs = _funcs(6)
    results = _in_threads(lambda _: engine.jit_many(funcs, "llvm"), 4)
    assert sorted(builds) == sorted(set(builds)) and len(builds) == 6
    for kernels in results[1:]:
        assert all(a is b for a, b in zip(kernels, results[0]))


def test_jit_and_jit_many_from_threads_build_each_function_once(engine, builds):
    funcs = _funcs(6)

    def work(i):
        if i % 2:
            return engine.jit_many(funcs, "llvm")
        return [engine.jit(f, "llvm") for f in reversed(funcs)][::-1]

    results = _in_threads(work, 4)
    assert len(builds) == 6, builds
    for kernels in results[1:]:
        assert all(a is b for a, b in zip(kernels, results[0]))
    x = np.ones((3, 1), "float32")
    out = np.empty_like(x)
    results[0][0](x, out)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
