"""``relay.random``: TVM 0.19's Threefry generator, its keys, and the values built on it."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import threefry
from compile_engine_compat.relay.op import random
from compile_engine_compat.relay.ty import RelayTypeError

ROT = [[14, 16], [52, 57], [23, 40], [5, 37], [25, 33], [46, 12], [58, 22], [32, 32]]
MASK = (1 << 64) - 1


def reference_block(key: list[int], counter: list[int]) -> list[int]:
    """One Threefry block written as TVM 0.19's TIR kernel ran it, on Python ints: the key
    added before every fourth round, two buffers swapped after each word permutation."""
    full = [*key, 0x1BD11BDAA9FC1A22 ^ key[0] ^ key[1] ^ key[2] ^ key[3]]
    out, tmp = list(counter), [0, 0, 0, 0]
    for i in range(5):
        for j in range(4):
            out[j] = (out[j] + full[(i + j) % 5] + (i if j == 3 else 0)) & MASK
        for k in range(4):
            for j in range(2):
                a, b, r = out[2 * j], out[2 * j + 1], ROT[(i * 4 + k) % 8][j]
                x = (a + b) & MASK
                out[2 * j], out[2 * j + 1] = x, x ^ (((b << r) | (b >> (64 - r))) & MASK)
            for j, p in enumerate([0, 3, 2, 1]):
                tmp[j] = out[p]
            out, tmp = tmp, out
    return out


def test_the_vectorized_kernel_is_the_reference_kernel() -> None:
    key = threefry.key_words(123456789)
    key[4:8] = [5, 2**64 - 3, 7, 11]
    blocks = threefry.blocks(key, threefry.counters(key[4:8], 3))
    for i in range(3):
        counter = [(int(c) + i) & MASK for c in key[4:8]]
        assert [int(w) for w in blocks[i]] == reference_block([int(k) for k in key[:4]], counter)


def test_keys_split_and_generate_as_tvm_019() -> None:
    key = threefry.key_words(0)
    assert key.tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1 << 63, 0]
    left, right = threefry.split_key(key)
    assert left.tolist() == [0, 0, 0, 0, 0, 0, 0, 0, 1 << 62, 0]
    assert right.tolist() == [0, 0, 0, 0, 1 << 63, 0, 0, 0, 1 << 62, 0]
    next_key, bits = threefry.generate_bits(key, (2, 3))
    assert bits.shape == (2, 3) and next_key[7] == 8  # one block of 4, then one more
    first = reference_block([0, 0, 0, 0], [0, 0, 0, 0])
    remaining = reference_block([0, 0, 0, 0], [0, 0, 0, 4])
    assert bits.reshape(-1).tolist() == first + remaining[:2]
    # A counter with no room left moves to a new path, and counts on from there.
    full = np.array([0, 0, 0, 0, 0, 0, 0, 2**64 - 2, 1 << 63, 0], dtype="uint64")
    moved, _ = threefry.generate_bits(full, (8,))
    assert moved[4] == 1 << 63 and moved[7] == 8 and moved[8] == 1 << 62


def test_the_ops_run_and_type_as_relay_did() -> None:
    key = random.threefry_key(7)
    key2, bits = relay.TupleWrapper(random.threefry_generate(key, (5,)), 2)
    left, right = relay.TupleWrapper(random.threefry_split(key2), 2)
    _, values = relay.TupleWrapper(random.uniform(left, (4,), low=2.0, high=3.0), 2)
    func = relay.Function([], relay.Tuple([key2, bits, right, values]))
    assert str(relay.testing.run_infer_type(func).ret_type.fields[1]) == "Tensor[(5,), uint64]"
    out = relay.create_executor("vm", tvm.IRModule.from_expr(func), target="llvm").evaluate()()
    expect_key, expect_bits = threefry.generate_bits(threefry.key_words(7), (5,))
    np.testing.assert_array_equal(out[0].numpy(), expect_key)
    np.testing.assert_array_equal(out[1].numpy(), expect_bits)
    np.testing.assert_array_equal(out[2].numpy(), threefry.split_key(expect_key)[1])
    low_bits = threefry.generate_bits(threefry.split_key(expect_key)[0], (4,))[1]
    mantissa = (low_bits & np.uint64(MASK >> 32)).astype("uint32") >> np.uint32(9)
    unit = (mantissa | np.uint32(127 << 23)).view("float32") - np.float32(1)
    np.testing.assert_array_equal(out[3].numpy(), unit * np.float32(1) + np.float32(2))


def test_a_key_of_another_shape_is_a_type_error() -> None:
    bad = relay.const(np.arange(9, dtype="uint64"))
    with pytest.raises(RelayTypeError, match=r"Tensor\[\(10,\), uint64\]"):
        relay.testing.run_infer_type(relay.Function([], random.threefry_split(bad)))
    with pytest.raises(TypeError, match="int seed"):
        random.threefry_key(1.5)  # type: ignore[arg-type]
