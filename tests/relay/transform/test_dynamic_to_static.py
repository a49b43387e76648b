"""relay.transform.DynamicToStatic on the Relay graph: dyn.* calls whose shape-like inputs fold
to constants become their static ops (TVM 0.19's pass); run-time values stay dynamic."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay import transform
from compile_engine_compat.relay._impl import origin


def _static(func):
    out = transform.DynamicToStatic()(tvm.IRModule.from_expr(func))
    return origin.relay_of(out["main"])


def test_shape_of_static_tensors_makes_each_call_static():
    x = relay.var("x", shape=(2, 6))
    like = relay.var("like", shape=(3, 4))
    small = relay.var("small", shape=(2, 5))
    empty = relay.var("empty", shape=(1, 0))  # its shape is the slice's begin
    k = relay.take(relay.shape_of(small), relay.const(0))
    begin = relay.shape_of(empty, "int64")
    reshaped = relay.reshape(x, relay.shape_of(like))
    top = relay.topk(reshaped, k, axis=1, ret_type="values")
    sliced = relay.strided_slice(top, begin, relay.shape_of(top))
    assert sliced.op.name == "dyn.strided_slice"
    assert top.op.name == "dyn.topk"
    out = _static(relay.Function([x, like, small, empty], sliced))
    assert out.body.op.name == "strided_slice"
    assert out.body.args[0].op.name == "topk" and int(out.body.args[0].attrs.k) == 2
    assert out.body.args[0].args[0].op.name == "reshape"
    assert "newshape=" in out.body.args[0].args[0].astext()
    typed = relay.testing.run_infer_type(out)
    assert typed.body.checked_type == relay.TensorType((2, 2), "float32")


def test_a_value_known_only_at_run_time_stays_dynamic():
    x = relay.var("x", shape=(4,))
    reps = relay.var("reps", shape=(1,), dtype="int64")
    func = relay.Function([x, reps], relay.tile(x, reps))
    assert _static(func).body.op.name == "dyn.tile"
