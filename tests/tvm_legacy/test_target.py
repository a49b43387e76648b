"""``tvm.target.generic_func`` served: dispatch on the current target's keys."""

from __future__ import annotations

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
