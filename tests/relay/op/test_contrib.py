"""relay.op.contrib: pattern tables, op checkers, and TVM <=0.19's vendor modules refused."""

from __future__ import annotations

import warnings

import pytest

from compile_engine_compat.relay.dataflow_pattern import is_op, wildcard
from compile_engine_compat.relay.op.contrib import get_pattern_table, register_pattern_table
from compile_engine_compat.surfaces.import_alias import (
    RelayRemovedCallError,
    install,
    installed,
    uninstall,
)


def test_a_registered_table_is_read_back():
    @register_pattern_table("tablecheck")
    def table():
        return [("tablecheck.relu", is_op("nn.relu")(wildcard()))]

    assert get_pattern_table("tablecheck")[0][0] == "tablecheck.relu"
    assert get_pattern_table("never-registered") is None
    with pytest.raises(TypeError, match="compiler name"):
        register_pattern_table("")


def test_vendor_modules_import_and_refuse_at_the_call_naming_the_route():
    was = installed()
    install()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import tvm.relay.op.contrib.tensorrt as tensorrt
            from tvm import relay
            from tvm.relay.op.contrib import dnnl  # the import works

            with pytest.raises(RelayRemovedCallError) as info:
                dnnl.partition_for_dnnl(None)
            assert "tvm.relay.op.contrib.dnnl.partition_for_dnnl" in str(info.value)
            assert "relay.ext.dnnl" in str(info.value) and "FuseOpsByPattern" in str(info.value)
            with pytest.raises(RelayRemovedCallError, match="TensorRT"):
                tensorrt.partition_for_tensorrt(None)
            # The registry is served (Relay's refusal named a "Relay op 'contrib'").
            assert relay.op.contrib.register_pattern_table is register_pattern_table
    finally:
        if not was:
            uninstall()


def test_an_op_checker_is_set_on_the_relay_op():
    was = installed()
    install()
    try:
        import tvm

        from compile_engine_compat import relay

        @tvm.ir.register_op_attr("nn.relu", "target.checkeracc")
        def check(expr):
            return True

        try:
            assert relay.op.get("nn.relu").get_attr("target.checkeracc") is check
        finally:
            relay.op.get("nn.relu").reset_attr("target.checkeracc")
        # A TVM 0.27 op still goes to TVM's own registry.
        tvm.ir.register_op_attr("relax.nn.relu", "checkeracc_probe", 1)
        assert tvm.ir.Op.get("relax.nn.relu").get_attr("checkeracc_probe") == 1
    finally:
        if not was:
            uninstall()
