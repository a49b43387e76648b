"""The lower stage's inlining: which stages are folded into their consumers."""

from __future__ import annotations

import numpy as np
import tvm
from tvm import te, topi

from compile_engine_compat.pipeline.lower import inline_injective


def _conv_nhwc(padding: int) -> tvm.tirx.PrimFunc:
    data = te.placeholder((1, 8, 8, 16), name="data")
    weight = te.placeholder((1, 1, 16, 4) if padding == 0 else (3, 3, 16, 4), name="weight")
    out = topi.nn.conv2d_nhwc(data, weight, 1, padding, 1)
    return te.create_prim_func([data, weight, out])


def _block_names(sch: tvm.s_tir.Schedule) -> list[str]:
    root = sch.get_sblock("root")
    return [sch.get(b).name_hint for b in sch.get_child_blocks(root)]


def test_a_zero_pad_copy_is_inlined_into_the_reduction_that_reads_it():
    func = _conv_nhwc(padding=0)
    sch = inline_injective(func, "main")
    assert _block_names(sch) == ["conv2d_nhwc"]  # no copy of the whole input per call
    data = np.random.default_rng(0).random((1, 8, 8, 16), dtype="float32")
    weight = np.random.default_rng(1).random((1, 1, 16, 4), dtype="float32")
    out = tvm.runtime.tensor(np.zeros((1, 8, 8, 4), "float32"))
    tvm.compile(sch.mod, target="llvm")(tvm.runtime.tensor(data), tvm.runtime.tensor(weight), out)
    np.testing.assert_allclose(out.numpy(), np.einsum("bhwc,cf->bhwf", data, weight[0, 0]),
                               rtol=1e-5)  # fmt: skip


def test_a_real_pad_stays_a_stage_of_its_own():
    # Its border condition would be evaluated once per reduction step inside the conv.
    sch = inline_injective(_conv_nhwc(padding=1), "main")
    assert len(_block_names(sch)) == 2
