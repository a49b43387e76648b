"""``relay.transform.recast``: casts around the chosen ops, skipping layers by index."""

from __future__ import annotations

import tvm

from compile_engine_compat import relay


def _two_convs(cast: bool, skip_first: bool = False) -> relay.Function:
    x, w, w2 = (
        relay.var(n, shape=[1, 2, 4, 4] if n == "x" else [2, 2, 3, 3]) for n in "x w w2".split()
    )

    def conv(data, weight, recast):
        if not recast:
            return relay.nn.conv2d(data, weight, padding=(1, 1), out_dtype="float32")
        out = relay.nn.conv2d(
            relay.cast(data, "int8"), relay.cast(weight, "int8"), padding=(1, 1), out_dtype="int32"
        )
        return relay.cast(out, "float32")

    first = conv(x, w, cast and not skip_first)
    return relay.Function([x, w, w2], conv(first, w2, cast))


def test_recast_casts_around_each_conv_and_skips_by_index():
    recast = relay.transform.recast
    tvm.ir.assert_structural_equal(recast(_two_convs(False), "int8", "int32"), _two_convs(True))
    skipped = recast(_two_convs(False), "int8", "int32", skip_layers=[0])
    tvm.ir.assert_structural_equal(skipped, _two_convs(True, skip_first=True))
    x = relay.var("x", shape=[1, 4])
    unchanged = relay.Function([x], relay.nn.relu(x))
    tvm.ir.assert_structural_equal(recast(unchanged, "float16", "float32"), unchanged)
