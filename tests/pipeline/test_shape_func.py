"""lower_shape_func: output shapes from input shapes, in a separate cache that clear() keeps."""

from __future__ import annotations

import numpy as np
import tvm
from _builders import add3, build, sym
from tvm import relax


def _symbolic_func():
    n = sym("n")
    return build(
        "main",
        [("x", (n, 3), "float32"), ("w", (3, 4), "float32")],
        lambda bb, x, w: (
            bb.emit(relax.op.reshape(bb.emit(relax.op.matmul(x, w)), relax.ShapeExpr([n * 4]))),
            bb.emit(relax.op.exp(w)),
        ),
    )


def test_shape_function_computes_output_shapes(engine):
    cached = engine.lower_shape_func(_symbolic_func(), "llvm")
    assert cached.prim_fn_var.name_hint.startswith("shape_func_matmul_reshape_exp")
    assert cached.shape_func_param_states == [2, 0]
    kernel = tvm.compile(cached.funcs, "llvm")[cached.prim_fn_var.name_hint]
    outs = [tvm.runtime.empty((1,), "int64"), tvm.runtime.empty((2,), "int64")]
    kernel(
        tvm.runtime.tensor(np.array([5, 3], "int64")),
        tvm.runtime.tensor(np.array([3, 4], "int64")),
        *outs,
    )
    assert outs[0].numpy().tolist() == [20]
    assert outs[1].numpy().tolist() == [3, 4]


def test_shape_func_cache_is_separate_and_survives_clear(engine):
    first = engine.lower_shape_func(add3((4,)), "llvm")
    assert engine.lower_shape_func(add3((4,)), "llvm").same_as(first)
    assert engine.items() == []
    engine.clear()
    items = engine.shape_func_items()
    assert any(value.cached_func is first for _, value in items)
    value = next(v for _, v in items if v.cached_func is first)
    assert value.use_count == 1  # starts at 0, one hit
    assert "shape_func_items cached" in engine.dump()
