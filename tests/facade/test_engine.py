"""CompileEngine legacy semantics: legacy_api.md 1.4, 1.9, 2 and upstream test_compile_engine."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
import tvm_ffi
from _builders import add3, build, dense_bias_relu
from tvm import relax

from compile_engine_compat import compile_engine
from compile_engine_compat.facade.engine import LoweringError


def test_compile_engine_port(engine):
    """Upstream test_compile_engine, with Relax sources."""
    f1 = engine.lower(add3((10,)), "llvm")
    f2 = engine.lower(add3((10,)), "llvm")
    f3 = engine.lower(add3(()), "llvm")
    assert f1.same_as(f2)
    assert not f1.same_as(f3)
    kernel = engine.jit(add3((10,)), "llvm")
    x = tvm.runtime.tensor(np.ones(10, "float32"))
    y = tvm.runtime.empty((10,), "float32", tvm.cpu())
    assert kernel(x, y) is None
    np.testing.assert_allclose(y.numpy(), 3 * x.numpy())
    assert isinstance(engine.dump(), str)


def test_get_is_a_singleton_and_cannot_be_constructed():
    assert compile_engine.get() is compile_engine.get()
    assert compile_engine.get().same_as(compile_engine.get())
    with pytest.raises(RuntimeError, match="Cannot construct a CompileEngine"):
        compile_engine.CompileEngine()


def test_use_count_starts_at_zero_and_counts_hits(engine):
    engine.lower(add3((4,)), "llvm")
    [(_, value)] = engine.items()
    assert value.use_count == 0
    engine.lower(add3((4,)), "llvm")
    engine.jit(add3((4,)), "llvm")
    assert value.use_count == 2


def test_cache_ignores_global_symbol_and_param_names(engine):
    a = build("alpha", [("x", (3,), "float32")], lambda bb, x: relax.op.exp(x))
    b = build("beta", [("renamed", (3,), "float32")], lambda bb, x: relax.op.exp(x))
    assert engine.lower(a, "llvm").same_as(engine.lower(b, "llvm"))
    assert len(engine.items()) == 1


@pytest.mark.parametrize(
    "other",
    [
        lambda: add3((5,)),
        lambda: add3((4,), "float16"),
    ],
    ids=["shape", "dtype"],
)
def test_shape_and_dtype_are_part_of_the_key(engine, other):
    first = engine.lower(add3((4,)), "llvm")
    assert not first.same_as(engine.lower(other(), "llvm"))
    assert len(engine.items()) == 2


def test_target_is_part_of_the_key(engine):
    plain = engine.lower(add3((4,)), "llvm")
    avx2 = engine.lower(add3((4,)), {"kind": "llvm", "mcpu": "x86-64-v3"})
    assert not plain.same_as(avx2)
    assert plain.same_as(engine.lower(add3((4,)), tvm.target.Target("llvm")))


def test_str_target_is_converted_and_key_ignores_target(engine):
    cached = engine.lower(add3((4,)), "llvm")
    assert isinstance(cached.target, tvm.target.Target)
    key, _ = engine.items()[0]
    assert isinstance(key, compile_engine.CCacheKey)
    assert isinstance(key.target, tvm.target.Target)
    # A CCacheKey carries its own target; the argument is ignored (legacy 1.4).
    assert engine.lower(key, "cuda").same_as(cached)


def test_items_returns_key_value_pairs_and_clear_empties(engine):
    engine.lower(add3((4,)), "llvm")
    engine.lower(add3((6,)), "llvm")
    items = engine.items()
    assert isinstance(items, list) and len(items) == 2
    for key, value in items:
        assert isinstance(key, compile_engine.CCacheKey)
        assert isinstance(value, compile_engine.CCacheValue)
        assert value.cached_func.target.kind.name == "llvm"
    engine.clear()
    assert engine.items() == []


def test_clear_then_lower_recompiles_with_a_fresh_name(engine):
    first = engine.lower(add3((7,)), "llvm")
    engine.clear()
    second = engine.lower(add3((7,)), "llvm")
    assert not first.same_as(second)
    # The name map survives clear(), as upstream's did: the new entry gets a new unique name.
    assert second.prim_fn_var.name_hint != first.prim_fn_var.name_hint
    assert second.prim_fn_var.name_hint.startswith("tvmgen_default_fused_add_add_")


def test_names_follow_the_legacy_mangling(engine):
    lowered = engine.lower(dense_bias_relu(), "llvm")
    assert lowered.prim_fn_var.name_hint.startswith("tvmgen_default_fused_matmul_add_nn_relu")
    custom = engine.lower(add3((9,)), "llvm", mod_name="mymod")
    assert custom.prim_fn_var.name_hint.startswith("tvmgen_mymod_fused_add_add")
    kernel = engine.jit(add3((11,)), "llvm")
    assert kernel.name.startswith("fused_add_add")
    # jit of a key already lowered reuses the lowered kernel and its name.
    assert engine.jit(add3((9,)), "llvm").name == custom.prim_fn_var.name_hint
    assert custom.funcs.get_global_var(custom.prim_fn_var.name_hint).same_as(custom.prim_fn_var)


def test_long_names_are_truncated_with_a_hash(engine):
    def chain(bb, x):
        for _ in range(30):
            x = bb.emit(relax.op.negative(x))
        return x

    name = engine.lower(
        build("main", [("x", (2,), "float32")], chain), "llvm"
    ).prim_fn_var.name_hint
    stem = name.removeprefix("tvmgen_default_")
    assert len(stem) > 80 and stem[80] == "_" and stem.endswith("_")


def test_get_current_ccache_key(engine):
    engine.lower(add3((4,)), "llvm")
    key = engine.get_current_ccache_key()
    assert isinstance(key, compile_engine.CCacheKey)
    assert tvm_ffi.structural_equal(key.source_func, add3((4,)))
    engine.jit(add3((6,)), "llvm")
    assert engine.get_current_ccache_key() is not key


def test_cached_func_fields(engine):
    cached = engine.lower(dense_bias_relu(), "llvm")
    assert [t.op.name for t in cached.inputs] == ["x", "w", "b"]
    assert all(isinstance(t.op, tvm.te.PlaceholderOp) for t in cached.inputs)
    assert len(cached.outputs) == 1 and isinstance(cached.outputs[0].op, tvm.te.ComputeOp)
    # The composed DAG, before any scheduling: relu <- add <- matmul <- (x, w), b.
    add = cached.outputs[0].op.input_tensors[0]
    matmul = add.op.input_tensors[0]
    assert (add.op.name, matmul.op.name) == ("T_add", "matmul")
    assert [t.op.name for t in matmul.op.input_tensors] == ["x", "w"]
    assert isinstance(cached.schedule, tvm.s_tir.Schedule)
    assert isinstance(cached.funcs, tvm.IRModule) and len(cached.funcs.functions) == 1
    assert isinstance(cached.prim_func, tvm.tirx.PrimFunc)
    assert cached.shape_func_param_states == []


def test_one_primfunc_with_injective_stages_inlined(engine):
    cached = engine.lower(dense_bias_relu(), "llvm")
    # matmul, add, relu: the bias add is inlined into the relu epilogue; the matmul stays.
    assert cached.prim_func.script().count("T.sblock(") == 4  # root + 3 stages
    assert cached.funcs.script().count("T.sblock(") == 3


def test_ccachekey_constructor_and_lower(engine):
    key = compile_engine.CCacheKey(add3((3,)), tvm.target.Target("llvm"))
    assert key.source_func is not None and key.target.kind.name == "llvm"
    assert engine.lower(key).same_as(engine.lower(add3((3,)), "llvm"))


def test_irmodule_source_takes_main_or_the_only_function(engine):
    mod = tvm.IRModule({"main": add3((5,))})
    assert engine.lower(mod, "llvm").same_as(engine.lower(add3((5,)), "llvm"))
    with pytest.raises(LoweringError, match="Error during compile func"):
        engine.lower(tvm.IRModule({"a": add3((5,)), "b": add3((6,))}), "llvm")


def test_target_none_uses_the_current_target(engine):
    with tvm.target.Target("llvm"):
        cached = engine.lower(add3((3,)))
    assert cached.target.kind.name == "llvm"
    with pytest.raises(LoweringError, match="Need target when source_func is a Function"):
        engine.lower(add3((3,)))


@pytest.mark.parametrize(
    ("source", "target", "cause"),
    [
        (42, "llvm", TypeError),
        ("not a function", "llvm", TypeError),
        (None, "llvm", TypeError),
        ("FUNC", 5, TypeError),
        ("FUNC", "", ValueError),
    ],
)
def test_every_lower_failure_is_a_runtime_error_with_the_source(engine, source, target, cause):
    func = add3((3,)) if source == "FUNC" else source
    with pytest.raises(RuntimeError, match="Error during compile func") as info:
        engine.lower(func, target)
    assert isinstance(info.value.__cause__, cause)
    assert "-" * 26 + "\n" in str(info.value)
    if source == "FUNC":
        assert "R.add(x, x)" in str(info.value)


@pytest.mark.parametrize(
    "mod_name", ["bad name!", "a\n", "\na", "a\x00", "\x00", "caf\u00e9", "\u540d", "a\r"]
)
def test_invalid_mod_name_is_a_lowering_error(engine, mod_name):
    with pytest.raises(RuntimeError, match="contains invalid characters") as info:
        engine.lower(add3((3,)), "llvm", mod_name=mod_name)
    assert repr(mod_name) in str(info.value.__cause__)  # printable, even a newline or a NUL
    assert not engine.items()


def test_jit_bad_source_is_a_type_error(engine):
    with pytest.raises(TypeError, match="Expect source_func to be CCacheKey"):
        engine.jit(3.5, "llvm")


def test_dump_has_the_legacy_layout(engine):
    engine.lower(add3((4,)), "llvm")
    text = engine.dump()
    lines = text.split("\n")
    assert lines[0] == "=" * 36
    assert lines[1] == "CompilerEngine dump, 1 items cached"
    assert lines[2] == "-" * 36
    assert lines[3].startswith("target={")
    assert lines[4] == "use_count=0"
    assert lines[5].startswith("func_name=tvmgen_default_fused_add_add")
    assert lines[6] == "----relay function----"
    assert "----tir function----- " in lines
    assert "function: " in lines
    assert any(line.startswith("inputs=[Tensor(") for line in lines)
    assert text.endswith("=" * 35 + "\n")
    assert "0 shape_func_items cached\n" in text
    assert text.count("=" * 35 + "\n") == 3  # the 36-'=' opening rule contains 35 too


def test_jit_is_memoized(engine):
    assert engine.jit(add3((4,)), "llvm") is engine.jit(add3((4,)), "llvm")


def test_expanding_intrinsics_are_not_nested_by_inlining(engine):
    """tanh lowers to a formula using its argument several times: nesting 8 of them in one
    expression took LLVM 150 s. Each such call keeps its own stage; cheap ops still inline."""

    def chain(bb, x):
        for _ in range(8):
            x = bb.emit(relax.op.add(bb.emit(relax.op.tanh(x)), x))
        return x

    func = build("main", [("x", (4, 4), "float32")], chain)
    cached = engine.lower(func, "llvm")
    script = cached.funcs.script()
    blocks = script.split("T.sblock(")[1:]
    assert all(block.count("T.tanh(") <= 1 for block in blocks)
    assert script.count("T.tanh(") == 8
    assert len(blocks) < cached.prim_func.script().count("T.sblock(")  # the adds were inlined
    x = np.random.default_rng(0).standard_normal((4, 4)).astype("float32")
    out = np.empty((4, 4), "float32")
    engine.jit(func, "llvm")(x, out)
    expected = x
    for _ in range(8):
        expected = np.tanh(expected) + expected
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
