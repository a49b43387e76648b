"""TVM 0.19's Threefry generator (``relay.random``), bit for bit, and its Relax emitters.

A key is a ``uint64[10]`` tensor: words 0-3 the Threefry key, 4-5 the path, 6-7 the counter,
8-9 the path's free bit (a 128-bit number with one bit set; zero: the path is full). TVM 0.19
computed ``threefry_generate`` and ``threefry_split`` with TIR kernels of its own
(``topi.random``, gone in TVM 0.27); here they are NumPy functions on the host, registered with
TVM on the first use (never at import) and emitted as ``relax.call_pure_packed``, as
:mod:`.host_ops` does. NumPy's ``uint64`` arithmetic wraps as the TIR kernels' did, so the
results are TVM 0.19's to the bit, including two of its quirks:

* the kernels test ``gen[8] == 0 and gen[9] == 0`` with Python's ``and`` on TIR expressions,
  which TVM 0.19 reduced to ``gen[8] == 0`` alone: a key whose free bit sits in word 9 is
  re-keyed (split and generate alike), as it was there;
* Threefry-4x64-20 with five key injections (before rounds 0, 4, ..., 16), none after the last
  round, and the counter ``c + i`` added to all four words of state ``i``.

``uniform``, ``normal`` and ``multinomial`` turn the bits into values with TOPI computes, as TVM
0.19 did, compiled by TVM like any other kernel. A model that calls these ops runs in this
process only (the generator lives here), as a Relay model using a Python-registered op did.
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Any

import numpy as np
import tvm
from tvm import relax, topi

from compile_engine_compat.relay.expr import Attrs
from compile_engine_compat.relay.ty import RelayTypeError

__all__ = [
    "GENERATE",
    "SPLIT",
    "blocks",
    "counters",
    "generate_bits",
    "key_words",
    "multinomial",
    "normal",
    "split_key",
    "threefry_generate",
    "threefry_split",
    "uniform",
]

#: The global names of the two packed functions.
GENERATE = "compile_engine_compat.threefry_generate"
SPLIT = "compile_engine_compat.threefry_split"

#: Threefish-256's rotation constants (per round mod 8, per word pair) and word permutation.
_ROTATIONS = ((14, 16), (52, 57), (23, 40), (5, 37), (25, 33), (46, 12), (58, 22), (32, 32))
_PERMUTATION = (0, 3, 2, 1)
#: The key schedule's parity constant.
_PARITY = 0x1BD11BDAA9FC1A22
_U64 = np.uint64
_FULL = (1 << 64) - 1


def key_words(seed: int) -> np.ndarray:
    """The ``uint64[10]`` key of ``threefry_key(seed)``: the seed's 32 bytes in the machine's
    byte order as words 0-3, an empty path and counter, the free bit at the path's top."""
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool):
        raise TypeError(f"relay.random.threefry_key takes an int seed, got {seed!r}")
    if not 0 <= int(seed) < 1 << 256:
        raise ValueError(f"relay.random.threefry_key: the seed must fit in 256 bits, got {seed}")
    words = np.frombuffer(int(seed).to_bytes(32, sys.byteorder), dtype=np.uint64)
    return np.concatenate([words, np.array([0, 0, 0, 0, 1 << 63, 0], dtype=np.uint64)])


def _rotl(value: np.ndarray, bits: int) -> np.ndarray:
    return (value << _U64(bits)) | (value >> _U64(64 - bits))


def blocks(key: np.ndarray, states: np.ndarray) -> np.ndarray:
    """TVM 0.19's Threefry-4x64-20 of the four key words on each row of ``states`` (n, 4)."""
    schedule = [_U64(int(k)) for k in key[:4]]
    parity = _PARITY
    for k in key[:4]:
        parity ^= int(k)
    schedule.append(_U64(parity))
    words = [states[:, j].copy() for j in range(4)]
    with np.errstate(over="ignore"):
        for block in range(5):
            for j in range(4):
                words[j] += schedule[(block + j) % 5]
            words[3] += _U64(block)
            for step in range(4):
                rotation = _ROTATIONS[(block * 4 + step) % 8]
                for pair in range(2):
                    a, b = words[2 * pair], words[2 * pair + 1]
                    a = a + b
                    words[2 * pair], words[2 * pair + 1] = a, a ^ _rotl(b, rotation[pair])
                words = [words[p] for p in _PERMUTATION]
    return np.stack(words, axis=1)


def counters(base: np.ndarray, count: int) -> np.ndarray:
    """State ``i``'s counter: ``base + i`` in each of the four words (wrapping)."""
    with np.errstate(over="ignore"):
        return base[None, :4] + np.arange(count, dtype=np.uint64)[:, None]


def _shift_free_bit(high: int, low: int) -> tuple[int, int]:
    """The path's free bit moved one place right (TVM 0.19's ``_shift_right``)."""
    if high == 1:
        return 0, 1 << 63
    if high == 0:
        return 0, low >> 1
    return high >> 1, 0


