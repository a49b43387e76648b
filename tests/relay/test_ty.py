"""``relay.ty``: Relay's types; ``relay.Any()`` is a symbolic dimension the engine lowers."""

from __future__ import annotations

import numpy as np
import tvm

from compile_engine_compat import relay


def test_any_is_a_symbolic_dimension(engine):
    n = relay.Any()
    x = relay.var("x", shape=(n, 3))
    f = relay.Function([x], relay.nn.relu(x))
    assert "?" in repr(relay.testing.run_infer_type(f).body.checked_type)
    kernel = engine.jit(f, "llvm")
    arr = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    got = tvm.runtime.empty((2, 3), "float32", tvm.cpu())
    kernel(tvm.runtime.tensor(arr), got)
    np.testing.assert_array_equal(got.numpy(), np.maximum(arr, 0))
    try:
        assert engine.lower_shape_func(f, "llvm") is not None
    finally:
        # clear() keeps shape functions (as legacy did); other tests count them.
        with engine._lock:
            engine._shape_cache.clear()
