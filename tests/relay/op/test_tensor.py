"""``relay.op.tensor``: every element-wise and creation op, against NumPy."""

from __future__ import annotations

import numpy as np

from compile_engine_compat.relay.op import tensor

from .cases import Case, F, binary, data, family_tests, unary


def _erf(x: np.ndarray) -> np.ndarray:
    from math import erf

    return np.vectorize(erf)(x).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


_SIGNED = np.array([[7.0, -7.0, 7.5], [-7.5, 3.0, -1.0]], F)
_SIGNED_BY = np.array([2.0, -2.0, 2.0], F)

CASES: dict[str, Case] = {
    "add": binary(np.add),
    "subtract": binary(np.subtract),
    "multiply": binary(np.multiply),
    "divide": binary(np.divide, kind="pos"),
    "floor_divide": binary(lambda a, b: np.floor_divide(a, b), dtype="int32"),
    "power": binary(np.power, kind="pos"),
    "maximum": binary(np.maximum),
    "minimum": binary(np.minimum),
    "mod": binary(np.fmod, dtype="int32"),
    "floor_mod": binary(np.mod, dtype="int32"),
    "equal": binary(np.equal, dtype="int32"),
    "not_equal": binary(np.not_equal, dtype="int32"),
    "less": binary(np.less),
    "less_equal": binary(np.less_equal, dtype="int32"),
    "greater": binary(np.greater),
    "greater_equal": binary(np.greater_equal, dtype="int32"),
    "logical_and": binary(np.logical_and, dtype="bool"),
    "logical_or": binary(np.logical_or, dtype="bool"),
    "logical_xor": binary(np.logical_xor, dtype="bool"),
    "bitwise_and": binary(np.bitwise_and, dtype="int32"),
    "bitwise_or": binary(np.bitwise_or, dtype="int32"),
    "bitwise_xor": binary(np.bitwise_xor, dtype="int32"),
    "left_shift": binary(np.left_shift, dtype="int32"),
    "right_shift": binary(np.right_shift, dtype="int32"),
    "exp": unary(np.exp),
    "log": unary(np.log, "pos"),
    "sqrt": unary(np.sqrt, "pos"),
    "rsqrt": unary(_rsqrt, "pos"),
    "sigmoid": unary(_sigmoid),
    "tanh": unary(np.tanh),
    "sin": unary(np.sin),
    "cos": unary(np.cos),
    "tan": unary(np.tan, "unit"),
    "asin": unary(np.arcsin, "unit"),
    "acos": unary(np.arccos, "unit"),
    "atan": unary(np.arctan),
    "sinh": unary(np.sinh),
    "cosh": unary(np.cosh),
    "asinh": unary(np.arcsinh),
    "acosh": unary(np.arccosh, "gt1"),
    "atanh": unary(np.arctanh, "unit"),
    "abs": unary(np.abs),
    "negative": unary(np.negative),
    "sign": unary(np.sign),
    "floor": unary(np.floor),
    "ceil": unary(np.ceil),
    "round": unary(np.round),
    "trunc": unary(np.trunc),
    "erf": unary(_erf),
    "isnan": unary(np.isnan),
    "isinf": unary(np.isinf),
    "isfinite": unary(np.isfinite),
    "logical_not": unary(np.logical_not, dtype="bool"),
    "bitwise_not": unary(np.invert, dtype="int32"),
    "fast_exp": unary(np.exp),
    "fast_tanh": unary(np.tanh),
    "fast_erf": unary(_erf),
    "log2": unary(np.log2, "pos"),
    "log10": unary(np.log10, "pos"),
    "clip": Case([data((2, 3))], {"a_min": -0.5, "a_max": 0.5}, lambda x: np.clip(x, -0.5, 0.5)),
    "zeros": Case([], {"shape": (2, 3), "dtype": "int32"}, lambda: np.zeros((2, 3), "int32")),
    "ones": Case([], {"shape": (3,), "dtype": F}, lambda: np.ones(3, F)),
    "zeros_like": unary(np.zeros_like),
    "ones_like": unary(np.ones_like),
    "concatenate": Case(
        [data((2, 3)), data((1, 3))],
        {"axis": 0},
        lambda a, b: np.concatenate([a, b], 0),
        None,
        tuple_input=True,
    ),
    "copy": unary(lambda x: x),
    "device_copy": Case([data((2, 3))], {"src_device": "cpu", "dst_device": "cpu"}, lambda x: x),
    "debug": unary(lambda x: x),  # a compiled build passes the value through
    "cast_like": Case([data((2, 3), "int32"), data((3,))], ref=lambda a, b: a.astype(b.dtype)),
    # Truncation toward zero, on negative operands too (floor division would differ).
    "trunc_divide": Case([_SIGNED, _SIGNED_BY], ref=lambda a, b: np.trunc(a / b)),
    "trunc_mod": Case([_SIGNED.astype("int32"), _SIGNED_BY.astype("int32")], ref=np.fmod),
    "einsum": Case(
        [data((2, 3)), data((3, 4))],
        {"equation": "ij,jk->ik"},
        lambda a, b: a @ b,
        tuple_input=True,
        rtol=1e-4,
    ),
}

# memory.kill gives an empty tuple, which no kernel computes: ManifestLifetimes' tests build it.
test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(
    tensor, CASES, elsewhere=frozenset({"memory.kill"})
)
