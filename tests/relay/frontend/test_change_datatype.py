"""``relay.frontend.ChangeDatatype``: a Relay program retyped from one dtype to another."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay


def test_parameters_and_constants_change_dtype_and_the_program_runs() -> None:
    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.nn.relu(x) + relay.const(1.5)))
    new = relay.frontend.ChangeDatatype("float32", "float64")(mod)
    run = relay.create_executor("vm", mod=new).evaluate()
    out = run(np.array([-1.0, 2.0], "float64")).numpy()
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.5, 3.5])


def test_dtype_names_are_checked_at_the_call() -> None:
    with pytest.raises(TypeError, match="two dtype names"):
        relay.frontend.ChangeDatatype("float32", 16)  # type: ignore[arg-type]
