"""``relay.data_dep_optimization``: simplify_fc_transpose served, the sparse rewrites refused."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.data_dep_optimization import bsr_dense, simplify_fc_transpose
from compile_engine_compat.surfaces.import_alias import RelayRemovedCallError


def test_convert_transposes_the_weight_and_drops_the_transpose():
    data = relay.var("data", shape=(1, 4))
    w = relay.var("w", shape=(4, 3))
    func = relay.Function([data, w], relay.nn.dense(data, relay.transpose(w, axes=[1, 0])))
    weight = np.arange(12, dtype="float32").reshape(4, 3)
    new, params = simplify_fc_transpose.convert(func, {"w": tvm.runtime.tensor(weight)})
    assert list(params) == ["w.T"]
    np.testing.assert_array_equal(params["w.T"].numpy(), weight.T)
    assert [p.name_hint for p in new.params] == ["data", "w.T"]
    assert "transpose" not in new.astext()
    with pytest.raises(KeyError, match="'w'"):
        simplify_fc_transpose.convert(func, {})


def test_sparse_conversions_are_refused_when_called():
    with pytest.raises(RelayRemovedCallError, match="sparse"):
        bsr_dense.convert(None, {}, (1, 1))
