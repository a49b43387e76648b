"""``relay.op.transform``: every shape and data-movement op, against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
import tvm.topi.testing as ref

from compile_engine_compat import relay
from compile_engine_compat.relay.op import transform

from .cases import X4, Case, F, data, family_tests


def _scatter(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, i, u, 1)
    return out


CASES: dict[str, Case] = {
    "reshape": Case([data((2, 3, 4))], {"newshape": (0, -1)}, lambda x: x.reshape(2, 12)),
    "transpose": Case([data((2, 3, 4))], {"axes": (2, 0, 1)}, lambda x: x.transpose(2, 0, 1)),
    "squeeze": Case([data((2, 1, 3))], {"axis": [1]}, lambda x: x.squeeze(1)),
    "expand_dims": Case(
        [data((2, 3))], {"axis": 1, "num_newaxis": 2}, lambda x: x.reshape(2, 1, 1, 3)
    ),
    "stack": Case(
        [data((2, 3)), data((2, 3))],
        {"axis": 1},
        lambda a, b: np.stack([a, b], 1),
        None,
        tuple_input=True,
    ),
    "meshgrid": Case(
        [data((3,)), data((4,)), data(())],
        {"indexing": "xy"},
        lambda *xs: np.meshgrid(*xs, indexing="xy"),
        None,
        tuple_input=True,
    ),
    "stft": Case(
        [data((2, 12)), np.hanning(4).astype("float32")],
        {"n_fft": 4, "hop_length": 2, "win_length": 4, "normalized": True},
        lambda x, w: _stft(x, w, 4, 2, True),
        rtol=1e-4,
    ),
    "segment_sum": Case(
        [data((4, 3)), np.array([2, 0, 2], "int32")],
        {"num_segments": 4},
        lambda x, i: _segment_sum(x, i, 4),
    ),
    "sparse_to_dense": Case(
        [np.array([[0, 1], [2, 3]], "int64"), np.array([5.0, 7.0], "float32"), np.array(-1.0)],
        {"output_shape": (3, 4)},
        lambda i, v, d: _sparse_to_dense(i, v, -1.0, (3, 4)),
    ),
    "adv_index": Case(
        [data((5, 4)), np.array([[0, 4], [2, 2]], "int64"), np.array([[1], [3]], "int64")],
        {},
        lambda x, i, j: x[i, j],
        tuple_input=True,
    ),
    "sliding_window": Case(
        [data((2, 6, 5))],
        {"axis": 1, "window_shape": (3, 2), "strides": (2, 3)},
        lambda x: np.stack(
            [np.stack([x[:, r : r + 3, c : c + 2] for c in (0, 3)], axis=1) for r in (0, 2)],
            axis=1,
        ),
    ),
    # x * 2**30 / 2**31 (a Q31 multiplier of 0.5), then a right shift by 3: x / 16, rounded.
    "fixed_point_multiply": Case(
        [np.array([[16, 40, -24, 100]], "int32")],
        {"multiplier": 1073741824, "shift": -3},
        lambda x: np.array([[1, 3, -1, 6]], "int32"),
    ),
    "reinterpret": Case(
        [np.array([1.0, -2.5], "float32")], {"dtype": "int32"}, lambda x: x.view("int32")
    ),
    "split": Case([data((6, 3))], {"indices_or_sections": 3}, lambda x: np.split(x, 3, axis=0)),
    "take": Case([data((4, 3)), np.array([2, 0, 3], "int32")], {"axis": 0}, lambda x, i: x[i]),
    "strided_slice": Case(
        [data((5, 6))],
        {"begin": [1, 0], "end": [4, 6], "strides": [2, 3]},
        lambda x: x[1:4:2, 0:6:3],
    ),
    "where": Case([data((2, 3), "bool"), data((2, 3)), data((2, 3))], {}, np.where),
    "cast": Case([data((2, 3))], {"dtype": "int32"}, lambda x: x.astype("int32")),
    "full": Case([np.array(2.5, F)], {"shape": (2, 3)}, lambda v: np.full((2, 3), 2.5, F)),
    "full_like": Case([data((2, 3)), np.array(4.0, F)], {}, lambda x, v: np.full_like(x, 4.0)),
    "broadcast_to": Case([data((3,))], {"shape": (2, 3)}, lambda x: np.broadcast_to(x, (2, 3))),
    "tile": Case([data((2, 3))], {"reps": (2, 1)}, lambda x: np.tile(x, (2, 1))),
    "repeat": Case([data((2, 3))], {"repeats": 2, "axis": 1}, lambda x: x.repeat(2, 1)),
    "reverse": Case([data((2, 3))], {"axis": 1}, lambda x: x[:, ::-1]),
    "cumsum": Case([data((2, 4))], {"axis": 1}, lambda x: np.cumsum(x, 1)),
    "cumprod": Case(
        [data((2, 4), kind="pos")],
        {"axis": 1, "exclusive": True},
        lambda x: np.cumprod(np.concatenate([np.ones((2, 1), F), x[:, :-1]], 1), 1),
    ),
    "gather": Case(
        [data((3, 4)), np.array([[0, 2], [1, 3], [3, 0]], "int32")],
        {"axis": 1},
        lambda x, i: np.take_along_axis(x, i, 1),
    ),
    "gather_nd": Case(
        [data((3, 4)), np.array([[0, 2, 1], [1, 3, 0]], "int32")],
        {},
        lambda x, i: x[i[0], i[1]],
    ),
    "scatter_elements": Case(
        [data((3, 4)), np.array([[1], [0], [3]], "int32"), data((3, 1))],
        {"axis": 1},
        lambda x, i, u: _scatter(x, i, u),
    ),
    "one_hot": Case(
        [np.array([0, 2, 1], "int32")],
        {"on_value": 5.0, "off_value": -1.0, "depth": 3, "axis": -1, "dtype": "float32"},
        lambda i: np.where(np.eye(3, dtype=bool)[i], 5.0, -1.0).astype("float32"),
    ),
    "arange": Case([], {"start": 1.0, "stop": 4.0, "step": 0.5}, lambda: np.arange(1, 4, 0.5)),
    "reshape_like": Case([data((2, 6)), data((3, 4))], {}, lambda x, like: x.reshape(3, 4)),
    "layout_transform": Case(
        [X4], {"src_layout": "NCHW", "dst_layout": "NHWC"}, lambda x: x.transpose(0, 2, 3, 1)
    ),
    "collapse_sum_like": Case(
        [data((2, 3, 4)), data((3, 1))], {}, lambda x, y: x.sum(0).sum(1, keepdims=True), rtol=1e-4
    ),
    "collapse_sum_to": Case(
        [data((2, 3, 4))], {"shape": (3, 1)}, lambda x: x.sum(0).sum(1, keepdims=True), rtol=1e-4
    ),
    "broadcast_to_like": Case(
        [data((3, 1)), data((2, 3, 4))], {}, lambda x, y: np.broadcast_to(x, y.shape)
    ),
    "slice_like": Case(
        [data((4, 5, 6)), data((2, 3, 4))], {"axes": (1, 2)}, lambda x, y: x[:, :3, :4]
    ),
    # Relay's documented example: (10, 5, 4) with (-1, 0) is (50, 4), codes read from the right
    # (reshape gives (40, 5)).
    "reverse_reshape": Case([data((10, 5, 4))], {"newshape": (-1, 0)}, lambda x: x.reshape(50, 4)),
    "sequence_mask": Case(
        [data((3, 2, 4)), np.array([1, 3], "int32")],
        {"mask_value": -1.0},
        lambda x, n: ref.sequence_mask(x, n, -1.0, 0),
    ),
    "matrix_set_diag": Case(
        [data((2, 4, 4)), data((2, 4))], {}, lambda x, d: ref.matrix_set_diag(x, d)
    ),
    "searchsorted": Case(
        [np.sort(data((2, 5)), axis=1), data((2, 3))],
        {"right": True},
        lambda s, v: ref.searchsorted_ref(s, v, True, "int32"),
    ),
    "shape_of": Case([data((2, 3))], {}, lambda x: np.array(x.shape, "int32")),
    "ndarray_size": Case([data((2, 3))], {"dtype": "int64"}, lambda x: np.array(6, "int64")),
    "trilu": Case([data((3, 4))], {"k": 1, "upper": False}, lambda x: np.tril(x, 1)),
    "unravel_index": Case(
        [np.array([5, 11], "int32"), np.array([3, 4], "int32")],
        {},
        lambda i, s: np.stack(np.unravel_index(i, (3, 4))).astype("int32"),
    ),
    "reverse_sequence": Case(
        [data((3, 4)), np.array([1, 2, 4], "int32")],
        {"seq_axis": 1, "batch_axis": 0},
        lambda x, n: np.stack([np.concatenate([r[:k][::-1], r[k:]]) for r, k in zip(x, n)]),
    ),
    # Relay's indices put the index tuple first: points (0, 1) and (2, 3).
    "scatter_nd": Case(
        [data((3, 4)), np.array([[0, 2], [1, 3]], "int64"), data((2,))],
        {},
        lambda x, i, u: _scatter_nd(x, i, u),
    ),
    # COO indices of a (2, 3, 6) tensor as indices of (9, -1) = (9, 4).
    "sparse_reshape": Case(
        [
            np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 2, 3]], "int64"),
            np.array([2, 3, 6], "int64"),
            np.array([9, -1], "int64"),
        ],
        {},
        lambda i, p, n: (_sparse_reshape(i, p, n), np.array([9, 4])),
    ),
    # Rows 0 and 2 of x, every other column from the last, backwards: x[0:3:2, 3::-2] = v.
    "strided_set": Case(
        [
            data((3, 4)),
            data((2, 2)),
            np.array([0, 3], "int32"),
            np.array([3, -5], "int32"),
            np.array([2, -2], "int32"),
        ],
        {},
        lambda x, v, b, e, s: _strided_set(x, v),
    ),
    "invert_permutation": Case([np.array([2, 0, 3, 1], "int32")], ref=np.argsort),
    "argwhere": Case(
        [data((2, 3), "bool")], ref=lambda c: np.argwhere(c).astype("int32"), whole_module=True
    ),
    "dft": Case(
        [data((2, 4)), data((2, 4))],
        {"inverse": False},
        lambda re, im: [np.fft.fft(re + 1j * im).real, np.fft.fft(re + 1j * im).imag],
        rtol=1e-4,
    ),
}


def _sparse_reshape(indices: np.ndarray, prev: np.ndarray, new: np.ndarray) -> np.ndarray:
    new = new.copy()
    new[new == -1] = prev.prod() // new[new != -1].prod()
    flat = np.ravel_multi_index(tuple(indices.T), prev)
    return np.stack(np.unravel_index(flat, new), axis=1)


def test_sparse_reshape_on_symbolic_shapes_keeps_the_input_dtypes():
    indices = np.array([[0, 1], [2, 3], [3, 0]], "int32")
    prev, new = np.array([4, 4], "int32"), np.array([-1, 2, 2], "int32")
    iv = relay.var("i", shape=[relay.Any(), relay.Any()], dtype="int32")
    pv, nv = (relay.var(n, shape=[relay.Any()], dtype="int32") for n in ("p", "n"))
    body = relay.op.sparse_reshape(iv, pv, nv).astuple()
    func = relay.Function([iv, pv, nv], body)
    got_indices, got_shape = relay.create_executor("vm", target="llvm").evaluate(func)(
        indices, prev, new
    )
    assert got_indices.numpy().dtype == np.int32 and got_shape.numpy().dtype == np.int32
    np.testing.assert_array_equal(got_shape.numpy(), [4, 2, 2])
    np.testing.assert_array_equal(got_indices.numpy(), _sparse_reshape(indices, prev, new))


def test_sparse_reshape_to_the_same_shape_returns_the_indices_as_they_are():
    # Relay (TOPI's kernel) copied them, out-of-range ones included: column 100 of a (500, 20).
    indices = np.array([[0, 100], [200, 100], [3, 4]], "int64")
    iv = relay.var("i", shape=(3, 2), dtype="int64")
    pv, nv = (relay.var(n, shape=(2,), dtype="int64") for n in ("p", "n"))
    func = relay.Function([iv, pv, nv], relay.op.sparse_reshape(iv, pv, nv).astuple())
    run = relay.create_executor("vm", target="llvm").evaluate(func)
    same, shape = run(indices, np.array([500, 20]), np.array([500, -1]))
    np.testing.assert_array_equal(same.numpy(), indices)
    np.testing.assert_array_equal(shape.numpy(), [500, 20])
    moved, _ = run(indices[2:].repeat(3, 0), np.array([500, 20]), np.array([250, 40]))
    np.testing.assert_array_equal(moved.numpy(), [[1, 24]] * 3)  # 3 * 20 + 4 = 64 = 1 * 40 + 24


def _stft(x: np.ndarray, window: np.ndarray, n_fft: int, hop: int, normalized: bool):
    frames = (x.shape[-1] - n_fft) // hop + 1
    segments = np.stack([x[:, m * hop : m * hop + n_fft] * window for m in range(frames)], 1)
    spectrum = np.fft.rfft(segments, axis=-1).transpose(0, 2, 1)  # (batch, rows, frames)
    out = np.stack([spectrum.real, spectrum.imag], -1)
    return out / np.sqrt(n_fft) if normalized else out


def test_stft_on_symbolic_shapes_takes_relays_defaults():
    x = data((2, 20))
    dv = relay.var("d", relay.TensorType([relay.Any(), relay.Any()], "float32"))
    body = relay.op.stft(dv, 8)  # hop n_fft // 4, window ones(n_fft)
    func = relay.Function([dv], body)
    got = relay.create_executor("vm", target="llvm").evaluate(func)(x).numpy()
    np.testing.assert_allclose(got, _stft(x, np.ones(8), 8, 2, False), rtol=1e-4, atol=1e-4)


def _segment_sum(x: np.ndarray, ids: np.ndarray, count: int) -> np.ndarray:
    out = np.zeros((count, *x.shape[1:]), x.dtype)
    for row, segment in enumerate(ids):
        out[segment] += x[row]
    return out


def test_segment_sum_without_num_segments_sizes_its_output_at_run_time():
    x, ids = data((6, 4, 5)), np.array([2, 0, 1, 0, 3, 2], "int64")
    xv = relay.var("x", shape=[relay.Any()] * 3)
    iv = relay.var("i", shape=[relay.Any()], dtype="int64")
    func = relay.Function([xv, iv], relay.op.segment_sum(xv, iv))
    got = relay.create_executor("vm", target="llvm").evaluate(func)(x, ids).numpy()
    np.testing.assert_allclose(got, _segment_sum(x, ids, 4), rtol=1e-6)


def _sparse_to_dense(indices, values, default, shape):
    out = np.full(shape, default, values.dtype)
    out[tuple(indices.T)] = values
    return out


def test_sparse_to_dense_default_value_defaults_to_zero():
    iv = relay.var("i", shape=(2,), dtype="int32")
    vv = relay.var("v", shape=(2,), dtype="float32")
    func = relay.Function([iv, vv], relay.sparse_to_dense(iv, (4,), vv))
    got = relay.create_executor("graph", target="llvm").evaluate(func)(
        np.array([3, 0], "int32"), np.array([1.5, 2.5], "float32")
    )
    np.testing.assert_array_equal(got.numpy(), [2.5, 0, 0, 1.5])


def _strided_set(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[0:3:2, 3::-2] = v
    return out


def test_strided_set_strides_default_to_one_and_short_begin_end_cover_the_rest():
    x, v = data((3, 4, 3)), data((2, 3, 3))
    xv, vv = relay.var("x", shape=x.shape), relay.var("v", shape=v.shape)
    body = relay.strided_set(xv, vv, relay.const([1, 1], "int32"), relay.const([4, 4], "int32"))
    got = relay.create_executor("graph", target="llvm").evaluate(relay.Function([xv, vv], body))(
        x, v
    )
    want = x.copy()
    want[1:, 1:] = v
    np.testing.assert_allclose(got.numpy(), want)


#: Rows the engine's ``jit`` cannot run (a host packed function): tested in their own module,
#: ``tests/relay/_impl/test_host_ops.py``.
ELSEWHERE = frozenset({"sparse_fill_empty_rows"})

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(
    transform, CASES, ELSEWHERE
)


def _scatter_nd(x: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[tuple(indices)] = updates
    return out


@pytest.mark.parametrize(("reduction", "axis"), [("update", 1), ("add", -1), ("max", 0)])
def test_scatter_elements_on_symbolic_rank4_shapes_builds_and_matches_numpy(reduction, axis):
    # TOPI's kernel does not compile in minutes on (?, ?, ?, ?): the loop-per-axis one serves.
    x, u = data((6, 3, 4, 5)), data((2, 3, 4, 5))
    rng = np.random.default_rng(1)
    i = rng.integers(-x.shape[axis], x.shape[axis], u.shape).astype("int64")
    xv, iv, uv = (
        relay.var(n, relay.TensorType([relay.Any()] * 4, d))
        for n, d in (("x", "float32"), ("i", "int64"), ("u", "float32"))
    )
    body = relay.scatter_elements(xv, iv, uv, axis, reduction)
    func = relay.Function([xv, iv, uv], body)
    got = relay.create_executor("vm", target="llvm").evaluate(func)(x, i, u).numpy()
    want = x.copy()
    combines: dict[str, Any] = {"update": lambda o, n: n, "add": np.add, "max": np.maximum}
    combine = combines[reduction]
    for index in np.ndindex(*i.shape):
        target = list(index)
        target[axis] = i[index] % x.shape[axis]
        want[tuple(target)] = combine(want[tuple(target)], u[index])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scatter_elements_refuses_an_unknown_reduction():
    xv = relay.var("x", relay.TensorType([relay.Any()], "float32"))
    iv = relay.var("i", relay.TensorType([relay.Any()], "int64"))
    body = relay.scatter_elements(xv, iv, xv, 0, "median")
    with pytest.raises(relay.UnsupportedRelayError, match="reduction 'median'"):
        tvm.IRModule.from_expr(relay.Function([xv, iv], body))


def test_slice_like_on_a_symbolic_data_shape_has_the_like_extents():
    d = [tvm.te.var(f"d{i}") for i in range(3)]
    x = relay.var("x", relay.TensorType(d, "float32"))
    like = relay.var("like", relay.TensorType((1, 2, 3), "float32"))
    typed = relay.testing.run_infer_type(relay.slice_like(x, like, None))
    assert typed.checked_type == relay.TensorType((1, 2, 3), "float32")
    narrow = relay.testing.run_infer_type(relay.slice_like(x, like, (1,)))
    assert narrow.checked_type == relay.TensorType((d[0], 2, d[2]), "float32")


def test_split_of_a_symbolic_shape_has_relays_part_shapes():
    d = [tvm.te.var(f"d{i}") for i in range(3)]
    x = relay.var("x", relay.TensorType(d, "float32"))
    halves = relay.testing.run_infer_type(relay.split(x, 2, axis=1).astuple())
    assert halves.checked_type == relay.TupleType([relay.TensorType((d[0], d[1] // 2, d[2]))] * 2)
    cuts = relay.testing.run_infer_type(relay.split(x, (2, 5), axis=2).astuple())
    want = [(d[0], d[1], 2), (d[0], d[1], 3), (d[0], d[1], d[2] - 5)]
    assert cuts.checked_type == relay.TupleType([relay.TensorType(s) for s in want])
    n = tvm.te.var("n")
    xv = relay.var("x", relay.TensorType((n, 4), "float32"))
    func = relay.Function([xv], relay.split(xv, (1, 3), axis=0).astuple())
    data = np.arange(20, dtype="float32").reshape(5, 4)
    got = relay.create_executor("vm", target="llvm").evaluate(func)(data)
    for part, want_part in zip(got, np.split(data, (1, 3))):
        np.testing.assert_array_equal(part.numpy(), want_part)
