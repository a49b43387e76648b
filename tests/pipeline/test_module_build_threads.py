"""Whole-module builds from many threads at once: TOPI's process-wide op tag scope is serialized.

TVM's ``te.TagScope`` keeps the current op tag in one class attribute for the whole process, so
two threads legalizing at once failed with "nested op_tag is not allowed for now" (issue 35, R6:
0.2-1% of ``relay.build`` calls from 8 threads on an idle machine, a third of them under load).
The module build's ``LegalizeOps`` now runs under the tracer's lock.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay

THREADS = 8


def _model(width: int) -> relay.Function:
    """Many TOPI calls per build (each legalization enters the tag scope), the softmax too."""
    x = relay.var("x", shape=(2, width))
    w = relay.var("w", shape=(3, width))
    b = relay.var("b", shape=(3,))
    y = relay.nn.relu(relay.nn.bias_add(relay.nn.dense(x, w), b, axis=-1))
    y = relay.sigmoid(relay.exp(y) + relay.tanh(y))
    return relay.Function([x, w, b], relay.Tuple([relay.nn.softmax(y), relay.tanh(x)]))


@pytest.fixture
def frequent_switches() -> Iterator[None]:
    """Threads switch every 0.5 ms instead of every 5 ms: a race shows within seconds."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(5e-4)
    yield
    sys.setswitchinterval(before)


def _build_from_threads(seconds: float) -> tuple[list[int], Counter[str]]:
    end = time.monotonic() + seconds
    built = [0] * THREADS
    failures: Counter[str] = Counter()

    def worker(index: int) -> None:
        width = 4 + index
        while time.monotonic() < end:
            try:
                relay.build(tvm.IRModule.from_expr(_model(width)), "llvm")
                built[index] += 1
            except Exception as err:  # counted: the test asserts there are none
                failures[f"{type(err).__name__}: {str(err).splitlines()[-1][:120]}"] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return built, failures


def _check(built: list[int], failures: Counter[str]) -> None:
    assert not failures, f"{sum(failures.values())} of {sum(built) + sum(failures.values())} " \
        f"builds failed: {dict(failures)}"  # fmt: skip
    assert all(count >= 1 for count in built), built  # every thread built, none starved


def test_eight_threads_build_with_no_failure(frequent_switches):
    _check(*_build_from_threads(5.0))


@pytest.mark.long
def test_eight_threads_build_for_30_s_with_no_failure(frequent_switches):
    _check(*_build_from_threads(30.0))


def test_a_module_built_beside_other_threads_computes_right(frequent_switches):
    noise = threading.Thread(target=_build_from_threads, args=(3.0,))
    noise.start()
    try:
        lib = relay.build(tvm.IRModule.from_expr(_model(5)), "llvm")
    finally:
        noise.join()
    from compile_engine_compat.tvm_legacy import graph_executor

    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((2, 5), (3, 5), (3,)))
    module.set_input(x=x, w=w, b=b)
    module.run()
    y = np.maximum(x @ w.T + b, 0)
    y = 1 / (1 + np.exp(-(np.exp(y) + np.tanh(y))))
    expected = np.exp(y - y.max(-1, keepdims=True))
    np.testing.assert_allclose(
        module.get_output(0).numpy(), expected / expected.sum(-1, keepdims=True), rtol=1e-4
    )
