"""The interpreter's op calls: Relay's debugger hook."""

from __future__ import annotations

import numpy as np
import pytest

from compile_engine_compat import relay


def test_debug_hook_sees_the_value_under_the_interpreter():
    seen: list[np.ndarray] = []
    x = relay.var("x", shape=(), dtype="int32")
    prog = relay.debug(x + x * x, debug_func=lambda value: seen.append(value.numpy()))
    result = relay.create_executor().evaluate(prog, {x: relay.const(2, "int32")})
    assert int(result.numpy()) == 6 and [int(v) for v in seen] == [6]


def test_debug_refuses_a_debug_func_that_is_not_a_function():
    with pytest.raises(TypeError, match="debug_func"):
        relay.debug(relay.var("x", shape=()), debug_func=3)
