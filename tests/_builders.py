"""Small Relax functions shared by the tests (built with BlockBuilder, as users do)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tvm
from tvm import relax, tirx
from tvm.relax import TensorType


def build(
    name: str,
    params: Sequence[tuple[str, Sequence[Any], str]],
    body: Callable[..., Any],
) -> relax.Function:
    """Build ``name(params) = body(*param_vars)`` in one dataflow block.

    ``body`` receives the block builder followed by the parameter vars and returns the output
    expression (emitted for it) or a tuple of expressions.
    """
    vars_ = [relax.Var(n, TensorType(list(shape), dtype)) for n, shape, dtype in params]
    bb = relax.BlockBuilder()
    with bb.function(name, vars_):
        with bb.dataflow():
            result = body(bb, *vars_)
            if isinstance(result, tuple | list):
                result = relax.Tuple(
                    [bb.emit(r) if not isinstance(r, relax.Var) else r for r in result]
                )
            out = bb.emit_output(bb.emit(result) if not isinstance(result, relax.Var) else result)
        bb.emit_func_output(out)
    return bb.get()[name]


def add3(shape: Sequence[int], dtype: str = "float32") -> relax.Function:
    """(x + x) + x, the function of upstream's test_compile_engine."""
    return build(
        "main",
        [("x", shape, dtype)],
        lambda bb, x: relax.op.add(bb.emit(relax.op.add(x, x)), x),
    )


def dense_bias_relu(n: Any = 4, k: int = 8, m: int = 16) -> relax.Function:
    return build(
        "main",
        [("x", (n, k), "float32"), ("w", (k, m), "float32"), ("b", (m,), "float32")],
        lambda bb, x, w, b: relax.op.nn.relu(
            bb.emit(relax.op.add(bb.emit(relax.op.matmul(x, w)), b))
        ),
    )


def sym(name: str = "n") -> tirx.Var:
    return tirx.Var(name, "int64")


def run_new_path(
    func: relax.Function, *arrays: np.ndarray, target: str = "llvm"
) -> list[np.ndarray]:
    """Run ``func`` through tvm.compile + relax.VirtualMachine; return flat NumPy outputs."""
    func = func.with_attr("global_symbol", "main")
    ex = tvm.compile(tvm.IRModule({"main": func}), target=target)
    vm = relax.VirtualMachine(ex, tvm.cpu())
    result = vm["main"](*[tvm.runtime.tensor(a) for a in arrays])
    return [t.numpy() for t in _flatten(result)]


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, tvm.runtime.Tensor):
        return [value]
    return [leaf for item in value for leaf in _flatten(item)]


def run_jit(kernel: Any, cached: Any, *arrays: np.ndarray) -> list[np.ndarray]:
    """Call a jitted kernel DPS-style, outputs allocated from the CachedFunc's output tensors."""
    shapes = _output_shapes(cached, arrays)
    outs = [np.empty(shape, dtype=str(t.dtype)) for shape, t in zip(shapes, cached.outputs)]
    kernel(*arrays, *outs)
    return outs


def _output_shapes(cached: Any, arrays: Sequence[np.ndarray]) -> list[tuple[int, ...]]:
    # Bind symbolic dims from the input shapes, then evaluate each output dim.
    from tvm.sym import Analyzer

    analyzer = Analyzer()
    for placeholder, array in zip(cached.inputs, arrays):
        for dim, size in zip(placeholder.shape, array.shape):
            if isinstance(dim, tirx.Var):
                analyzer.bind(dim, tirx.IntImm("int64", size))
    return [tuple(int(analyzer.simplify(d)) for d in t.shape) for t in cached.outputs]
