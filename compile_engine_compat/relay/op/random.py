"""``relay.random`` (also ``relay.op.random``): TVM 0.19's splittable Threefry generator.

``threefry_key(seed)`` makes a ``uint64[10]`` key; ``threefry_generate``, ``threefry_split``,
``uniform``, ``normal`` and ``multinomial`` are rows of the op table, each returning the next
key (or two) with its values, bit for bit as TVM 0.19 computed them
(:mod:`.._impl.threefry`: the generator runs in NumPy on the host, the float conversions are
TOPI kernels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tvm import runtime

from compile_engine_compat.relay._impl import normalize, threefry
from compile_engine_compat.relay._impl.registry import REQUIRED, OpRow, builders, missing_op

from ..expr import Constant, Expr, const

_SHAPE = {"out_shape": normalize.static_ints("out_shape")}

ROWS: tuple[OpRow, ...] = (
    OpRow(
        "random.threefry_generate",
        ("key",),
        (("out_shape", REQUIRED),),
        "(host packed function: TVM 0.19's Threefry kernel)",
        threefry.threefry_generate,
        "relay.attrs.ThreefryGenerateAttrs",
        normalize=_SHAPE,
    ),
    OpRow(
        "random.threefry_split",
        ("key",),
        (),
        "(host packed function: TVM 0.19's Threefry kernel)",
        threefry.threefry_split,
    ),
    OpRow(
        "random.uniform",
        ("key", "low", "high"),
        (("out_shape", REQUIRED), ("out_dtype", "float32")),
        "(threefry_generate, then topi)",
        threefry.uniform,
        "relay.attrs.UniformAttrs",
        normalize={**_SHAPE, "out_dtype": normalize.dtype},
    ),
    OpRow(
        "random.normal",
        ("key", "mean", "scale"),
        (("out_shape", REQUIRED), ("out_dtype", "float32")),
        "(threefry_generate, then topi)",
        threefry.normal,
        "relay.attrs.NormalAttrs",
        normalize={**_SHAPE, "out_dtype": normalize.dtype},
    ),
    OpRow(
        "random.multinomial",
        ("key", "probs"),
        (("num_samples", REQUIRED),),
        "(threefry_generate, then topi)",
        threefry.multinomial,
        "relay.attrs.MultinomialAttrs",
    ),
)

#: None: every op of this family is served.
REFUSED: dict[str, str] = {}

BUILDERS = builders(ROWS, REFUSED)


def threefry_key(seed: int) -> Constant:
    """A new Threefry key (a ``uint64[10]`` constant) from an int ``seed`` (TVM 0.19's layout:
    the seed's 32 bytes in the machine's byte order, an empty path and counter)."""
    return Constant(runtime.tensor(threefry.key_words(seed)))


def threefry_generate(key: Expr, shape: Sequence[int]) -> Expr:
    """``(next key, uint64 bits of shape)``; do not use ``key`` again."""
    return BUILDERS["threefry_generate"](key, shape)


def threefry_split(key: Expr) -> Expr:
    """``(left key, right key)``, which generate different bits; do not use ``key`` again."""
    return BUILDERS["threefry_split"](key)


def _scalar(value: Any, dtype: str) -> Expr:
    return value if isinstance(value, Expr) else const(value, dtype=dtype)


def uniform(
    key: Expr, shape: Sequence[int], dtype: str = "float32", low: Any = 0.0, high: Any = 1.0
) -> Expr:
    """``(next key, values of shape uniform in [low, high))``."""
    return BUILDERS["uniform"](key, _scalar(low, dtype), _scalar(high, dtype), shape, dtype)


def normal(
    key: Expr, shape: Sequence[int], dtype: str = "float32", mean: Any = 0.0, scale: Any = 1.0
) -> Expr:
    """``(next key, values of shape from the normal distribution of mean and scale)``."""
    return BUILDERS["normal"](key, _scalar(mean, dtype), _scalar(scale, dtype), shape, dtype)


def multinomial(key: Expr, probs: Expr, num_samples: int) -> Expr:
    """``(next key, int64 indices of shape probs.shape[:-1] + (num_samples,))``, drawn from
    each row of ``probs`` (negative probabilities count as zero)."""
    return BUILDERS["multinomial"](key, probs, num_samples)


__all__ = [
    "multinomial",
    "normal",
    "threefry_generate",
    "threefry_key",
    "threefry_split",
    "uniform",
]

if TYPE_CHECKING:

    def __getattr__(name: str) -> Callable[..., Any]: ...
else:
    __getattr__ = missing_op("random", __name__)
