"""``relay.annotation``: ``checkpoint``, ``on_device`` and the compiler-region marks
(``compiler_begin``, ``compiler_end``: ``PartitionGraph`` removes them) are the value itself when
built."""

from __future__ import annotations

import pytest

from compile_engine_compat.relay.op import annotation

from .cases import Case, data, family_tests

CASES: dict[str, Case] = {
    "on_device": Case([data((2, 3))], {"device": "cpu", "constrain_result": True}, lambda x: x),
    "annotation.checkpoint": Case([data((2, 3))], {}, lambda x: x),
    "annotation.stop_fusion": Case([data((2, 3))], {}, lambda x: x),
    "annotation.compiler_begin": Case([data((2, 3))], {"compiler": "ccompiler"}, lambda x: x),
    "annotation.compiler_end": Case([data((2, 3))], {"compiler": "ccompiler"}, lambda x: x),
}

test_every_row_has_a_case, test_relay_op_matches_reference = family_tests(annotation, CASES)


def test_on_device_and_device_copy_hold_virtual_devices():
    import tvm

    from compile_engine_compat import relay
    from compile_engine_compat.virtual_devices import VirtualDevice

    x = relay.var("x", shape=(2,))
    fixed = annotation.on_device(x, tvm.device("cuda"), constrain_result=True)
    assert fixed.op.name == "on_device" and fixed.args[0] is x
    assert fixed.attrs.virtual_device == VirtualDevice(tvm.device("cuda"))
    assert fixed.attrs.constrain_result and fixed.attrs.constrain_body
    free = annotation.on_device(x, "cuda", constrain_result=False, constrain_body=False)
    assert free.attrs.virtual_device.is_fully_unconstrained()
    copy = relay.op.device_copy(x, "cuda", tvm.device("cpu"))
    assert copy.attrs.src_virtual_device.device_type_int == 2
    assert copy.attrs.dst_virtual_device.device_type_int == 1
    with pytest.raises(ValueError, match="bogus"):
        annotation.on_device(x, "bogus")
    with pytest.raises(ValueError, match="int"):
        relay.op.device_copy(x, 3, "cpu")
