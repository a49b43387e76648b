"""``tvm.ir.supply`` (``NameSupply``, ``GlobalVarSupply``) and ``tvm.runtime.name_transforms``."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat.tvm_legacy.name_transforms import sanitize_name
from compile_engine_compat.tvm_legacy.supply import GlobalVarSupply, NameSupply


def test_name_supply_hands_out_each_name_once():
    names = NameSupply("prefix")
    assert names.reserve_name("test") == "prefix_test"
    assert names.fresh_name("test") == "prefix_test_1"
    assert names.fresh_name("test") == "prefix_test_2"
    assert names.fresh_name("a.b", add_prefix=False) == "a_b"
    assert names.fresh_name("a_b", add_prefix=False, add_underscore=False) == "a_b1"
    assert names.contains_name("test_1") and not names.contains_name("test_1", False)


def test_global_var_supply_keeps_one_var_per_name():
    supply = GlobalVarSupply()
    gv = tvm.ir.GlobalVar("f")
    supply.reserve_global(gv)
    assert supply.unique_global_for("f") is gv
    fresh = supply.fresh_global("f")
    assert fresh.name_hint == "f_1" and supply.unique_global_for("f_1") is fresh
    with pytest.raises(RuntimeError, match="conflicts"):
        supply.reserve_global(tvm.ir.GlobalVar("f"))


def test_a_supply_of_modules_reserves_their_functions_under_the_module_prefix():
    gv = tvm.ir.GlobalVar("main")
    mod = tvm.IRModule({gv: tvm.relax.Function([], tvm.relax.Tuple([]))})
    supply = GlobalVarSupply(mod)
    assert supply.unique_global_for("main", add_prefix=False).same_as(gv)
    assert supply.unique_global_for("main").name_hint == "tvmgen_default_main"
    with pytest.raises(TypeError, match="GlobalVarSupply takes"):
        GlobalVarSupply(3)


def test_sanitize_name():
    assert sanitize_name("+_+ ") == "____"
    assert sanitize_name("woof:1") == "woof_1"
    with pytest.raises(RuntimeError, match="Name is empty"):
        sanitize_name("")
