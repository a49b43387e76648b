"""``relay.backend.name_transforms``: TVM 0.19's C names, and its errors on bad names."""

from __future__ import annotations

import pytest

from compile_engine_compat.relay.backend.name_transforms import (
    prefix_generated_name,
    prefix_name,
    to_c_constant_style,
    to_c_function_style,
    to_c_variable_style,
)


def test_prefixed_names_in_each_c_style():
    assert prefix_name(["Device", "target", "Invoke"]) == "TVM_Device_target_Invoke"
    invoke = prefix_name(["Device", "target", "Invoke"])
    assert to_c_function_style(invoke) == "TVMDeviceTargetInvoke"
    assert to_c_function_style(prefix_generated_name("model_run")) == "TVMGenModelRun"
    devices = prefix_generated_name(["model", "Devices"])
    assert to_c_variable_style(devices) == "tvmgen_model_devices"
    assert to_c_constant_style("TVM_woof_Woof") == "TVM_WOOF_WOOF"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: to_c_function_style("Cake_Bakery"), "Function not TVM prefixed"),
        (lambda: to_c_variable_style(""), "Variable name is empty"),
        (lambda: to_c_constant_style("Cake"), "Constant not TVM prefixed"),
        (lambda: prefix_name(""), "Name is empty"),
        (lambda: prefix_generated_name([]), "Name segments empty"),
        (lambda: prefix_name(["a", ""]), "Name segment is empty"),
    ],
)
def test_bad_names_are_refused_with_tvm_019s_message(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()


def test_a_name_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="int"):
        to_c_function_style(3)  # type: ignore[arg-type]
