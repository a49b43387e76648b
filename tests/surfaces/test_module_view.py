"""``mod["main"]`` reads back as Relay in Relay-era code, as Relax in the package and TVM."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

import compile_engine_compat
from compile_engine_compat.relay._impl.origin import relay_of


@pytest.fixture
def relay():
    compile_engine_compat.install()
    from tvm import relay as served

    yield served
    compile_engine_compat.uninstall()


def _add_one(relay):
    x = relay.var("x", shape=(1, 4))
    return relay.Function([x], relay.add(x, relay.const(1.0)))


def test_relay_era_code_reads_the_typed_relay_function(relay):
    func = _add_one(relay)
    mod = tvm.IRModule.from_expr(func)
    main = mod["main"]
    assert type(main) is type(func)
    assert isinstance(main.body, relay.Call) and main.body.op.name == "add"
    assert main.params[0].type_annotation.shape == (1, 4)
    assert main.checked_type.ret_type.dtype == "float32"
    assert mod["main"] is main  # a second read is the same object (one lookup)
    tvm.ir.assert_structural_equal(main, relay.testing.run_infer_type(func))


def test_assignment_round_trips(relay):
    func = _add_one(relay)
    mod = tvm.IRModule()
    mod["main"] = func
    tvm.ir.assert_structural_equal(mod["main"], func)


def test_the_package_and_tvm_still_read_relax(relay):
    mod = tvm.IRModule.from_expr(_add_one(relay))
    assert relay_of(mod) is not None  # the package's own read of mod["main"] got Relax
    read_by_tvm = eval('mod["main"]', {"__name__": "tvm.contrib.example", "mod": mod})
    assert isinstance(read_by_tvm, relax.Function)


def test_a_function_with_no_relay_origin_stays_relax(relay):
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType([1, 4], "float32"))
    with bb.function("main", [x]):
        bb.emit_func_output(bb.emit(relax.op.add(x, x)))
    assert isinstance(bb.get()["main"], relax.Function)


def test_what_was_read_back_goes_on(relay):
    mod = tvm.IRModule.from_expr(_add_one(relay))
    folded = relay.transform.FoldConstant()(mod)
    again = tvm.IRModule.from_expr(folded["main"])
    run = relay.create_executor(mod=again).evaluate()
    np.testing.assert_allclose(run(np.ones((1, 4), "float32")).numpy(), 2.0)


def test_uninstall_gives_tvm_its_own_read_back(relay):
    mod = tvm.IRModule.from_expr(_add_one(relay))
    compile_engine_compat.uninstall()
    try:
        assert isinstance(mod["main"], relax.Function)
    finally:
        compile_engine_compat.install()
