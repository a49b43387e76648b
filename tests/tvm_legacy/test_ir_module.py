"""``tvm_legacy/ir_module.py``: ``mod[name] = relay_func``, ``IRModule.astext()`` and ``str(mod)``
under ``install()``."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.boundary import active_patches


@pytest.fixture
def installed():
    from compile_engine_compat.surfaces.import_alias import install, uninstall

    install()
    yield
    uninstall()


def test_astext_and_str_print_relays_text_for_a_front_end_module(installed):
    x = relay.var("x", shape=(4,))
    func = relay.Function([x], relay.nn.relu(x) * relay.const(np.ones(4, "float32")))
    mod = tvm.IRModule.from_expr(func)
    text = mod.astext()
    assert text.startswith('#[version = "0.0.5"]\ndef @main(%x: Tensor[(4,), float32])')
    assert "%0 = nn.relu(%x) /* ty=Tensor[(4,), float32] */;" in text
    assert "meta[relay.Constant][0]" in text
    assert "#[metadata]" not in mod.astext(show_meta_data=False)
    assert str(mod) == text
    assert "@R.function" in mod.script()  # the Relax form stays printable


def test_every_function_of_the_module_prints_callers_last(installed):
    mod = tvm.IRModule({})
    a, b = relay.var("a", shape=(2,)), relay.var("b", shape=(2,))
    g0 = relay.GlobalVar("g0")
    mod[g0] = relay.Function([a, b], a + b)
    p = relay.var("p", shape=(2,))
    mod["main"] = relay.Function([p], g0(p, p))
    text = str(mod)
    assert text.index("def @g0(") < text.index("def @main(") and "@g0(%p, %p)" in text


def test_a_module_not_built_by_the_front_end_prints_as_tvm_prints_it(installed):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([2], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(relax.op.exp(x))
    mod = bb.get()
    assert mod.astext() == str(mod) == mod.script()


def test_the_methods_are_process_patches_that_uninstall_removes():
    from compile_engine_compat.surfaces.import_alias import install, uninstall

    install()
    try:
        assert any("IRModule.astext" in p for p in active_patches())
    finally:
        uninstall()
    assert not hasattr(tvm.IRModule, "astext")
    assert not any("IRModule.__str__" in p for p in active_patches())


def test_import_from_std_declares_the_standard_library(installed):
    mod = tvm.IRModule()
    mod.import_from_std("nat.rly")  # the prelude's hd/tl come first
    header, zero, succ = mod.get_type("nat")
    assert (header.name_hint, zero.name_hint, succ.name_hint) == ("nat", "zero", "succ")
    assert mod.get_global_type_var("List") is mod.get_type("List")[0]
    assert {"hd", "map", "nat_add"} <= {g.name_hint for g in mod.get_global_vars()}
    with pytest.raises(ValueError, match=r"'gradient\.rly' is not served"):
        mod.import_from_std("gradient.rly")
