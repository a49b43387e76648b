"""``relay.transform``: the passes Relay-era code runs, and the refusal of the others."""

from __future__ import annotations

import pytest
import tvm

from compile_engine_compat import relay


def test_other_relay_passes_name_their_relax_counterpart():
    from compile_engine_compat.surfaces.import_alias import RelayRemovedError

    with pytest.raises(RelayRemovedError, match=r"tvm\.relax\.transform\.FoldConstant"):
        relay.transform.FoldConstant()
    with pytest.raises(RelayRemovedError, match="drop the pass"):
        relay.transform.PartialEvaluate()
    x = relay.var("x", shape=(10,))
    mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
    assert relay.transform.SimplifyInference()(mod) is mod
    assert relay.transform.InferType()(relay.exp(relay.var("v", shape=(1,)))).checked_type
