"""The in-memory cache key holds the build context: PassContext and target (issue 18 item 1).

A kernel built under ``tirx.disable_assert`` has no argument checks; handing it out to a ``jit``
outside that context turned a wrong shape into heap corruption.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import add3

from compile_engine_compat.cache import disk as _disk_cache
from compile_engine_compat.targets import pass_context_text


def test_a_kernel_built_without_asserts_is_not_handed_out_outside_its_context(engine):
    func = add3((8,))
    with tvm.transform.PassContext(config={"tirx.disable_assert": True}):
        unchecked = engine.jit(func, "llvm")
    checked = engine.jit(func, "llvm")
    assert checked is not unchecked
    with pytest.raises(ValueError, match="shape"):
        checked(np.ones(8, "float32"), np.zeros(9, "float32"))
    assert len(engine.items()) == 2


@pytest.mark.parametrize(
    "context",
    [
        lambda: tvm.transform.PassContext(opt_level=3),
        lambda: tvm.transform.PassContext(config={"tirx.disable_vectorize": True}),
        lambda: tvm.transform.PassContext(disabled_pass=["tirx.VectorizeLoop"]),
        lambda: tvm.transform.PassContext(required_pass=["tirx.VectorizeLoop"]),
    ],
    ids=["opt_level", "config", "disabled_pass", "required_pass"],
)
def test_each_pass_context_field_is_part_of_the_key(engine, context):
    func = add3((8,))
    outside = engine.jit(func, "llvm")
    with context():
        inside = engine.jit(func, "llvm")
        assert engine.jit(func, "llvm") is inside
    with context():  # another, equal context object finds the same entry
        assert engine.jit(func, "llvm") is inside
    assert inside is not outside
    assert engine.jit(func, "llvm") is outside
    x, out = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    inside(x, out)
    np.testing.assert_array_equal(out, 3 * x)


def test_the_target_is_part_of_the_key(engine):
    func = add3((8,))
    plain = engine.jit(func, "llvm")
    assert engine.jit(func, {"kind": "llvm", "mcpu": "x86-64-v3"}) is not plain
    assert engine.jit(func, tvm.target.Target("llvm")) is plain


def test_lower_counts_hits_per_context(engine):
    func = add3((8,))
    first = engine.lower(func, "llvm")
    with tvm.transform.PassContext(opt_level=3):
        other = engine.lower(func, "llvm")
    assert not first.same_as(other)
    assert engine.lower(func, "llvm").same_as(first)
    assert sorted(v.use_count for _, v in engine.items()) == [0, 1]


def test_one_fingerprint_serves_both_caches():
    assert _disk_cache.pass_context_text is pass_context_text
    outside = pass_context_text()
    with tvm.transform.PassContext(config={"tirx.disable_assert": True}):
        inside = pass_context_text()
        assert "tirx.disable_assert" in inside
    assert inside != outside and pass_context_text() == outside


def test_one_ccachekey_finds_one_entry_per_context(engine):
    from compile_engine_compat import compile_engine

    key = compile_engine.CCacheKey(add3((8,)), tvm.target.Target("llvm"))
    outside = engine.jit(key)
    with tvm.transform.PassContext(config={"tirx.disable_assert": True}):
        inside = engine.jit(key)
    assert inside is not outside and engine.jit(key) is outside
    assert [k for k, _ in engine.items()] == [key, key]  # the key itself holds no context
