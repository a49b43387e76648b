"""``relay.transform.SplitArgs`` (``transform/split_args.py``)."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl import origin

T = relay.transform


def _concat(count: int, shape: tuple[object, ...] = (1, 2)) -> tuple[list[relay.Var], relay.Expr]:
    inputs = [relay.var(f"p{i}", shape=shape) for i in range(count)]
    return inputs, relay.concatenate(relay.Tuple(inputs), 1)


def _split(expr: relay.Expr, inputs: list[relay.Var], limit: int) -> relay.Function:
    out = T.SplitArgs(limit)(tvm.IRModule.from_expr(relay.Function(inputs, expr)))
    return origin.relay_of(out["main"])


def _chain(groups: list[list[relay.Var]]) -> relay.Expr:
    out: relay.Expr | None = None
    for group in groups:
        fields: list[relay.Expr] = [*group] if out is None else [out, *group]
        out = relay.concatenate(relay.annotation.stop_fusion(relay.Tuple(fields)), 1)
    assert out is not None
    return out


def test_a_concatenate_over_the_limit_becomes_a_chain_over_stop_fusion():
    inputs, expr = _concat(5)
    # limit 4: the output takes one argument, so 3 inputs; the next group starts with the
    # previous concatenate, counted as two arguments, as TVM 0.19 counted it.
    expected = _chain([inputs[:3], inputs[3:]])
    tvm.ir.assert_structural_equal(_split(expr, inputs, 4), relay.Function(inputs, expected))


def test_unknown_dimensions_take_arguments_of_their_own():
    inputs, expr = _concat(3, (relay.Any(), 2))
    # each input: its buffer, one unknown dimension and its rank (2): 4; the output 1 + 2
    expected = _chain([inputs[:1], inputs[1:2], inputs[2:]])
    tvm.ir.assert_structural_equal(_split(expr, inputs, 8), relay.Function(inputs, expected))


def test_no_limit_or_room_enough_changes_nothing():
    inputs, expr = _concat(3)
    mod = tvm.IRModule.from_expr(relay.Function(inputs, expr))
    for limit in (0, 8):
        assert T.SplitArgs(limit)(mod)["main"].same_as(mod["main"])
    with pytest.raises(TypeError, match="max_function_args"):
        T.SplitArgs("128")  # type: ignore[arg-type]


def test_targets_answer_max_function_args_as_tvm_0_19_did(installed_alias):
    assert tvm.target.Target("cuda").max_function_args == 0
    assert tvm.target.Target("opencl").max_function_args == 128
