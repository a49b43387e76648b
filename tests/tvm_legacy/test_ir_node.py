"""tvm.ir.make_node and tvm.ir.register_op_attr as TVM <=0.19 had them (tvm_legacy/ir_node.py)."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.tvm_legacy.ir_node import make_node, register_op_attr


def test_make_node_takes_the_old_type_keys():
    attrs = make_node("DictAttrs", call_attr="attr")
    assert isinstance(attrs, tvm.ir.DictAttrs)
    assert attrs["call_attr"] == "attr"
    assert isinstance(make_node("ir.DictAttrs", a="b"), tvm.ir.DictAttrs)  # the new key too


def test_register_op_attr_on_a_relay_op_and_on_a_tvm_op():
    def check(expr):
        return True

    assert register_op_attr("nn.relu", "target.irnodeacc")(check) is check  # the decorator form
    try:
        assert relay.op.get("nn.relu").get_attr("target.irnodeacc") is check
    finally:
        relay.op.get("nn.relu").reset_attr("target.irnodeacc")
    register_op_attr("relax.nn.relu", "irnode_probe", 2)
    assert tvm.ir.Op.get("relax.nn.relu").get_attr("irnode_probe") == 2


def test_a_build_attribute_with_no_effect_on_a_relay_op_is_refused():
    with pytest.raises(NotImplementedError, match="no effect on modern TVM"):
        register_op_attr("nn.relu", "FTVMConvertOpLayout", lambda *a: None)
    assert relay.op.get("nn.relu").get_attr("FTVMConvertOpLayout") is None


def test_a_programs_own_attribute_is_stored_and_answered():
    register_op_attr("nn.relu", "fcompatprobe", len)
    try:
        assert relay.op.get("nn.relu").get_attr("fcompatprobe") is len
        assert relay.op.get("nn.softmax").get_attr("fcompatprobe") is None
    finally:
        relay.op.get("nn.relu").reset_attr("fcompatprobe")
    assert relay.op.get("nn.relu").get_attr("fcompatprobe") is None


def test_test_attrs_and_relay_relations_as_env_funcs():
    from compile_engine_compat.tvm_legacy.ir_node import env_func_get

    attrs = make_node("attrs.TestAttrs", name="attr", padding=(3, 4))
    assert attrs["name"] == "attr"
    relation = env_func_get("tvm.relay.type_relation.Broadcast")
    assert str(relation.name) == "tvm.relay.type_relation.Broadcast"
    with pytest.raises(Exception, match="Cannot find global function"):
        env_func_get("tvm.relay.type_relation.NoSuchRelation")
