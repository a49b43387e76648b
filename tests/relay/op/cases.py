"""The harness of the op-family tests: one call per row, built, jitted and checked.

Each case builds one call with ``compile_engine_compat.relay``, jits it with the engine and
compares with NumPy; where NumPy has no short form (convolutions, pools, resizes, norms) it
compares with the hand-written Relax function of the same op run through ``tvm.compile`` and
``relax.VirtualMachine``, and checks that the Relay-built function is structurally that function.
Each family's test module holds the cases of its rows (:func:`family_tests`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.pipeline.model.vm_executable import PRIM_FUNCS_ATTR
from compile_engine_compat.relay import OP_TABLE

RNG = np.random.default_rng(0)
F = "float32"


def data(shape: tuple[int, ...], dtype: str = F, kind: str = "normal") -> np.ndarray:
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.startswith("int") or dtype.startswith("uint"):
        return RNG.integers(1, 6, shape).astype(dtype)
    if kind == "pos":
        return RNG.uniform(0.5, 2.0, shape).astype(dtype)
    if kind == "unit":
        return RNG.uniform(-0.9, 0.9, shape).astype(dtype)
    if kind == "gt1":
        return RNG.uniform(1.1, 3.0, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


class Case:
    """One op call: input arrays, Relay keyword attributes and the expected result.

    ``ref`` is a NumPy function of the inputs, or ``relax_ref`` a function of the Relax input
    vars giving the hand-written Relax expression.
    """

    def __init__(
        self,
        inputs: list[np.ndarray],
        attrs: dict[str, Any] | None = None,
        ref: Callable[..., Any] | None = None,
        relax_ref: Callable[..., Any] | None = None,
        tuple_input: bool = False,
        rtol: float = 1e-5,
        whole_module: bool = False,
    ) -> None:
        self.inputs = inputs
        self.attrs = attrs or {}
        self.ref = ref
        self.relax_ref = relax_ref
        self.tuple_input = tuple_input
        self.rtol = rtol
        #: Run through the whole-module build: an output shape known only when it runs
        #: (``argwhere``) has no single kernel's destination to pass.
        self.whole_module = whole_module


def binary(np_fn: Callable[..., Any], dtype: str = F, kind: str = "normal") -> Case:
    return Case([data((2, 3), dtype, kind), data((3,), dtype, kind)], ref=np_fn)


def unary(np_fn: Callable[..., Any], kind: str = "normal", dtype: str = F) -> Case:
    return Case([data((2, 3), dtype, kind)], ref=np_fn)


#: A 4-channel NCHW image, shared by the families' cases.
X4 = data((1, 4, 6, 6))


def _relay_function(name: str, case: Case) -> tuple[relay.Function, list[relay.Var]]:
    params = [
        relay.var(f"p{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(case.inputs)
    ]
    fn: Any = relay  # the public builder: relay.add, relay.nn.conv2d, relay.image.resize2d
    for part in name.split("."):
        fn = getattr(fn, part)
    # Inputs by name: Relay's order puts some attributes first (gather(data, axis, indices)).
    names = OP_TABLE[name].inputs
    if case.tuple_input:
        out = fn(**{names[0]: params}, **case.attrs)
    else:
        out = fn(**dict(zip(names, params)), **case.attrs)
    body = out.astuple() if isinstance(out, relay.TupleWrapper) else out
    return relay.Function(params, body), params


def _run_engine(engine: Any, func: relay.Function, arrays: list[np.ndarray]) -> list[np.ndarray]:
    cached = engine.lower(func, "llvm")
    kernel = engine.jit(func, "llvm")
    outs = [
        tvm.runtime.empty([int(d) for d in t.shape], str(t.dtype), tvm.cpu())
        for t in cached.outputs
    ]
    kernel(*[tvm.runtime.tensor(a) for a in arrays], *outs)
    return [o.numpy() for o in outs]


def _hand_written(case: Case) -> relax.Function:
    params = [
        relax.Var(f"p{i}", relax.TensorType(list(a.shape), str(a.dtype)))
        for i, a in enumerate(case.inputs)
    ]
    bb = relax.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            gv = bb.emit_output(case.relax_ref(*params))  # type: ignore[misc]
        bb.emit_func_output(gv)
    return bb.get()["main"]


def _run_vm(func: relax.Function, arrays: list[np.ndarray]) -> list[np.ndarray]:
    ex = tvm.compile(tvm.IRModule({"main": func}), target="llvm")
    result = relax.VirtualMachine(ex, tvm.cpu())["main"](*[tvm.runtime.tensor(a) for a in arrays])
    if isinstance(result, tvm.runtime.Tensor):
        return [result.numpy()]
    return [r.numpy() for r in result]


def _run_module(func: relay.Function, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run through ``relay.create_executor`` (the whole-module build, TOPI kernels attached)."""
    result = relay.create_executor("graph", mod=tvm.IRModule.from_expr(func), target="llvm")
    out = result.evaluate()(*arrays)
    return [out.numpy()] if isinstance(out, tvm.runtime.Tensor) else [o.numpy() for o in out]


def check_op(engine: Any, name: str, case: Case) -> None:
    """Build ``name`` as ``case`` says, jit it, and compare with the case's reference.

    Ops served by a TOPI kernel (``call_te``) run through the module build: the engine's
    ``lower`` takes Relax ops only.
    """
    func, _ = _relay_function(name, case)
    attrs = func.__relax_function__().attrs
    if case.whole_module or (attrs is not None and PRIM_FUNCS_ATTR in attrs):
        got = _run_module(func, case.inputs)
    else:
        got = _run_engine(engine, func, case.inputs)
    if case.relax_ref is not None:
        hand = _hand_written(case)
        tvm.ir.assert_structural_equal(func.__relax_function__(), hand)
        want = _run_vm(hand, case.inputs)
    else:
        assert case.ref is not None
        result = case.ref(*case.inputs)
        want = list(result) if isinstance(result, list | tuple) else [result]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.shape == w.shape, name
        if w.dtype == bool or w.dtype.kind in "iu":
            np.testing.assert_array_equal(g, w.astype(g.dtype))
        else:
            np.testing.assert_allclose(g, w, rtol=case.rtol, atol=1e-5)


def family_tests(
    family: ModuleType, cases: dict[str, Case], elsewhere: frozenset[str] = frozenset()
) -> tuple[Callable[..., None], ...]:
    """The two tests of an op family: every row has a case (or is in ``elsewhere``: tested by
    a module of its own, the engine's ``jit`` cannot run it), and every case matches."""

    def test_every_row_has_a_case() -> None:
        assert set(cases) | elsewhere == {row.name for row in family.ROWS}

    @pytest.mark.parametrize("name", sorted(cases))
    def test_relay_op_matches_reference(engine: Any, name: str) -> None:
        check_op(engine, name, cases[name])

    return test_every_row_has_a_case, test_relay_op_matches_reference
