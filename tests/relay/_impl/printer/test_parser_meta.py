"""``relay.parse``'s meta table and ``init_module``, literals' ranges and function attributes
(relay/_impl/printer/parser.py), as TVM 0.19's parser read them."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.printer import VERSION_HEADER
from compile_engine_compat.relay._impl.printer.parser import (
    RelayParseError,
    fromtext,
    parse,
    parse_expr,
)

_F = VERSION_HEADER + "\ndef @f(%y: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {\n"
_F += "  negative(%y)\n}\n"
_MAIN = VERSION_HEADER + "\ndef @main(%x: Tensor[(2, 3), float32]) {\n"
_MAIN += "  add(@f(%x), meta[relay.Constant][0])\n}\n"


@pytest.fixture(scope="module")
def joined() -> tuple[tvm.IRModule, np.ndarray]:
    data = np.arange(6, dtype="float32").reshape(2, 3)
    table = {"relay.Constant": [relay.const(data)]}
    return parse(_MAIN, "from_string", fromtext(_F), table), data


def test_init_module_and_meta_table_join_the_text(joined) -> None:
    mod, data = joined
    assert sorted(str(g.name_hint) for g in mod.get_global_vars()) == ["f", "main"]
    x = np.ones((2, 3), "float32")
    out = relay.create_executor("debug", mod=mod).evaluate()(x)
    np.testing.assert_allclose(out.numpy(), -x + data)


def test_printed_constants_read_back_from_the_metadata_section(joined) -> None:
    mod, _ = joined
    text = relay.astext(mod)
    assert "meta[relay.Constant][0]" in text and "#[metadata]" in text
    tvm.ir.assert_structural_equal(fromtext(text), mod, map_free_vars=True)


def test_a_meta_reference_missing_from_the_table_is_named() -> None:
    with pytest.raises(RelayParseError, match=r"meta\[relay.Constant\]\[1\]"):
        parse(_MAIN.replace("[0]", "[1]"), "from_string", fromtext(_F), {"relay.Constant": []})
    with pytest.raises(TypeError, match="init_meta_table"):
        parse(_MAIN, "from_string", None, {"relay.Constant": 3})


def test_literals_take_relays_dtypes_and_refuse_what_they_cannot_hold() -> None:
    def data(text: str) -> np.ndarray:
        node = parse_expr(text)
        assert isinstance(node, relay.Constant)
        return node.data.numpy()

    assert data("2147483647").dtype == "int32"
    assert data("2147483648").dtype == "int64"
    assert data("-42i") == -42 and data("-42i").dtype == "int32"
    for text in ("2147483648i32", "32768i16", "65505f16", "3.40283e+38f32"):
        with pytest.raises(RelayParseError, match="not representable"):
            parse_expr(text)


def test_function_attributes_and_numbered_names_round_trip() -> None:
    x = relay.var("1", shape=(2, 3))
    func = relay.Function([x], relay.nn.relu(x)).with_attr("Primitive", 1)
    text = func.astext()
    assert "fn (%v1: Tensor[(2, 3), float32], Primitive=1)" in text
    tvm.ir.assert_structural_equal(parse_expr(text), func, map_free_vars=True)


def test_a_function_calls_attributes_round_trip() -> None:
    p = relay.var("p", shape=(2,))
    x = relay.var("x", shape=(2,))
    attrs = tvm.ir.make_node("ir.DictAttrs", name="call_attrs")
    func = relay.Function([p], relay.Call(relay.Function([x], relay.nn.relu(x)), [p], attrs=attrs))
    text = func.astext()
    assert 'name="call_attrs", attrs_type_key="DictAttrs")' in text
    tvm.ir.assert_structural_equal(parse_expr(text), func, map_free_vars=True)
    with pytest.raises(RelayParseError, match="attrs_type_key"):
        parse_expr(text.replace('attrs_type_key="DictAttrs"', 'attrs_type_key="attrs.Conv2D"'))


def test_device_annotations_read_back_under_their_attribute_names(installed_alias) -> None:
    x = relay.var("x", shape=(2,))
    on = relay.annotation.on_device(x, tvm.cpu(), constrain_result=True)
    copied = relay.device_copy(on, tvm.cpu(), tvm.cpu())
    text = copied.astext()
    assert "virtual_device=" in text and "src_virtual_device=" in text
    table = {"VirtualDevice": [on.attrs.virtual_device]}
    body = (
        "device_copy(on_device(%x, virtual_device=meta[VirtualDevice][0], constrain_result=True),"
        " src_virtual_device=meta[VirtualDevice][0], dst_virtual_device=meta[VirtualDevice][0])"
    )
    text = VERSION_HEADER + f"\ndef @main(%x: Tensor[(2,), float32]) {{\n  {body}\n}}\n"
    read = parse(text, "from_string", None, table)["main"].body
    assert read.attrs.dst_virtual_device.device_type_int == 1
    assert read.args[0].attrs.constrain_result
