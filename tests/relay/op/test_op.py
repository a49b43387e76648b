"""``relay.op.op``: the table is the families' rows, and refused ops name their replacement."""

from __future__ import annotations

from typing import Any

import pytest

from compile_engine_compat import relay
from compile_engine_compat.relay import OP_TABLE, REFUSED_OPS, UnsupportedRelayError
from compile_engine_compat.relay.op import op


def test_the_table_is_every_familys_rows_once():
    names = [row.name for family in op.FAMILIES for row in family.ROWS]
    assert len(names) == len(set(names)) == len(OP_TABLE)
    refused = [name for family in op.FAMILIES for name in family.REFUSED]
    assert len(refused) == len(set(refused)) == len(REFUSED_OPS)
    assert not set(OP_TABLE) & set(REFUSED_OPS)
    for family in op.FAMILIES:
        for row in family.ROWS:
            assert op.builder(row.name) is family.BUILDERS[row.name.rpartition(".")[2]]
            assert op.get(row.name) is op.get(row.name) and op.get(row.name).row is row
    with pytest.raises(ValueError, match="not known"):
        op.get("nn.no_such_op")


@pytest.mark.parametrize("name", sorted(REFUSED_OPS))
def test_refused_ops_name_their_replacement(name):
    with pytest.raises(UnsupportedRelayError, match="Relax") as info:
        fn: Any = relay
        for part in name.split("."):
            fn = getattr(fn, part)
        fn(relay.var("x", shape=(1, 2, 2, 2)))
    assert name in str(info.value)
