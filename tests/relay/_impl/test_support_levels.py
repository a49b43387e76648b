"""``relay.op.get(name)`` answers ``tvm.ir.Op``'s fields: ``support_level``, ``num_inputs``."""

from __future__ import annotations

from compile_engine_compat import relay


def test_ops_answer_their_tvm_019_support_level_and_inputs():
    assert relay.op.get("log").support_level == 1
    assert relay.op.get("nn.conv2d").support_level == 2
    assert relay.op.get("negative").support_level == 3
    assert relay.op.get("sum").support_level == 4
    assert relay.op.get("add").num_inputs == 2
    assert relay.op.get("add").attrs_type_key == relay.op.get("add").row.attrs_type
