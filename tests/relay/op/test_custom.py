"""relay.op.op.register: a program's own ops, typed by their type relation, and run as a
call_dps_packed of the packed function of their name (against NumPy)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import tvm
import tvm_ffi

from compile_engine_compat import relay
from compile_engine_compat.relay.op import op as _op

_ids = itertools.count()


def _name(stem: str) -> str:
    return f"test_custom.{stem}{next(_ids)}"  # one registration per name and process


def test_identity_and_broadcast_relations_type_calls():
    log_name, add_name = _name("log"), _name("add")
    log = _op.register(log_name, "log of a tensor")
    log.add_type_rel("Identity")
    log.set_num_inputs(1)
    _op.register(add_name).add_type_rel("Broadcast")
    x, y = relay.var("x", shape=(10, 4)), relay.var("y", shape=(5, 10, 1))
    t1 = relay.Call(_op.get(log_name), [x])
    func = relay.Function([x, y], relay.Call(_op.get(add_name), [t1, y]))
    expected = relay.FuncType(
        [relay.TensorType((10, 4)), relay.TensorType((5, 10, 1))], relay.TensorType((5, 10, 4))
    )
    assert relay.transform.InferTypeLocal(func) == expected
    assert f"{log_name}(%x)" in func.astext()
    with pytest.raises(relay.RelayTypeError, match="takes 1 inputs, got 2"):
        relay.transform.InferTypeLocal(relay.Call(_op.get(log_name), [x, x]))


def test_a_python_relation_gets_the_types_and_its_errors_reach_the_caller():
    seen = []

    def rel(arg_types, attrs):
        seen.append((arg_types, attrs))
        assert len(arg_types) == 1, "type relation arg number mismatch!"
        return relay.TensorType(arg_types[0].shape, "int32")

    name = _name("rel")
    _op.register(name).add_type_rel(name, rel)
    x = relay.var("x", shape=(3,))
    assert relay.transform.InferTypeLocal(relay.Call(_op.get(name), [x])) == relay.TensorType(
        (3,), "int32"
    )
    assert seen[0][0] == [relay.TensorType((3,))] and seen[0][1] is None
    with pytest.raises(AssertionError, match="arg number mismatch"):
        relay.transform.InferTypeLocal(relay.Call(_op.get(name), [x, x]))
    bad = _name("bad")
    _op.register(bad).add_type_rel(bad, lambda types, attrs: None)
    with pytest.raises(relay.RelayTypeError, match=r"not a relay\.TensorType"):
        relay.transform.InferTypeLocal(relay.Call(_op.get(bad), [x]))


def test_registering_a_taken_name_or_an_unknown_relation_raises():
    name = _name("twice")
    _op.register(name)
    with pytest.raises(RuntimeError, match=f"Operator {name} is registered before"):
        _op.register(name)
    with pytest.raises(RuntimeError, match="registered before"):
        _op.register("nn.conv2d")
    with pytest.raises(ValueError, match="no built-in type relation"):
        _op.register(_name("rel")).add_type_rel("NoSuchRel")
    with pytest.raises(ValueError, match="not registered"):
        _op.register_pattern(_name("never"), _op.OpPattern.ELEMWISE)


def test_a_custom_op_runs_as_the_packed_function_of_its_name():
    name = _name("double")

    @tvm_ffi.register_global_func(name)
    def double(x, out):  # destination-passing style: the output tensor comes last
        out.copyfrom(x.numpy() * 2)

    _op.register(name).add_type_rel("Identity")
    x = relay.var("x", shape=(4,))
    func = relay.Function([x], relay.exp(relay.Call(_op.get(name), [x])))
    data = np.arange(4, dtype="float32")
    out = relay.create_executor(mod=tvm.IRModule.from_expr(func)).evaluate()(data)
    np.testing.assert_allclose(out.numpy(), np.exp(2 * data), rtol=1e-6)


def test_register_compute_runs_the_ops_te_compute():
    name = _name("twice")
    _op.register(name).add_type_rel("Identity")
    seen = []

    @relay.op.register_compute(name)
    def compute(attrs, inputs, out_type):
        seen.append(out_type)
        return [tvm.te.compute(inputs[0].shape, lambda i: inputs[0][i] * 2.0)]

    x = relay.var("x", shape=(3,))
    run = relay.create_executor(
        "vm", mod=tvm.IRModule.from_expr(relay.Function([x], relay.Call(_op.get(name), [x])))
    ).evaluate()
    data = np.array([1.0, -2.0, 3.5], "float32")
    np.testing.assert_allclose(run(data).numpy(), data * 2)
    assert seen == [relay.TensorType((3,))]
    with pytest.raises(relay.UnsupportedRelayError, match="FTVMCompute"):
        relay.op.register_compute("nn.relu", compute)
