"""``relay.transform.FlexibleShapeDispatch`` (``transform/flexible_shape.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay

T = relay.transform


def test_the_chosen_inputs_take_any_size_on_the_axis():
    x = relay.var("x", shape=(4, 3))
    w = relay.var("w", shape=(4, 3))
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.relu(x + w)))
    out = T.FlexibleShapeDispatch(buckets=[2, 4], axis=0, input_indices=[0, 1])(mod)
    run = relay.create_executor("vm", mod=out, target="llvm").evaluate()
    for rows in (1, 4, 7):
        data = np.full((rows, 3), -1.0, "float32")
        np.testing.assert_array_equal(run(data, -data).numpy(), np.zeros((rows, 3), "float32"))


def test_bad_buckets_and_axes_are_refused_by_name():
    with pytest.raises(ValueError, match="buckets"):
        T.FlexibleShapeDispatch(buckets=[])
    x = relay.var("x", shape=(4,))
    mod = tvm.IRModule.from_expr(relay.Function([x], x))
    with pytest.raises(ValueError, match="axis=2"):
        T.FlexibleShapeDispatch(buckets=[1], axis=2)(mod)
