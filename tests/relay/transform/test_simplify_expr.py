"""``relay.transform.SimplifyExpr`` (``transform/simplify_expr.py``, ``simplify_rules.py``)."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import relax

from compile_engine_compat import relay

T = relay.transform


def _simplified(body: relay.Expr, *params: relay.Var) -> tuple[tvm.IRModule, relay.Function]:
    mod = tvm.IRModule.from_expr(relay.Function(list(params), body))
    out = T.SimplifyExpr()(mod)
    return out, out["main"]


def _expected(body: relay.Expr, *params: relay.Var) -> relay.Function:
    return T.InferType()(tvm.IRModule.from_expr(relay.Function(list(params), body)))["main"]


def test_simplify_expr_merges_reshapes_and_transposes_and_drops_identities():
    x = relay.var("x", shape=(2, 3, 4))
    y = relay.reshape(relay.reshape(x, (6, 4)), (24,))
    z = relay.transpose(relay.transpose(x, (1, 0, 2)), (1, 0, 2))
    body = relay.Tuple([y * relay.const(1.0), relay.cast(z, "float32") + relay.zeros_like(x)])
    out, func = _simplified(body, x)
    tvm.ir.assert_structural_equal(func, _expected(relay.Tuple([relay.reshape(x, (24,)), x]), x))
    data = np.random.default_rng(0).random((2, 3, 4), dtype="float32")
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(data))
    np.testing.assert_allclose(got[0].numpy(), data.reshape(24))
    np.testing.assert_allclose(got[1].numpy(), data)


def test_simplify_expr_folds_constant_chains_and_rsqrt_as_tvm_019_did():
    x = relay.var("x", shape=(4,))
    c1, c2 = np.array([1, 2, 3, 4], "float32"), np.full(4, 2, "float32")
    before = (x + relay.const(c1)) * relay.const(c2) / relay.sqrt(x)
    out, func = _simplified(before, x)
    # (x + c1) * c2 -> x * c2 + c1 * c2; a / sqrt(x) -> a * rsqrt(x)
    after = (x * relay.const(c2) + relay.const(c1 * c2)) * relay.rsqrt(x)
    tvm.ir.assert_structural_equal(func, _expected(after, x))
    data = np.array([1, 4, 9, 16], "float32")
    vm = relax.VirtualMachine(tvm.compile(out, "llvm"), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(data)).numpy()
    np.testing.assert_allclose(got, (data + c1) * c2 / np.sqrt(data), rtol=1e-6)


def test_simplify_expr_keeps_a_narrowing_cast_and_drops_a_widening_one():
    x = relay.var("x", shape=(3,), dtype="int8")
    _, func = _simplified(relay.cast(relay.cast(x, "int16"), "int32"), x)
    tvm.ir.assert_structural_equal(func, _expected(relay.cast(x, "int32"), x))
    f = relay.var("f", shape=(3,))
    narrow = relay.cast(relay.cast(f, "int32"), "float32")
    _, func = _simplified(narrow, f)
    tvm.ir.assert_structural_equal(func, _expected(narrow, f))
