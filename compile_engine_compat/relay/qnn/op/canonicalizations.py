"""``relay.qnn.op.canonicalizations``: TVM 0.19's integer lookup tables of a float function
(``create_integer_lookup_table``, ``create_integer_lookup_op``), computed in NumPy with TVM
0.19's quantize and dequantize arithmetic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from compile_engine_compat.relay.expr import Constant, Expr
from compile_engine_compat.relay.qnn.lowering.unary import (
    lookup_table,
    quantized_values,
    table_lookup,
)

__all__ = ["create_integer_lookup_op", "create_integer_lookup_table", "run_const_expr"]


def run_const_expr(expr: Expr) -> np.ndarray:
    """The value of an expression of constants, as a NumPy array (built and run on the Relax
    VM, as TVM 0.19 ran it on its VM)."""
    import tvm
    from tvm import relax

    from compile_engine_compat.relay.function import Function

    executable = tvm.compile(tvm.IRModule.from_expr(Function([], expr)), "llvm")
    return np.asarray(relax.VirtualMachine(executable, tvm.cpu())["main"]().numpy())


def _scalar(value: Any, what: str) -> float:
    if isinstance(value, Constant):
        array = np.asarray(value.data.numpy())
    elif isinstance(value, Expr):
        raise ValueError(f"{what} must be a constant (relay.const) to build a lookup table")
    else:
        array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"{what}: per-channel parameters are not supported, as in TVM 0.19")
    return float(array.reshape(-1)[0])


def create_integer_lookup_table(
    floating_point_func: Callable[[np.ndarray], np.ndarray],
    input_scale: Any,
    input_zero_point: Any,
    output_scale: Any,
    output_zero_point: Any,
    in_axis: int = -1,
    out_axis: int = -1,
    in_dtype: str = "uint8",
    out_dtype: str = "uint8",
) -> np.ndarray:
    """The quantized ``floating_point_func`` of every bit pattern of ``in_dtype``, indexed by
    the pattern read as unsigned (TVM 0.19's table)."""
    for dtype in (in_dtype, out_dtype):
        if not np.issubdtype(np.dtype(dtype), np.integer):
            raise ValueError(
                f"Only integer dtypes allowed got {in_dtype} and {out_dtype} for in and out dtypes."
            )
    bits = np.iinfo(in_dtype).bits
    patterns = np.arange(2**bits, dtype=f"uint{bits}").view(in_dtype)
    return quantized_values(
        floating_point_func,
        patterns,
        _scalar(input_scale, "input_scale"),
        int(_scalar(input_zero_point, "input_zero_point")),
        _scalar(output_scale, "output_scale"),
        int(_scalar(output_zero_point, "output_zero_point")),
        out_dtype,
    )


def create_integer_lookup_op(
    input_arg: Expr,
    floating_point_func: Callable[[np.ndarray], np.ndarray],
    in_scale: Any,
    in_zero_point: Any,
    out_scale: Any,
    out_zero_point: Any,
    in_axis: int = -1,
    out_axis: int = -1,
    in_dtype: str = "uint8",
    out_dtype: str = "uint8",
) -> Expr:
    """``input_arg`` mapped through the quantized ``floating_point_func``: one ``take`` of its
    table, as TVM 0.19's legalization of the unary QNN ops."""
    table = lookup_table(
        floating_point_func,
        _scalar(in_scale, "in_scale"),
        int(_scalar(in_zero_point, "in_zero_point")),
        _scalar(out_scale, "out_scale"),
        int(_scalar(out_zero_point, "out_zero_point")),
        in_dtype,
        out_dtype,
    )
    return table_lookup(input_arg, table, in_dtype)
