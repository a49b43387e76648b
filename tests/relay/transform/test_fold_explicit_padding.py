"""``relay.transform.FoldExplicitPadding`` on the Relay graph
(``transform/fold_explicit_padding.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def test_fold_explicit_padding_moves_a_zero_pad_into_the_convolution():
    x, w = relay.var("x", shape=(1, 2, 5, 5)), relay.var("w", shape=(3, 2, 3, 3))
    pad = relay.nn.pad(x, [[0, 0], [0, 0], [1, 1], [2, 0]])
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(pad, w, padding=[0, 1])))
    out = T.FoldExplicitPadding()(mod)
    want = relay.Function([x, w], relay.nn.conv2d(x, w, padding=[1, 3, 1, 1]))
    tvm.ir.assert_structural_equal(out["main"], tvm.IRModule.from_expr(want)["main"])
    rng = np.random.default_rng(0)
    data = [rng.random((1, 2, 5, 5), "float32"), rng.random((3, 2, 3, 3), "float32")]
    runs = [relax.VirtualMachine(tvm.compile(m, "llvm"), tvm.cpu()) for m in (mod, out)]
    got, expected = (vm["main"](*map(tvm.runtime.tensor, data)).numpy() for vm in runs)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_fold_explicit_padding_keeps_a_pad_of_another_value():
    x, w = relay.var("x", shape=(1, 2, 5, 5)), relay.var("w", shape=(3, 2, 3, 3))
    pad = relay.nn.pad(x, [[0, 0], [0, 0], [1, 1], [1, 1]], 1.0)
    mod = tvm.IRModule.from_expr(relay.Function([x, w], relay.nn.conv2d(pad, w)))
    assert T.FoldExplicitPadding()(mod)["main"].same_as(mod["main"])
