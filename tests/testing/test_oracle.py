"""compile_engine_compat.testing: the strategies, the inputs, the oracle and the pytest fixture."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from tvm import relax, tirx, topi

from compile_engine_compat import testing
from compile_engine_compat.facade.engine import global_engine
from compile_engine_compat.testing import (
    OP_NAMES,
    EquivalenceError,
    arrays_for,
    assert_matches_new_path,
    input_arrays,
    relax_functions,
)
from compile_engine_compat.testing.op_plans import OPS
from compile_engine_compat.testing.oracle import PATH_TOLERANCES, compare

R = relax.op
FEW = settings(max_examples=15, database=None, suppress_health_check=list(HealthCheck))

REQUIRED = [
    "add", "multiply", "exp", "sum", "mean", "max", "matmul", "nn.conv1d", "nn.conv2d",
    "nn.max_pool2d", "nn.avg_pool2d", "nn.softmax", "nn.layer_norm", "nn.group_norm",
    "nn.rms_norm", "reshape", "permute_dims", "concat", "split", "strided_slice", "take",
    "where", "astype", "clip", "cumsum", "sort", "argsort", "topk",
]  # fmt: skip


def test_the_registry_covers_at_least_40_ops_with_numpy_references():
    assert len(OP_NAMES) >= 40
    assert set(REQUIRED) <= set(OP_NAMES)
    missing = [n for n in OP_NAMES if OPS[n].reference is None and OPS[n].shaped_reference is None]
    assert missing == []


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ops": ["no_such_op"]}, "unknown ops"),
        ({"dtypes": ["complex64"]}, "dtypes must be"),
        ({"dtypes": []}, "dtypes must be"),
        ({"max_ops": 0}, "max_ops"),
        ({"ops": ["nn.conv2d"], "dtypes": ["int32"]}, "accepts the dtypes"),
    ],
)
def test_bad_strategy_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        relax_functions(**kwargs)


@pytest.mark.parametrize("op", OP_NAMES)
def test_every_op_builds_lowers_and_matches_alone(op):
    # One (the simplest) example per op: each registry entry draws a valid function that the
    # shim and the new path agree on. The property suite mixes them.
    @settings(max_examples=1, database=None, derandomize=True)
    @given(st.data())
    def check(data: Any) -> None:
        func = data.draw(relax_functions(ops=[op], max_ops=1))
        called = {c.op.name for c in _calls(func)}
        assert f"relax.{op}" in called
        inputs = data.draw(input_arrays(func))
        assert_matches_new_path(func, *inputs, seed=inputs.seed)

    check()


def _calls(func: relax.Function) -> list[Any]:
    return [
        b.value
        for block in func.body.blocks
        for b in block.bindings
        if isinstance(b.value, tvm.ir.Call)
    ]


@FEW
@given(relax_functions(dtypes=["int32"], max_ops=3))
def test_dtypes_restrict_the_parameters(func):
    assert {str(p.ty.dtype) for p in func.params} == {"int32"}


def _find(predicate: Any, **kwargs: Any) -> relax.Function:
    return find(
        relax_functions(**kwargs),
        predicate,
        settings=settings(max_examples=300, database=None, phases=[Phase.generate]),
    )


def test_functions_reach_symbolic_dims_tuple_outputs_constants_and_shared_values():
    def symbolic(f: relax.Function) -> bool:
        return any(isinstance(d, tirx.Var) for p in f.params for d in p.ty.shape.values)

    def shared(f: relax.Function) -> bool:
        uses: list[Any] = [a for c in _calls(f) for a in c.args if isinstance(a, relax.Var)]
        return any(sum(u.same_as(v) for u in uses) > 1 for v in uses)

    def constant(f: relax.Function) -> bool:
        return any(isinstance(a, tvm.ir.GenericConst) for c in _calls(f) for a in c.args)

    assert symbolic(_find(symbolic, symbolic=True))
    assert isinstance(
        _find(lambda f: isinstance(f.ret_ty, relax.TupleType)).ret_ty, relax.TupleType
    )
    assert constant(_find(constant))
    assert shared(_find(shared))


# -- inputs -------------------------------------------------------------------------------------


@FEW
@given(st.data())
def test_input_arrays_match_the_parameters(data):
    func = data.draw(relax_functions(max_ops=3, symbolic=True))
    inputs = data.draw(input_arrays(func))
    assert len(inputs) == len(func.params)
    for param, array in zip(func.params, inputs):
        assert str(array.dtype) == str(param.ty.dtype)
        dims = [
            inputs.sizes[d.name] if isinstance(d, tirx.Var) else int(d)
            for d in param.ty.shape.values
        ]
        assert list(array.shape) == dims
    again = arrays_for(func, inputs.seed, inputs.sizes)
    assert all(np.array_equal(a, b) for a, b in zip(inputs, again))


def test_input_arrays_avoid_undefined_values_unless_asked():
    func = build(
        "main",
        [
            ("x", (64,), "float32"),
            ("i", (64,), "int32"),
            ("d", (64,), "int32"),
            ("k", (5,), "int64"),
        ],
        lambda bb, x, i, d, k: relax.Tuple(
            [
                bb.emit(R.log(x)),
                bb.emit(R.floor_divide(i, d)),
                bb.emit(R.take(bb.emit(R.add(x, x)), k, axis=0)),
            ]
        ),
    )
    x, _, d, k = arrays_for(func, seed=3)
    assert (x > 0).all() and (d != 0).all() and ((k >= 0) & (k < 64)).all()
    raw = arrays_for(func, seed=3, avoid_undefined=False)
    assert (raw[0] <= 0).any()


def test_input_arrays_reject_non_tensor_parameters():
    x = relax.Var("x", relax.TupleType([relax.TensorType([2], "float32")]))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(relax.TupleGetItem(x, 0))
    with pytest.raises(TypeError, match="tensor parameters"):
        input_arrays(bb.get()["main"])


# -- the oracle ---------------------------------------------------------------------------------


def test_tolerances_are_bit_exact_for_integers_and_bool_and_stated_for_floats():
    ints = np.array([1, 2, 3], "int32")
    assert compare(ints, ints.copy(), PATH_TOLERANCES) == ""
    assert "differ" in compare(ints, ints + np.array([0, 0, 1], "int32"), PATH_TOLERANCES)
    assert "differ" in compare(np.array([True]), np.array([False]), PATH_TOLERANCES)
    floats = np.array([1.0, 2.0], "float32")
    assert compare(floats * np.float32(1 + 1e-6), floats, PATH_TOLERANCES) == ""
    assert "beyond" in compare(floats * np.float32(1 + 1e-3), floats, PATH_TOLERANCES)
    assert "NaN" in compare(
        np.array([np.nan], "float32"), np.array([0.0], "float32"), PATH_TOLERANCES
    )
    assert "shape" in compare(floats, floats[:1], PATH_TOLERANCES)


def test_the_failure_report_holds_the_script_seed_and_both_outputs(engine):
    func = build("main", [("x", (3,), "float32")], lambda bb, x: R.add(x, x))
    previous = engine.op_lowering
    engine.op_lowering = lambda call, args, default: topi.multiply(*args)
    try:
        with pytest.raises(EquivalenceError) as info:
            assert_matches_new_path(func, np.array([1.0, 2.0, 3.0], "float32"), seed=1234)
    finally:
        engine.op_lowering = previous
        engine.clear()
    report = str(info.value)
    for needle in (
        "jit vs new path",
        "seed: 1234",
        "R.add(x, x)",
        "jit output 0",
        "new path output 0",
        "NumPy output 0",
    ):
        assert needle in report
    assert isinstance(info.value, AssertionError)


def test_the_oracle_returns_the_jit_outputs_and_does_not_count_legacy_calls():
    import compile_engine_compat as cec

    func = build("main", [("x", (2, 2), "float32")], lambda bb, x: R.nn.relu(x))
    cec.reset_ledger()
    [out] = assert_matches_new_path(func, np.array([[-1.0, 2.0], [3.0, -4.0]], "float32"))
    np.testing.assert_array_equal(out, [[0.0, 2.0], [3.0, 0.0]])
    assert cec.ledger() == []


def test_numpy_reference_is_none_for_ops_without_one():
    func = build("main", [("x", (2, 3), "float32")], lambda bb, x: R.nn.batch_flatten(x))
    assert testing.numpy_reference(func, [np.ones((2, 3), "float32")]) is None


# -- the pytest fixture -------------------------------------------------------------------------


def test_the_fixture_comes_from_the_plugin_and_runs_the_oracle(compile_engine_equivalence):
    func = build(
        "main", [("x", (4,), "float32"), ("y", (4,), "float32")], lambda bb, x, y: R.multiply(x, y)
    )
    x = np.arange(4, dtype="float32")
    [out] = compile_engine_equivalence(func, x, x)
    np.testing.assert_array_equal(out, x * x)
    assert global_engine() is not None


def test_the_package_forwards_exactly_the_strategies_names_and_needs_no_hypothesis_for_the_oracle():
    import subprocess
    import sys

    from compile_engine_compat import testing
    from compile_engine_compat.testing import strategies

    assert sorted(testing.__all__) == sorted(strategies.__all__)
    script = (
        "import sys; import compile_engine_compat.testing.oracle;"
        " import compile_engine_compat.testing.shadow; print('hypothesis' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "False", out.stderr[-2000:]
