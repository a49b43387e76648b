"""``tvm.target.generic_func`` served: dispatch on the current target's keys."""

from __future__ import annotations

import pytest
import tvm


def test_generic_func_dispatches_on_target_keys():
    from compile_engine_compat.tvm_legacy.target import generic_func, override_native_generic_func

    @generic_func
    def pick():
        return "default"

    @pick.register(["gpu"])
    def _gpu():
        return "gpu"

    assert pick() == "default"
    with tvm.target.Target("cuda"):
        assert pick() == "gpu"
    with tvm.target.Target("llvm"):
        assert pick() == "default"
    named = override_native_generic_func("some_strategy")(lambda: 1)
    assert named.name == "some_strategy" and named() == 1


def test_native_generic_funcs_are_one_per_name():
    from compile_engine_compat.tvm_legacy.target import (
        get_native_generic_func,
        override_native_generic_func,
    )

    empty = get_native_generic_func("test_target.no_default")
    assert get_native_generic_func("test_target.no_default") is empty
    with pytest.raises(RuntimeError, match="has no default"):
        empty()
    empty.register("cpu")(lambda: "cpu")
    with tvm.target.Target("llvm"):
        assert empty() == "cpu"
    assert override_native_generic_func("test_target.no_default")(lambda: "default") is empty
    assert empty() == "default"
