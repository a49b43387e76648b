"""``relay.transform.FoldConstantExpr`` and ``mangle_module_name``."""

from __future__ import annotations

import numpy as np

from compile_engine_compat import relay


def test_fold_constant_expr_folds_the_parts_that_use_no_variable():
    x = relay.var("x", shape=(2,))
    ones = relay.const(np.ones(2, "float32"))
    folded = relay.transform.FoldConstantExpr(
        relay.Function([x], relay.add(x, relay.add(ones, relay.multiply(relay.const(2.0), ones))))
    )
    assert folded.params[0] is x
    constant = folded.body.args[1]
    assert isinstance(constant, relay.Constant)
    np.testing.assert_array_equal(constant.data.numpy(), [3.0, 3.0])
    assert relay.transform.FoldConstantExpr(x) is x


def test_mangle_module_name_is_the_engines():
    assert relay.transform.mangle_module_name("mymod") == "tvmgen_mymod"
