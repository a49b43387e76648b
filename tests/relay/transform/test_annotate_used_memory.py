"""``AnnotateUsedMemory`` (``relay.transform._ffi_api``) on the Relay graph."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.transform import _ffi_api
from compile_engine_compat.relay.transform.annotate_used_memory import size_in_bytes
from compile_engine_compat.relay.transform.module_functions import relay_definitions

T = relay.transform


def _fused(shape: tuple[int, ...]) -> object:
    x = relay.var("x", shape=shape, dtype="int8")
    return relay.Function([x], relay.nn.relu(x)).with_attr("Primitive", 1)


def test_each_call_counts_the_tensors_live_around_it():
    ifm = relay.var("input", shape=(1, 2, 2, 4), dtype="int8")
    a = relay.Call(_fused((1, 2, 2, 4)), [ifm])
    b = relay.Call(_fused((1, 2, 2, 4)), [ifm])
    mod = tvm.IRModule.from_expr(relay.concatenate([a, b], axis=3))
    mod = T.InferType()(T.ToANormalForm()(T.InferType()(mod)))
    out = _ffi_api.AnnotateUsedMemory()(mod)
    main = next(f for g, f in relay_definitions(out).items() if g.name_hint == "main")
    assert main.attrs["io_used_memory"] == 16 + 32
    used = []
    body = main.body
    while isinstance(body, relay.Let):
        if isinstance(body.value, relay.Function):
            used.append(list(body.value.attrs["used_memory"]))
        body = body.body
    # the first call: its input and output; the second: also the first's output
    assert used == [[32], [48]]


def test_sizes_refuse_a_dynamic_shape_and_other_names_are_refused():
    assert size_in_bytes(relay.TupleType([relay.TensorType((2, 3), "float16")] * 2)) == 24
    with pytest.raises(RuntimeError, match="dynamic shapes"):
        size_in_bytes(relay.TensorType((relay.Any(), 3), "float32"))
    with pytest.raises(AttributeError, match=r"relay\.transform\.FoldConstant"):
        _ffi_api.FoldConstant  # noqa: B018
