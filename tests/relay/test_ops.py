"""Every row of the Relay op table: built with the Relay API, jitted by the engine, checked.

Each case builds one call with ``compile_engine_compat.relay``, jits it with the engine and
compares with NumPy; where NumPy has no short form (convolutions, pools, resizes, norms) it
compares with the hand-written Relax function of the same op run through ``tvm.compile`` and
``relax.VirtualMachine``, and checks that the Relay-built function is structurally that function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay import OP_TABLE, REFUSED_OPS, UnsupportedRelayError

RNG = np.random.default_rng(0)
F = "float32"


def _data(shape: tuple[int, ...], dtype: str = F, kind: str = "normal") -> np.ndarray:
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
    ) -> None:
        self.inputs = inputs
        self.attrs = attrs or {}
        self.ref = ref
        self.relax_ref = relax_ref
        self.tuple_input = tuple_input
        self.rtol = rtol


def _binary(np_fn: Callable[..., Any], dtype: str = F, kind: str = "normal") -> Case:
    return Case([_data((2, 3), dtype, kind), _data((3,), dtype, kind)], ref=np_fn)


def _unary(np_fn: Callable[..., Any], kind: str = "normal", dtype: str = F) -> Case:
    return Case([_data((2, 3), dtype, kind)], ref=np_fn)


def _erf(x: np.ndarray) -> np.ndarray:
    from math import erf

    return np.vectorize(erf)(x).astype(x.dtype)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


X4 = _data((1, 4, 6, 6))
W4 = _data((8, 4, 3, 3))
G4, B4 = _data((4,), kind="pos"), _data((4,))


R = relax.op

CASES: dict[str, Case] = {
    "add": _binary(np.add),
    "subtract": _binary(np.subtract),
    "multiply": _binary(np.multiply),
    "divide": _binary(np.divide, kind="pos"),
    "floor_divide": _binary(lambda a, b: np.floor_divide(a, b), dtype="int32"),
    "power": _binary(np.power, kind="pos"),
    "maximum": _binary(np.maximum),
    "minimum": _binary(np.minimum),
    "mod": _binary(np.fmod, dtype="int32"),
    "floor_mod": _binary(np.mod, dtype="int32"),
    "equal": _binary(np.equal, dtype="int32"),
    "not_equal": _binary(np.not_equal, dtype="int32"),
    "less": _binary(np.less),
    "less_equal": _binary(np.less_equal, dtype="int32"),
    "greater": _binary(np.greater),
    "greater_equal": _binary(np.greater_equal, dtype="int32"),
    "logical_and": _binary(np.logical_and, dtype="bool"),
    "logical_or": _binary(np.logical_or, dtype="bool"),
    "logical_xor": _binary(np.logical_xor, dtype="bool"),
    "bitwise_and": _binary(np.bitwise_and, dtype="int32"),
    "bitwise_or": _binary(np.bitwise_or, dtype="int32"),
    "bitwise_xor": _binary(np.bitwise_xor, dtype="int32"),
    "left_shift": _binary(np.left_shift, dtype="int32"),
    "right_shift": _binary(np.right_shift, dtype="int32"),
    "exp": _unary(np.exp),
    "fast_exp": _unary(np.exp),
    "log": _unary(np.log, "pos"),
    "sqrt": _unary(np.sqrt, "pos"),
    "rsqrt": _unary(_rsqrt, "pos"),
    "sigmoid": _unary(_sigmoid),
    "tanh": _unary(np.tanh),
    "fast_tanh": _unary(np.tanh),
    "sin": _unary(np.sin),
    "cos": _unary(np.cos),
    "tan": _unary(np.tan, "unit"),
    "asin": _unary(np.arcsin, "unit"),
    "acos": _unary(np.arccos, "unit"),
    "atan": _unary(np.arctan),
    "sinh": _unary(np.sinh),
    "cosh": _unary(np.cosh),
    "asinh": _unary(np.arcsinh),
    "acosh": _unary(np.arccosh, "gt1"),
    "atanh": _unary(np.arctanh, "unit"),
    "abs": _unary(np.abs),
    "negative": _unary(np.negative),
    "sign": _unary(np.sign),
    "floor": _unary(np.floor),
    "ceil": _unary(np.ceil),
    "round": _unary(np.round),
    "trunc": _unary(np.trunc),
    "erf": _unary(_erf),
    "fast_erf": _unary(_erf),
    "isnan": _unary(np.isnan),
    "isinf": _unary(np.isinf),
    "isfinite": _unary(np.isfinite),
    "logical_not": _unary(np.logical_not, dtype="bool"),
    "bitwise_not": _unary(np.invert, dtype="int32"),
    # reductions: axis / keepdims / exclude
    "sum": Case(
        [_data((2, 3, 4))], {"axis": 1, "keepdims": True}, lambda x: x.sum(1, keepdims=True)
    ),
    "mean": Case([_data((2, 3, 4))], {"axis": [0, 2]}, lambda x: x.mean((0, 2))),
    "max": Case([_data((2, 3, 4))], {"axis": 1, "exclude": True}, lambda x: x.max((0, 2))),
    "min": Case([_data((2, 3, 4))], {}, lambda x: x.min()),
    "prod": Case([_data((2, 3))], {"axis": -1}, lambda x: x.prod(-1)),
    "variance": Case([_data((2, 3))], {"axis": 1}, lambda x: x.var(1)),
    "std": Case([_data((2, 3))], {"axis": 0, "keepdims": True}, lambda x: x.std(0, keepdims=True)),
    "argmax": Case([_data((2, 5))], {"axis": 1}, lambda x: x.argmax(1).astype("int32")),
    "argmin": Case([_data((2, 5))], {"axis": [0]}, lambda x: x.argmin(0).astype("int32")),
    # nn
    "nn.conv1d": Case(
        [_data((1, 3, 9)), _data((4, 3, 3))],
        {"strides": 2, "padding": 1},
        relax_ref=lambda x, w: R.nn.conv1d(x, w, strides=2, padding=1),
    ),
    "nn.conv2d": Case(
        [X4, W4],
        {"padding": (1, 1), "channels": 8, "kernel_size": 3},
        relax_ref=lambda x, w: R.nn.conv2d(x, w, padding=(1, 1, 1, 1)),
        rtol=1e-4,
    ),
    "nn.conv3d": Case(
        [_data((1, 2, 4, 4, 4)), _data((3, 2, 2, 2, 2))],
        {"dilation": 1},
        relax_ref=lambda x, w: R.nn.conv3d(x, w),
        rtol=1e-4,
    ),
    "nn.conv1d_transpose": Case(
        [_data((1, 3, 5)), _data((3, 2, 3))],
        {"strides": 2},
        relax_ref=lambda x, w: R.nn.conv1d_transpose(x, w, strides=2),
        rtol=1e-4,
    ),
    "nn.conv2d_transpose": Case(
        [_data((1, 3, 4, 4)), _data((3, 2, 3, 3))],
        {"strides": (2, 2), "padding": (1, 1), "output_padding": (1, 1)},
        relax_ref=lambda x, w: R.nn.conv2d_transpose(
            x, w, strides=(2, 2), padding=(1, 1, 1, 1), output_padding=(1, 1)
        ),
        rtol=1e-4,
    ),
    "nn.dense": Case([_data((2, 4)), _data((3, 4))], {"units": 3}, lambda x, w: x @ w.T, rtol=1e-4),
    "nn.matmul": Case(
        [_data((4, 2)), _data((3, 4))],
        {"transpose_a": True, "transpose_b": True},
        lambda a, b: a.T @ b.T,
        rtol=1e-4,
    ),
    "nn.batch_matmul": Case(
        [_data((2, 3, 4)), _data((2, 5, 4))], {}, lambda a, b: a @ b.transpose(0, 2, 1), rtol=1e-4
    ),
    "nn.bias_add": Case([X4, _data((4,))], {}, lambda x, b: x + b.reshape(1, 4, 1, 1)),
    "nn.relu": _unary(lambda x: np.maximum(x, 0)),
    "nn.leaky_relu": Case([_data((2, 3))], {"alpha": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    "nn.prelu": Case(
        [X4, _data((4,), kind="pos")], {}, lambda x, a: np.where(x > 0, x, a.reshape(4, 1, 1) * x)
    ),
    "nn.softmax": Case(
        [_data((2, 5))],
        {"axis": 1},
        lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True),
    ),
    "nn.log_softmax": Case(
        [_data((2, 5))], {}, lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))
    ),
    "nn.max_pool1d": Case(
        [_data((1, 2, 8))], {"pool_size": 2, "strides": 2}, lambda x: x.reshape(1, 2, 4, 2).max(-1)
    ),
    "nn.max_pool2d": Case(
        [X4],
        {"pool_size": (2, 2), "strides": (2, 2)},
        lambda x: x.reshape(1, 4, 3, 2, 3, 2).max((3, 5)),
    ),
    "nn.max_pool3d": Case(
        [_data((1, 1, 4, 4, 4))],
        {"pool_size": 2, "strides": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).max((3, 5, 7)),
    ),
    "nn.avg_pool1d": Case(
        [_data((1, 2, 8))], {"pool_size": 2, "strides": 2}, lambda x: x.reshape(1, 2, 4, 2).mean(-1)
    ),
    "nn.avg_pool2d": Case(
        [X4],
        {"pool_size": 3, "padding": 1, "count_include_pad": True},
        relax_ref=lambda x: R.nn.avg_pool2d(
            x, pool_size=(3, 3), padding=(1, 1, 1, 1), count_include_pad=True
        ),
    ),
    "nn.avg_pool3d": Case(
        [_data((1, 1, 4, 4, 4))],
        {"pool_size": 2, "strides": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)),
    ),
    "nn.global_max_pool2d": Case([X4], {}, lambda x: x.max((2, 3), keepdims=True)),
    "nn.global_avg_pool2d": Case([X4], {}, lambda x: x.mean((2, 3), keepdims=True)),
    "nn.adaptive_avg_pool1d": Case(
        [_data((1, 2, 8))], {"output_size": 4}, lambda x: x.reshape(1, 2, 4, 2).mean(-1)
    ),
    "nn.adaptive_avg_pool2d": Case(
        [X4], {"output_size": (3, 3)}, lambda x: x.reshape(1, 4, 3, 2, 3, 2).mean((3, 5))
    ),
    "nn.batch_flatten": Case([X4], {}, lambda x: x.reshape(1, -1)),
    "nn.batch_norm": Case(
        [X4, G4, B4, _data((4,)), _data((4,), kind="pos")],
        {"epsilon": 1e-3},
        lambda x, g, b, m, v: [
            (x - m.reshape(4, 1, 1)) / np.sqrt(v.reshape(4, 1, 1) + 1e-3) * g.reshape(4, 1, 1)
            + b.reshape(4, 1, 1),
            m,
            v,
        ],
        rtol=1e-4,
    ),
    "nn.layer_norm": Case(
        [_data((2, 5)), _data((5,)), _data((5,))],
        {},
        lambda x, g, b: (
            (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b
        ),
        rtol=1e-4,
    ),
    "nn.group_norm": Case(
        [X4, G4, B4],
        {"num_groups": 2},
        relax_ref=lambda x, g, b: R.nn.group_norm(x, g, b, 2, 1, [2, 3]),
        rtol=1e-4,
    ),
    "nn.instance_norm": Case(
        [X4, G4, B4],
        {},
        relax_ref=lambda x, g, b: R.nn.instance_norm(x, g, b, 1, [2, 3]),
        rtol=1e-4,
    ),
    "nn.pad": Case(
        [_data((2, 3))],
        {"pad_width": ((1, 0), (0, 2)), "pad_value": 1.5},
        lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=1.5),
    ),
    "nn.upsampling": Case(
        [X4],
        {"scale_h": 2, "scale_w": 2},
        lambda x: x.repeat(2, axis=2).repeat(2, axis=3),
    ),
    "nn.dropout": _unary(lambda x: x),
    "image.resize2d": Case(
        [X4],
        {"size": (9, 9)},
        relax_ref=lambda x: R.image.resize2d(x, (9, 9), rounding_method="round", cubic_alpha=-0.5),
        rtol=1e-4,
    ),
    # transforms
    "reshape": Case([_data((2, 3, 4))], {"newshape": (0, -1)}, lambda x: x.reshape(2, 12)),
    "transpose": Case([_data((2, 3, 4))], {"axes": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1)),
    "squeeze": Case([_data((2, 1, 3))], {"axis": [1]}, lambda x: x.squeeze(1)),
    "expand_dims": Case(
        [_data((2, 3))], {"axis": 1, "num_newaxis": 2}, lambda x: x.reshape(2, 1, 1, 3)
    ),
    "concatenate": Case(
        [_data((2, 3)), _data((1, 3))],
        {"axis": 0},
        lambda a, b: np.concatenate([a, b], 0),
        None,
        tuple_input=True,
    ),
    "stack": Case(
        [_data((2, 3)), _data((2, 3))],
        {"axis": 1},
        lambda a, b: np.stack([a, b], 1),
        None,
        tuple_input=True,
    ),
    "split": Case([_data((6, 3))], {"indices_or_sections": 3}, lambda x: np.split(x, 3, axis=0)),
    "take": Case([_data((4, 3)), np.array([2, 0, 3], "int32")], {"axis": 0}, lambda x, i: x[i]),
    "strided_slice": Case(
        [_data((5, 6))],
        {"begin": [1, 0], "end": [4, 6], "strides": [2, 3]},
        lambda x: x[1:4:2, 0:6:3],
    ),
    "where": Case([_data((2, 3), "bool"), _data((2, 3)), _data((2, 3))], {}, np.where),
    "clip": Case([_data((2, 3))], {"a_min": -0.5, "a_max": 0.5}, lambda x: np.clip(x, -0.5, 0.5)),
    "cast": Case([_data((2, 3))], {"dtype": "int32"}, lambda x: x.astype("int32")),
    "full": Case([np.array(2.5, F)], {"shape": (2, 3)}, lambda v: np.full((2, 3), 2.5, F)),
    "zeros": Case([], {"shape": (2, 3), "dtype": "int32"}, lambda: np.zeros((2, 3), "int32")),
    "ones": Case([], {"shape": (3,), "dtype": F}, lambda: np.ones(3, F)),
    "full_like": Case([_data((2, 3)), np.array(4.0, F)], {}, lambda x, v: np.full_like(x, 4.0)),
    "zeros_like": _unary(np.zeros_like),
    "ones_like": _unary(np.ones_like),
    "broadcast_to": Case([_data((3,))], {"shape": (2, 3)}, lambda x: np.broadcast_to(x, (2, 3))),
    "tile": Case([_data((2, 3))], {"reps": (2, 1)}, lambda x: np.tile(x, (2, 1))),
    "repeat": Case([_data((2, 3))], {"repeats": 2, "axis": 1}, lambda x: x.repeat(2, 1)),
    "reverse": Case([_data((2, 3))], {"axis": 1}, lambda x: x[:, ::-1]),
    "sort": Case([_data((2, 5))], {}, lambda x: np.sort(x, -1)),
    "argsort": Case(
        [_data((2, 5))], {"is_ascend": False}, lambda x: np.argsort(-x, -1).astype("int32")
    ),
    "topk": Case(
        [_data((2, 5))],
        {"k": 2},
        lambda x: [-np.sort(-x, -1)[:, :2], np.argsort(-x, -1)[:, :2].astype("int32")],
    ),
    "cumsum": Case([_data((2, 4))], {"axis": 1}, lambda x: np.cumsum(x, 1)),
    "cumprod": Case(
        [_data((2, 4), kind="pos")],
        {"axis": 1, "exclusive": True},
        lambda x: np.cumprod(np.concatenate([np.ones((2, 1), F), x[:, :-1]], 1), 1),
    ),
    "copy": _unary(lambda x: x),
    "log2": _unary(np.log2, "pos"),
    "log10": _unary(np.log10, "pos"),
    "nn.fast_softmax": Case(
        [_data((2, 5))], {}, lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    ),
    "nn.adaptive_avg_pool3d": Case(
        [_data((1, 1, 4, 4, 4))],
        {"output_size": 2},
        lambda x: x.reshape(1, 1, 2, 2, 2, 2, 2, 2).mean((3, 5, 7)),
    ),
    "gather": Case(
        [_data((3, 4)), np.array([[0, 2], [1, 3], [3, 0]], "int32")],
        {"axis": 1},
        lambda x, i: np.take_along_axis(x, i, 1),
    ),
    "gather_nd": Case(
        [_data((3, 4)), np.array([[0, 2, 1], [1, 3, 0]], "int32")],
        {},
        lambda x, i: x[i[0], i[1]],
    ),
    "scatter_elements": Case(
        [_data((3, 4)), np.array([[1], [0], [3]], "int32"), _data((3, 1))],
        {"axis": 1},
        lambda x, i, u: _scatter(x, i, u),
    ),
    "one_hot": Case(
        [np.array([0, 2, 1], "int32")],
        {"on_value": 5.0, "off_value": -1.0, "depth": 3, "axis": -1, "dtype": "float32"},
        lambda i: np.where(np.eye(3, dtype=bool)[i], 5.0, -1.0).astype("float32"),
    ),
    "arange": Case([], {"start": 1.0, "stop": 4.0, "step": 0.5}, lambda: np.arange(1, 4, 0.5)),
    "reshape_like": Case([_data((2, 6)), _data((3, 4))], {}, lambda x, like: x.reshape(3, 4)),
    "layout_transform": Case(
        [X4], {"src_layout": "NCHW", "dst_layout": "NHWC"}, lambda x: x.transpose(0, 2, 3, 1)
    ),
    "einsum": Case(
        [_data((2, 3)), _data((3, 4))],
        {"equation": "ij,jk->ik"},
        lambda a, b: a @ b,
        tuple_input=True,
        rtol=1e-4,
    ),
}


def _scatter(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, i, u, 1)
    return out


def test_every_row_has_a_case():
    assert set(CASES) == set(OP_TABLE)


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


@pytest.mark.parametrize("name", sorted(OP_TABLE))
def test_relay_op_matches_reference(engine, name):
    case = CASES[name]
    func, _ = _relay_function(name, case)
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


@pytest.mark.parametrize("name", sorted(REFUSED_OPS))
def test_refused_ops_name_their_replacement(name):
    with pytest.raises(UnsupportedRelayError, match="Relax") as info:
        fn: Any = relay
        for part in name.split("."):
            fn = getattr(fn, part)
        fn(relay.var("x", shape=(1, 2, 2, 2)))
    assert name in str(info.value)
