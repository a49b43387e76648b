"""TVM <=0.19 names upstream's Relay test files use outside tvm.relay, under install():
tvm.ir.diagnostics (renderer hooks refused where they would matter), Device.device_type,
tvm.runtime.container.ADT."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay


def test_diagnostics_imports_and_refuses_rendering(installed_alias):
    from tvm.ir.diagnostics import get_renderer, override_renderer

    renderer = get_renderer()  # upstream's helper module calls this at import
    override_renderer(None)
    with pytest.raises(NotImplementedError, match="errors are Python exceptions"):
        override_renderer(lambda ctx: None)
    with pytest.raises(NotImplementedError, match="no diagnostic renderer"):
        renderer.render(None)


def test_device_type_is_the_dlpack_number(installed_alias):
    assert tvm.cpu().device_type == 1 == tvm.cpu().dlpack_device_type()


def test_a_tuple_result_is_an_adt(installed_alias):
    import tvm.runtime.container

    x = relay.var("x", shape=(2,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.Tuple([x, relay.exp(x)])))
    data = np.arange(2, dtype="float32")
    result = relay.create_executor("vm", mod=mod, target="llvm").evaluate()(data)
    assert isinstance(result, tvm.runtime.container.ADT)
    np.testing.assert_allclose([r.numpy() for r in result], [data, np.exp(data)], rtol=1e-6)
    single = relay.create_executor("vm", mod=tvm.IRModule.from_expr(relay.Function([x], x)))
    assert not isinstance(single.evaluate()(data), tvm.runtime.container.ADT)
