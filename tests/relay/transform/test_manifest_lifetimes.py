"""``ManifestLifetimes`` on the Relay graph: a ``memory.kill`` after each variable's last use."""

from __future__ import annotations

import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay._impl.structural import relay_equal
from compile_engine_compat.relay.transform.liveness import Liveness
from compile_engine_compat.relay.transform.module_functions import relay_definitions

T = relay.transform


def _main(text: str) -> relay.Function:
    mod = relay.parse('#[version = "0.0.5"]\n' + text)
    return next(f for g, f in relay_definitions(mod).items() if g.name_hint == "main")


def test_each_variable_is_killed_after_its_last_use_in_each_branch():
    before = relay.parse("""#[version = "0.0.5"]
    def @main(%x: int32) {
        let %y = cast(%x, dtype="bool");
        let %a = %x;
        let %z = if (%y) { let %v0 = %a + %a; let %v1 = %v0 * 2; %v1 } else { %x };
        %z
    }""")
    got = next(f for g, f in relay_definitions(T.ManifestLifetimes()(before)).items())
    want = _main("""def @main(%x: int32) {
        let %y = cast(%x, dtype="bool");
        let %z = if (%y) {
            let %v0 = %x + %x;
            let %k0 = memory.kill(%x);
            let %v1 = %v0 * 2;
            let %k1 = memory.kill(%v0);
            %v1
        } else { %x };
        let %k2 = memory.kill(%y);
        %z
    }""")
    assert relay_equal(got, want)  # the alias %a is gone, %x dies in the true branch


def test_liveness_asks_for_a_normal_form():
    func = _main("def @main(%c: bool, %x: int32) { if (%c) { %x } else { %x } }")
    with pytest.raises(ValueError, match="ToANormalForm"):
        Liveness(func)


def test_a_killed_program_still_builds_and_runs():
    # memory.kill is Relay's empty tuple in a build: the Relax VM frees what it no longer uses.
    import numpy as np
    import tvm

    from compile_engine_compat.tvm_legacy import graph_executor

    mod = relay.parse("""#[version = "0.0.5"]
    def @main(%x: Tensor[(2), float32]) {
        let %v0 = add(%x, %x);
        let %k0 = memory.kill(%x);
        %v0
    }""")
    module = graph_executor.GraphModule(relay.build(mod, "llvm")["default"](tvm.cpu()))
    module.set_input("x", np.array([1.0, 2.0], "float32"))
    module.run()
    np.testing.assert_array_equal(module.get_output(0).numpy(), [2.0, 4.0])
