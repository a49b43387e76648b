"""Property tests: the shim computes what the modern path computes, on random Relax functions.

Profiles (pyproject.toml, ``[tool.compile_engine_compat.hypothesis]``): ``ci`` by default,
``--hypothesis-profile=thorough`` for long runs. Each property scales the profile's
``max_examples`` by its own cost. Findings are recorded in tests/PROPERTIES.md.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import tvm
import tvm_ffi
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from tvm import relax, te, topi

from compile_engine_compat import silenced
from compile_engine_compat.facade.engine import global_engine
from compile_engine_compat.testing import (
    assert_matches_new_path,
    build_function,
    input_arrays,
    relax_functions,
    relax_plans,
)
from compile_engine_compat.testing.op_plans import Plan
from compile_engine_compat.testing.oracle import (
    PATH_TOLERANCES,
    EquivalenceError,
    compare_all,
    run_jit,
    run_new_path,
)

pytestmark = pytest.mark.property

R = relax.op


def examples(factor: float) -> int:
    """The current profile's max_examples scaled by this property's relative cost."""
    return max(2, int(settings().max_examples * factor))


def _fresh_engine() -> Any:
    engine = global_engine()
    with silenced():
        engine.clear()
    return engine


def _check(data: Any, **strategy: Any) -> None:
    func = data.draw(relax_functions(**strategy), label="func")
    inputs = data.draw(input_arrays(func), label="inputs")
    assert_matches_new_path(func, *inputs, seed=inputs.seed)


# -- jit == new path == NumPy -------------------------------------------------------------------


@settings(max_examples=examples(1.0))
@given(st.data())
def test_jit_matches_new_path_and_numpy(data):
    _check(data, max_ops=5)


@settings(max_examples=examples(0.5))
@given(st.data())
def test_jit_matches_with_symbolic_dims(data):
    _check(data, max_ops=4, symbolic=True)


@settings(max_examples=examples(0.3))
@given(st.data())
def test_jit_matches_on_long_float_chains(data):
    _check(data, max_ops=10, dtypes=["float32"])


@settings(max_examples=examples(0.3))
@given(st.data())
def test_jit_matches_on_low_precision_and_bool(data):
    _check(data, max_ops=5, dtypes=["float16", "bool"])


# -- lower(f).outputs rebuilt by the user --------------------------------------------------------


@settings(max_examples=examples(0.5))
@given(st.data())
def test_lowered_outputs_rebuilt_with_create_prim_func_match_jit(data):
    func = data.draw(relax_functions(max_ops=4), label="func")
    inputs = data.draw(input_arrays(func), label="inputs")
    with silenced():
        cached = global_engine().lower(func, "llvm")
    constants = [c for c, _ in cached.constants]
    prim_func = te.create_prim_func(cached.inputs + constants + cached.outputs)
    kernel = tvm.compile(prim_func, target="llvm")["main"]

    like = run_new_path(func, inputs)
    jitted = run_jit(func, inputs, like)
    args = [tvm.runtime.tensor(np.asarray(a, order="C")) for a in inputs]
    args += [tvm.runtime.tensor(v.numpy()) for _, v in cached.constants]
    outs = [tvm.runtime.empty(o.shape, str(o.dtype), tvm.cpu()) for o in like]
    kernel(*args, *outs)
    rebuilt = [o.numpy() for o in outs]
    assert not compare_all(rebuilt, jitted, ("rebuilt", "jit"), PATH_TOLERANCES)


# -- cache laws ---------------------------------------------------------------------------------


@settings(max_examples=examples(1.0))
@given(relax_plans(max_ops=4, symbolic=True))
def test_structurally_equal_functions_share_one_entry_whatever_the_names(plan):
    engine = _fresh_engine()
    first = build_function(plan, name="main", prefix="a")
    second = build_function(plan, name="renamed", prefix="b")
    with silenced():
        cached = engine.lower(first, "llvm")
        assert engine.lower(second, "llvm") is cached
        items = engine.items()
    assert len(items) == 1
    assert items[0][1].use_count == 1


@settings(max_examples=examples(1.0))
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    dtype=st.sampled_from(["float32", "float16"]),
    keepdims=st.booleans(),
)
def test_a_different_shape_dtype_attribute_or_target_misses(shape, dtype, keepdims):
    def make(shape: tuple[int, ...], dtype: str, keepdims: bool) -> relax.Function:
        x = relax.Var("x", relax.TensorType(list(shape), dtype))
        bb = relax.BlockBuilder()
        with bb.function("main", [x]):
            with bb.dataflow():
                y = bb.emit(R.sum(bb.emit(R.exp(x)), axis=[0], keepdims=keepdims))
                out = bb.emit_output(y)
            bb.emit_func_output(out)
        return bb.get()["main"]

    engine = _fresh_engine()
    other_dtype = "float16" if dtype == "float32" else "float32"
    grown = (shape[0] + 1, *shape[1:])
    with silenced():
        base = engine.lower(make(shape, dtype, keepdims), "llvm")
        variants = [
            engine.lower(make(grown, dtype, keepdims), "llvm"),
            engine.lower(make(shape, other_dtype, keepdims), "llvm"),
            engine.lower(make(shape, dtype, not keepdims), "llvm"),
            engine.lower(make(shape, dtype, keepdims), {"kind": "llvm", "mcpu": "x86-64-v3"}),
        ]
        again = engine.lower(make(shape, dtype, keepdims), "llvm")
        items = engine.items()
    assert all(v is not base for v in variants)
    assert len({id(v) for v in variants}) == len(variants)
    assert again is base
    assert len(items) == 1 + len(variants)


@settings(max_examples=examples(1.0))
@given(relax_plans(max_ops=3), relax_plans(max_ops=3))
def test_structurally_different_functions_miss(plan_a, plan_b):
    engine = _fresh_engine()
    f, g = build_function(plan_a), build_function(plan_b)
    with silenced():
        same = engine.lower(f, "llvm") is engine.lower(g, "llvm")
    assert same == tvm_ffi.structural_equal(f, g)


@settings(max_examples=examples(1.0))
@given(relax_functions(max_ops=3), st.integers(0, 6))
def test_use_count_counts_hits_exactly(func, hits):
    engine = _fresh_engine()
    with silenced():
        for _ in range(hits + 1):
            engine.lower(func, "llvm")
        [(_, value)] = engine.items()
    assert value.use_count == hits


@settings(max_examples=examples(1.0))
@given(relax_functions(max_ops=3))
def test_clear_then_lower_recompiles(func):
    engine = _fresh_engine()
    with silenced():
        before = engine.lower(func, "llvm")
        engine.clear()
        assert engine.items() == []
        after = engine.lower(func, "llvm")
        [(_, value)] = engine.items()
    assert after is not before
    assert value.cached_func is after and value.use_count == 0
    assert _tir_text(after) == _tir_text(before)


# -- determinism --------------------------------------------------------------------------------


def _tir_text(cached: Any) -> str:
    name = cached.prim_fn_var.name_hint
    return cached.funcs.script().replace(name, "KERNEL")


def lowered_texts(plans: list[Plan]) -> list[str]:
    """The TIR text ``lower`` gives for each plan's function, each lowered on a cleared cache.

    Cleared first: a hit may come from an equal function with other parameter names, whose TIR
    names its buffers after those (as the legacy cache did).
    """
    texts = []
    for plan in plans:
        engine = _fresh_engine()
        with silenced():
            texts.append(_tir_text(engine.lower(build_function(plan), "llvm")))
    return texts


def test_lower_gives_the_same_tir_text_in_a_fresh_process(tmp_path):
    plans: list[Plan] = []

    @settings(max_examples=8, database=None, phases=[Phase.generate])
    @given(relax_plans(max_ops=4, symbolic=True))
    def collect(plan: Plan) -> None:
        plans.append(plan)

    collect()
    here = lowered_texts(plans)
    assert lowered_texts(plans) == here  # the same again in this process
    # Plans are plain data: the fresh process rebuilds the very same functions from them.
    (tmp_path / "plans.pkl").write_bytes(pickle.dumps(plans))
    tests_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = (
        "import json, pickle, sys, warnings; warnings.simplefilter('ignore'); "
        f"sys.path.insert(0, {tests_dir!r}); from testing import test_properties as t; "
        f"plans = pickle.load(open({str(tmp_path / 'plans.pkl')!r}, 'rb')); "
        "print('@@' + json.dumps(t.lowered_texts(plans)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=240, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    there = json.loads(proc.stdout.rsplit("@@", 1)[1])
    assert there == here


# -- the suite catches a planted bug ------------------------------------------------------------


def test_a_planted_bug_is_caught_within_the_ci_profile():
    """Swap relax.add's TE compute for subtract inside the shim only; the property must fail."""
    engine = _fresh_engine()
    previous = engine.op_lowering

    def planted(call: Any, te_args: list[Any], default: Any) -> Any:
        if call.op.name == "relax.add":
            return topi.subtract(*te_args)
        return previous(call, te_args, default) if previous is not None else default()

    @settings(max_examples=examples(1.0), phases=[Phase.generate], database=None)
    @given(st.data())
    def prop(data: Any) -> None:
        _check(data, max_ops=5)

    engine.op_lowering = planted
    try:
        with pytest.raises(EquivalenceError, match="jit vs new path"):
            prop()
    finally:
        engine.op_lowering = previous
        _fresh_engine()
