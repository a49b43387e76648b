"""Property: a drawn Relay graph is the hand-written Relax function of the same graph.

Hypothesis draws graphs over mapped ops (a chain, each binary op also taking any earlier node,
parameters included); each is built twice, with ``compile_engine_compat.relay``
and by hand with ``relax.BlockBuilder``. The two must be structurally equal, share one engine
cache entry, and compute what NumPy computes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from hypothesis import given
from hypothesis import strategies as st
from tvm import relax

from compile_engine_compat import compile_engine, relay

R = relax.op
SHAPE = (2, 3, 4)

# name -> (relay builder, hand-written Relax, NumPy), for one or two operands of SHAPE.
UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
    "tanh": (relay.tanh, R.tanh, np.tanh),
    "sigmoid": (relay.sigmoid, R.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "negative": (relay.negative, R.negative, np.negative),
    "abs": (relay.abs, R.abs, np.abs),
    "relu": (relay.nn.relu, R.nn.relu, lambda a: np.maximum(a, 0)),
    "sin": (relay.sin, R.sin, np.sin),
    "clip": (
        lambda a: relay.clip(a, -0.5, 0.5),
        lambda a: R.clip(
            a,
            relax.prim_value(tvm.tirx.const(-0.5, "float32")),
            relax.prim_value(tvm.tirx.const(0.5, "float32")),
        ),
        lambda a: np.clip(a, -0.5, 0.5),
    ),
    "softmax1": (
        lambda a: relay.nn.softmax(a, axis=1),
        lambda a: R.nn.softmax(a, axis=1),
        lambda a: np.exp(a) / np.exp(a).sum(1, keepdims=True),
    ),
    "reverse2": (
        lambda a: relay.reverse(a, axis=2),
        lambda a: R.flip(a, 2),
        lambda a: a[:, :, ::-1],
    ),
}
BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
    "add": (relay.add, R.add, np.add),
    "subtract": (relay.subtract, R.subtract, np.subtract),
    "multiply": (relay.multiply, R.multiply, np.multiply),
    "maximum": (relay.maximum, R.maximum, np.maximum),
    "minimum": (relay.minimum, R.minimum, np.minimum),
}

step = st.one_of(
    st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 64)),
    st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 64), st.integers(0, 64)),
)


def _numpy_step(
    ref: Callable[..., np.ndarray], picks: list[int]
) -> Callable[[list[np.ndarray]], np.ndarray]:
    """One step of the NumPy reference: ``ref`` of the values at ``picks``."""
    return lambda vals: ref(*[vals[p] for p in picks])


def _build(steps: list[tuple[Any, ...]]) -> tuple[relay.Function, relax.Function, Callable]:
    rx = relay.var("x", shape=SHAPE)
    ry = relay.var("y", shape=SHAPE)
    relay_nodes: list[Any] = [rx, ry]
    hx = relax.Var("x", relax.TensorType(list(SHAPE), "float32"))
    hy = relax.Var("y", relax.TensorType(list(SHAPE), "float32"))
    numpy_steps: list[Callable[[list[np.ndarray]], np.ndarray]] = []
    bb = relax.BlockBuilder()
    with bb.function("main", [hx, hy]):
        with bb.dataflow():
            hand_nodes: list[Any] = [hx, hy]
            for i, (name, *operands) in enumerate(steps):
                # The first operand is the previous node: every node is used, so the Relay
                # graph (which holds only what the output reaches) has all of them, in order.
                picks = [len(relay_nodes) - 1] + [o % len(relay_nodes) for o in operands[1:]]
                build, hand, ref = UNARY[name] if name in UNARY else BINARY[name]
                relay_nodes.append(build(*[relay_nodes[p] for p in picks]))
                expr = hand(*[hand_nodes[p] for p in picks])
                last = i == len(steps) - 1
                hand_nodes.append(bb.emit_output(expr) if last else bb.emit(expr))
                numpy_steps.append(_numpy_step(ref, picks))
        bb.emit_func_output(hand_nodes[-1])
    relay_func = relay.Function([rx, ry], relay_nodes[-1])

    def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        vals = [x, y]
        for fn in numpy_steps:
            vals.append(fn(vals).astype("float32"))
        return vals[-1]

    return relay_func, bb.get()["main"], reference


@pytest.mark.property
@given(steps=st.lists(step, min_size=1, max_size=6))
def test_drawn_relay_graph_is_the_hand_written_relax_function(steps):
    engine = compile_engine.get()
    relay_func, hand, reference = _build(steps)
    tvm.ir.assert_structural_equal(relay_func.__relax_function__(), hand)
    engine.clear()
    assert engine.lower(relay_func, "llvm") is engine.lower(hand, "llvm")
    assert len(engine.items()) == 1
    rng = np.random.default_rng(len(steps))
    x, y = (rng.standard_normal(SHAPE).astype("float32") for _ in range(2))
    out = tvm.runtime.empty(SHAPE, "float32", tvm.cpu())
    engine.jit(relay_func, "llvm")(tvm.runtime.tensor(x), tvm.runtime.tensor(y), out)
    np.testing.assert_allclose(out.numpy(), reference(x, y), rtol=1e-5, atol=1e-5)
