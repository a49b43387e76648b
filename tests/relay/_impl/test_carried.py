"""``relay/_impl/carried.py``: the kernels a front-end function carries, stored in its module."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from tvm import relax

from compile_engine_compat import relay
from compile_engine_compat.pipeline.model.vm_executable import PRIM_FUNCS_ATTR
from compile_engine_compat.relay._impl import origin

pytestmark = pytest.mark.usefixtures("installed_alias")


def _primitive_caller(shape: tuple[int, ...]) -> relay.Function:
    """``main(x) = prim(x)``, ``prim`` a function literal marked ``Primitive`` (one kernel)."""
    p = relay.var("p", shape=shape)
    body = relay.exp(relay.add(p, relay.const(1.0)))
    prim = relay.Function([p], body).with_attr("Primitive", tvm.tirx.IntImm("int32", 1))
    x = relay.var("x", shape=shape)
    return relay.Function([x], relay.Call(prim, [x]))


def _kernels(mod: tvm.IRModule) -> dict[str, tvm.tirx.PrimFunc]:
    return {
        gvar.name_hint: func
        for gvar, func in mod.functions.items()
        if isinstance(func, tvm.tirx.PrimFunc)
    }


def _stored(mod: tvm.IRModule, name: str = "main") -> relax.Function:
    """The Relax function the module holds (``mod[name]`` reads back as Relay here)."""
    return mod.functions[mod.get_global_var(name)]


def test_from_expr_stores_the_called_kernel_beside_main():
    func = _primitive_caller((2, 3))
    assert PRIM_FUNCS_ATTR in func.__relax_function__().attrs  # it does carry one
    mod = tvm.IRModule.from_expr(func)
    relax.analysis.well_formed(mod)  # raises on a GlobalVar the module lacks
    assert len(_kernels(mod)) == 1
    assert PRIM_FUNCS_ATTR not in _stored(mod).attrs
    assert "R.call_tir(" in mod.script()  # the attribute (PrimFuncs) made the printer fail
    assert origin.relay_of(_stored(mod)) is func  # still read back as Relay
    data = np.arange(6, dtype="float32").reshape(2, 3)
    got = relay.create_executor("graph", mod=mod, target="llvm").evaluate()(data)
    np.testing.assert_allclose(got.numpy(), np.exp(data + 1), rtol=1e-5)


def test_assigned_functions_keep_their_own_kernels_under_distinct_names():
    mod = tvm.IRModule()
    mod["small"] = _primitive_caller((2,))
    mod["main"] = _primitive_caller((4,))
    relax.analysis.well_formed(mod)
    kernels = _kernels(mod)
    assert len(kernels) == 2  # one name each: the second kernel was renamed
    for name, shape in (("small", 2), ("main", 4)):
        stored = _stored(mod, name)
        used = {g.name_hint for g in relax.analysis.all_global_vars(stored)}
        (kernel,) = used & set(kernels)
        assert f"T.Buffer((T.int64({shape}),)" in kernels[kernel].script()
    mod.script()


def test_the_same_kernel_is_stored_once():
    mod = tvm.IRModule()
    mod["other"] = _primitive_caller((2,))
    mod["main"] = _primitive_caller((2,))
    relax.analysis.well_formed(mod)
    assert len(_kernels(mod)) == 1


def test_fuse_ops_returns_a_well_formed_module():
    x = relay.var("x", shape=(10, 20))
    mod = tvm.IRModule()
    mod["main"] = relay.Function([x], relay.squeeze(relay.exp(relay.add(x, relay.const(1.0)))))
    fused = relay.transform.FuseOps(fuse_opt_level=2)(mod)
    relax.analysis.well_formed(fused)
    assert len(_kernels(fused)) == 1
    fused.script()


def test_a_converted_function_equals_its_relay_function_across_conversions():
    # Each conversion makes the kernel's GlobalVar anew: the Relax forms differ there, the
    # Relay functions they were made from do not.
    mod = tvm.IRModule.from_expr(_primitive_caller((2, 3)))
    tvm.ir.assert_structural_equal(_stored(mod), _primitive_caller((2, 3)))
    assert tvm.ir.structural_equal(_stored(mod), _primitive_caller((2, 3)))
    assert not tvm.ir.structural_equal(_stored(mod), _primitive_caller((3, 2)))