def _checked_key(key: np.ndarray, what: str) -> np.ndarray:
    if key.shape != (10,) or key.dtype != np.uint64:
        raise ValueError(
            f"relay.random.{what}: the key must be uint64[10], got {key.dtype}{key.shape}"
        )
    return key


def generate_bits(key: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``threefry_generate`` on the host: (the next key, ``uint64`` bits of ``shape``)."""
    gen = [int(w) for w in _checked_key(key, "threefry_generate")]
    length = math.prod(shape)
    if gen[7] < _FULL - length:
        state = list(gen)
    elif gen[8] == 0:  # TVM 0.19 tested word 8 only (see the module's notes)
        rekeyed = blocks(key, np.full((1, 4), _FULL, dtype=np.uint64))[0]
        state = [*(int(w) for w in rekeyed), 0, 0, 0, 0, 1 << 63, 0]
    else:
        state = [*gen[:4], gen[4] | gen[8], gen[5] | gen[9], 0, 0, *_shift_free_bit(gen[8], gen[9])]
    state_key = np.array(state, dtype=np.uint64)
    whole, rest = divmod(length, 4)
    out = np.empty(length, dtype=np.uint64)
    if whole:
        out[: whole * 4] = blocks(state_key, counters(state_key[4:8], whole)).reshape(-1)
    counter = state[7]
    if rest:
        counter = (counter + whole * 4) & _FULL
        last = state_key[4:8].copy()
        last[3] = _U64(counter)
        out[whole * 4 :] = blocks(state_key, last[None, :])[0, :rest]
    step = 4 if rest else length
    next_key = [*state[:6], 0, (counter + step) & _FULL, state[8], state[9]]
    return np.array(next_key, dtype=np.uint64), out.reshape(shape)


def split_key(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``threefry_split`` on the host: two keys that generate different bits."""
    gen = [int(w) for w in _checked_key(key, "threefry_split")]
    if gen[8] == 0:  # the path is full: a new key from the old key, path and counter
        rekeyed = [int(w) for w in blocks(key, key[None, 4:8])[0]]
        left = [*rekeyed, 0, 0, 0, 0, 1 << 62, 0]
        right = [*rekeyed, 1 << 63, 0, 0, 0, 1 << 62, 0]
    else:
        free = _shift_free_bit(gen[8], gen[9])
        left = [*gen[:8], *free]
        right = [*gen[:4], gen[4] | gen[8], gen[5] | gen[9], gen[6], gen[7], *free]
    return np.array(left, dtype=np.uint64), np.array(right, dtype=np.uint64)


def _generate_packed(key: Any, shape: Any) -> Any:
    next_key, bits = generate_bits(key.numpy(), tuple(int(d) for d in shape))
    return [tvm.runtime.tensor(next_key), tvm.runtime.tensor(bits)]


def _split_packed(key: Any) -> Any:
    return [tvm.runtime.tensor(k) for k in split_key(key.numpy())]


@functools.cache
def _registered(name: str) -> str:
    """Register the packed function ``name`` once, on first use; return its name."""
    functions = {GENERATE: _generate_packed, SPLIT: _split_packed}
    tvm.register_global_func(name, functions[name], override=True)
    return name


_KEY = relax.TensorType([10], "uint64")


def _key(args: list[Any], what: str) -> Any:
    """The key argument, checked to be ``uint64[10]`` as Relay's type relation did."""
    key = args[0]
    ty = key.ty
    shape = None if not isinstance(ty, relax.TensorType) or ty.shape is None else ty.shape
    dims = [] if shape is None else list(shape.values)
    if (
        not isinstance(ty, relax.TensorType)
        or str(ty.dtype) != "uint64"
        or len(dims) != 1
        or not isinstance(dims[0], tvm.tirx.IntImm)
        or int(dims[0]) != 10
    ):
        raise RelayTypeError(
            f"relay.random.{what}: the key must be a Tensor[(10,), uint64], got {ty}"
        )
    return key


def _shape(attrs: Attrs) -> list[int]:
    return [int(d) for d in attrs.out_shape]


def _bits(bb: relax.BlockBuilder, key: Any, shape: list[int]) -> tuple[Any, Any]:
    """The (next key, bits) of ``threefry_generate``, each emitted as its own binding."""
    result = relax.TupleType([_KEY, relax.TensorType(shape, "uint64")])
    call = bb.emit(
        relax.call_pure_packed(_registered(GENERATE), key, relax.ShapeExpr(shape), ty_args=result)
    )
    return bb.emit(relax.TupleGetItem(call, 0)), bb.emit(relax.TupleGetItem(call, 1))


def threefry_generate(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``random.threefry_generate``: (the next key, ``uint64`` bits of ``out_shape``)."""
    key, bits = _bits(bb, _key(args, "threefry_generate"), _shape(attrs))
    return relax.Tuple([key, bits])


def threefry_split(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``random.threefry_split``: (left key, right key)."""
    key = _key(args, "threefry_split")
    return relax.call_pure_packed(_registered(SPLIT), key, ty_args=relax.TupleType([_KEY, _KEY]))


def _unit_interval(bits: Any, shape: list[int], dtype: str) -> Any:
    """TE: TVM 0.19's floats in [0, 1) from random bits (the top mantissa bits of the low word
    of each ``uint64``, under the exponent of 1.0, less 1)."""
    nbits, fraction = {"float32": (32, 23), "float64": (64, 52)}[dtype]
    unsigned = f"uint{nbits}"
    mantissa = topi.right_shift(
        topi.cast(bits, unsigned), tvm.tirx.const(nbits - fraction, unsigned)
    )
    exponent = topi.left_shift(
        topi.full(shape, unsigned, (1 << (nbits - fraction - 2)) - 1),
        tvm.tirx.const(fraction, unsigned),
    )
    ones = topi.reinterpret(topi.bitwise_or(mantissa, exponent), dtype)
    return topi.subtract(ones, tvm.tirx.const(1, dtype))


def _float_dtype(attrs: Attrs, what: str) -> str:
    dtype = str(attrs.out_dtype)
    if dtype not in ("float32", "float64"):
        raise RelayTypeError(
            f"relay.random.{what}: out_dtype must be float32 or float64, got {dtype}"
        )
    return dtype


def uniform(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``random.uniform``: (the next key, values in ``[low, high)``)."""
    shape, dtype = _shape(attrs), _float_dtype(attrs, "uniform")
    key, bits = _bits(bb, _key(args, "uniform"), shape)

    def compute(b: Any, low: Any, high: Any) -> Any:
        unit = _unit_interval(b, shape, dtype)
        return topi.add(topi.multiply(unit, topi.subtract(high, low)), low)

    values = bb.emit(bb.call_te(compute, bits, args[1], args[2], primfunc_name_hint="uniform"))
    return relax.Tuple([key, values])


def normal(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``random.normal``: (the next key, values of the normal distribution), by TVM 0.19's
    Box-Muller transform of ``2 x out_shape`` uniform values."""
    shape, dtype = _shape(attrs), _float_dtype(attrs, "normal")
    key, bits = _bits(bb, _key(args, "normal"), [2, *shape])

    def compute(b: Any, mean: Any, scale: Any) -> Any:
        unit = _unit_interval(b, [2, *shape], dtype)
        first = topi.squeeze(topi.strided_slice(unit, [0], [1], strides=[1], axes=[0]), axis=0)
        second = topi.squeeze(topi.strided_slice(unit, [1], [2], strides=[1], axes=[0]), axis=0)
        radius = topi.sqrt(
            topi.multiply(
                tvm.tirx.const(-2.0, dtype),
                topi.log(topi.subtract(tvm.tirx.const(1.0, dtype), first)),
            )
        )
        angle = topi.sin(topi.multiply(tvm.tirx.const(2.0 * math.pi, dtype), second))
        return topi.add(topi.multiply(topi.multiply(radius, angle), scale), mean)

    values = bb.emit(bb.call_te(compute, bits, args[1], args[2], primfunc_name_hint="normal"))
    return relax.Tuple([key, values])


def multinomial(bb: relax.BlockBuilder, args: list[Any], attrs: Attrs) -> Any:
    """``random.multinomial``: (the next key, ``int64`` indices drawn from each row of
    ``probs``), by TVM 0.19's rule: the first index whose cumulative probability exceeds a
    uniform value."""
    key_arg, probs = _key(args, "multinomial"), args[1]
    samples = int(attrs.num_samples)
    if not isinstance(probs.ty, relax.TensorType) or probs.ty.shape is None:
        raise RelayTypeError("relay.random.multinomial: probs must be a tensor of known shape")
    lead = [int(d) for d in probs.ty.shape.values[:-1]]
    key, bits = _bits(bb, key_arg, [*lead, samples])

    def compute(b: Any, p: Any) -> Any:
        p = topi.maximum(topi.cast(p, "float32"), tvm.tirx.const(0.0, "float32"))
        p = topi.divide(p, topi.expand_dims(topi.sum(p, axis=-1), -1))
        cumulative = topi.cumsum(p, axis=-1)
        unit = _unit_interval(b, [*lead, samples], "float32")
        gap = topi.subtract(topi.expand_dims(cumulative, axis=-1), topi.expand_dims(unit, axis=-2))
        positive = topi.where(
            topi.greater(gap, topi.full_like(gap, 0)), gap, topi.full_like(gap, 1)
        )
        return topi.argmin(positive, axis=-2)

    values = bb.emit(bb.call_te(compute, bits, probs, primfunc_name_hint="multinomial"))
    return relax.Tuple([key, values])
