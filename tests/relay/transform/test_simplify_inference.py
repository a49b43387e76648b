"""``relay.transform.SimplifyInference`` on the Relay graph (``simplify_inference.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def test_simplify_inference_spells_out_batch_norm_as_tvm_019_did():
    x = relay.var("x", shape=(1, 3, 2, 2))
    g, b, m, v = (relay.var(n, shape=(3,)) for n in ("g", "b", "m", "v"))
    bn = relay.nn.batch_norm(x, g, b, m, v, epsilon=0.01)[0]
    mod = tvm.IRModule.from_expr(relay.Function([x, g, b, m, v], relay.nn.dropout(bn)))
    out = T.SimplifyInference()(mod)
    scale = relay.multiply(relay.const(1.0) / relay.sqrt(v + relay.const(0.01)), g)
    shift = relay.add(relay.multiply(relay.negative(m), scale), b)
    scale, shift = (relay.expand_dims(e, axis=1, num_newaxis=2) for e in (scale, shift))
    want = tvm.IRModule.from_expr(relay.Function([x, g, b, m, v], x * scale + shift))
    tvm.ir.assert_structural_equal(out["main"], want["main"])
    rng = np.random.default_rng(0)
    data = [rng.random((1, 3, 2, 2), "float32")] + [rng.random(3, "float32") + 1 for _ in range(4)]
    runs = [relax.VirtualMachine(tvm.compile(m_, "llvm"), tvm.cpu()) for m_ in (out, mod)]
    got, expected = (vm["main"](*map(tvm.runtime.tensor, data)).numpy() for vm in runs)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
