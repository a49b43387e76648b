"""``relay.op.convert``: Relay's reshape codes and resize methods, converted to Relax."""

from __future__ import annotations

import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.relay import UnsupportedRelayError


def test_reshape_special_codes():
    x = relay.var("x", shape=(2, 3, 4, 5))
    cases = {
        (0, -1): (2, 60),
        (-2,): (2, 3, 4, 5),
        (0, -3, 5): (2, 12, 5),
        (-4, 1, 2, -2): (1, 2, 3, 4, 5),
        (-4, -1, 1, 3, 20): (2, 1, 3, 20),
    }
    for newshape, shape in cases.items():
        out = relay.testing.run_infer_type(relay.reshape(x, newshape))
        assert out.checked_type.concrete_shape == shape, newshape
    assert relay.reshape(x, [0, 0, 0, 0], allowzero=True).attrs.allowzero


def test_bilinear_upsampling_is_relax_linear_resize(engine):
    x = relay.var("x", shape=(1, 2, 3, 3))
    f = relay.Function([x], relay.nn.upsampling(x, 2, 2, method="bilinear", align_corners=True))
    rx = relax.Var("x", relax.TensorType([1, 2, 3, 3], "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [rx]):
        with bb.dataflow():
            gv = bb.emit_output(
                relax.op.image.resize2d(
                    rx, (6, 6), method="linear", coordinate_transformation_mode="align_corners"
                )
            )
        bb.emit_func_output(gv)
    tvm.ir.assert_structural_equal(f.__relax_function__(), bb.get()["main"])
    with pytest.raises(UnsupportedRelayError, match="bilinear"):
        relay.nn.upsampling(x, method="area")


def test_split_into_one_part_is_a_one_tuple_as_relay():
    # Relax's split of one section gives the tensor itself; Relay's a tuple of one
    x = relay.var("x", shape=(1, 5))
    sections: tuple[int | list[int], ...] = (1, [])
    for ios in sections:
        part = relay.split(x, indices_or_sections=ios, axis=1)[0]
        out = relay.testing.run_infer_type(relay.Function([x], relay.add(part, relay.const(1.0))))
        assert out.checked_type.ret_type.concrete_shape == (1, 5)


def test_min_and_max_of_booleans_are_all_and_any():
    import numpy as np

    x = relay.var("x", shape=(2, 3), dtype="bool")
    f = relay.Function([x], relay.Tuple([relay.min(x, axis=1), relay.max(x, axis=1)]))
    data = np.array([[True, True, True], [True, False, False]])
    lo, hi = relay.create_executor("vm", mod=tvm.IRModule.from_expr(f)).evaluate()(data)
    assert lo.dtype == "bool" and lo.numpy().tolist() == [True, False]
    assert hi.numpy().tolist() == [True, True]
