"""``relay.ty``: Relay's types; ``relay.Any()`` is a symbolic dimension the engine lowers."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay


def test_any_is_a_symbolic_dimension(engine):
    n = relay.Any()
    x = relay.var("x", shape=(n, 3))
    f = relay.Function([x], relay.nn.relu(x))
    assert "?" in repr(relay.testing.run_infer_type(f).body.checked_type)
    kernel = engine.jit(f, "llvm")
    arr = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    got = tvm.runtime.empty((2, 3), "float32", tvm.cpu())
    kernel(tvm.runtime.tensor(arr), got)
    np.testing.assert_array_equal(got.numpy(), np.maximum(arr, 0))
    try:
        assert engine.lower_shape_func(f, "llvm") is not None
    finally:
        # clear() keeps shape functions (as legacy did); other tests count them.
        with engine._lock:
            engine._shape_cache.clear()


def test_each_position_of_a_repeated_any_is_its_own_dimension():
    # Upstream's idiom: one Any object repeated; in Relay each position is its own unknown.
    ty = relay.TensorType([relay.Any()] * 3, "float32")
    x = relay.var("x", ty)
    dims = ty.shape
    assert len({str(d) for d in dims}) == 3
    assert x.type_annotation == relay.TensorType([relay.Any()] * 3, "float32")
    f = relay.Function([x], relay.nn.relu(x))
    arr = np.random.default_rng(0).standard_normal((2, 3, 4)).astype("float32")
    got = relay.create_executor(mod=tvm.IRModule.from_expr(f), target="llvm").evaluate()(arr)
    np.testing.assert_array_equal(got.numpy(), np.maximum(arr, 0))


def test_an_int32_shape_variable_is_cast_to_int64_once():
    n = tvm.te.var("n")  # int32, as te.var makes it
    x_ty, y_ty = relay.TensorType((5, n, 5), "float32"), relay.TensorType((5, n, 5), "float32")
    x, y = relay.var("x", x_ty), relay.var("y", y_ty)
    assert x_ty.shape[1].ty.dtype == "int64"
    assert x_ty.shape[1].same_as(y_ty.shape[1])  # still one dimension
    out = relay.testing.run_infer_type(relay.add(x, y))
    assert out.checked_type == relay.TensorType((5, n, 5), "float32")
    assert relay.TensorType((n * 2,), "float32") == relay.TensorType((n * 2,), "float32")
    assert relay.TensorType((n * 2,), "float32") != relay.TensorType((n * 3,), "float32")
    # Provably equal forms are one dimension (Relay's concatenate typed t + t, Relax infers t * 2).
    assert relay.TensorType((n + n,), "float32") == relay.TensorType((n * 2,), "float32")
    assert relay.TensorType((n + 1,), "float32") != relay.TensorType((n * 2,), "float32")
    doubled = relay.TensorType((n * 2 + n // 4,), "float32").shape[0]
    assert doubled.ty.dtype == "int64" and "n" in str(doubled)
    with pytest.raises(TypeError, match="int64"):
        relay.TensorType((tvm.tirx.Select(n > 1, n, 1),), "float32")
    with pytest.raises(TypeError, match="integer"):
        relay.TensorType((tvm.te.var("f", "float32"),), "float32")


def test_a_relay_type_error_is_what_legacy_tvm_error_caught():
    with pytest.raises(RuntimeError):  # tvm.error.TVMError under install()
        relay.testing.run_infer_type(
            relay.add(relay.var("a", shape=(2,)), relay.var("b", shape=(3,)))
        )


# -- upstream Relay test files (test_type_infer, test_any): Relay types read from Relax ---------
def test_checked_type_of_a_modules_relax_function_is_relays(installed_alias):
    x, y = relay.var("x", shape=(10, 4)), relay.var("y", shape=(5, 10, 1))
    mod = tvm.IRModule.from_expr(relay.Function([x, y], x + y))
    t1, t2 = relay.TensorType((10, 4)), relay.TensorType((5, 10, 1))
    assert mod["main"].checked_type == relay.FuncType([t1, t2], relay.TensorType((5, 10, 4)))
    assert mod["main"].params[0].checked_type == t1
    assert mod["main"].body.checked_type == relay.TensorType((5, 10, 4))  # a SeqExpr
    assert relay.scalar_type("float64") == relay.TensorType((), "float64")


def test_a_result_of_known_rank_only_has_an_any_per_dimension():
    from tvm import relax

    from compile_engine_compat.relay.ty import from_struct_info

    ty = from_struct_info(relax.TensorType(dtype="float32", ndim=3))
    assert isinstance(ty, relay.TensorType)
    assert ty == relay.TensorType([relay.Any()] * 3) and ty.dtype == "float32"
    assert not ty.shape[0].same_as(ty.shape[1])  # each position its own unknown
    with pytest.raises(relay.RelayTypeError, match="no Relay type"):
        from_struct_info(relax.TensorType(dtype="float32", ndim=-1))


def test_is_dynamic_says_whether_a_dimension_is_any():
    assert relay.ty.is_dynamic(relay.TensorType((relay.Any(), 3)))
    assert not relay.ty.is_dynamic(relay.TensorType((2, 3)))
    with pytest.raises(TypeError, match=r"takes a relay\.TensorType"):
        relay.ty.is_dynamic(relay.TupleType([]))
