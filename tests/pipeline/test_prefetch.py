"""The weight prefetch: added to a packed GEMM whose panels stream from memory, nowhere else, and
never changing a result."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat.pipeline import prefetch

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _lowered(engine, shape_x, shape_w):
    func = build(
        "main",
        [("x", shape_x, "float32"), ("w", shape_w, "float32")],
        lambda bb, x, w: relax.op.nn.conv2d(x, w, padding=1),
    )
    return engine.lower(func, "llvm")


def _compiled(cached, pipeline):
    return tvm.compile(cached.funcs, target=cached.target, tir_pipeline=pipeline).mod


def _run(library, cached, x, w):
    out = tvm.runtime.tensor(np.zeros([int(d) for d in cached.outputs[0].shape], "float32"))
    library[cached.prim_fn_var.name_hint](tvm.runtime.tensor(x), tvm.runtime.tensor(w), out)
    return out.numpy()


def test_a_convolution_streaming_its_weights_gets_the_prefetch_and_the_same_results(engine):
    # ResNet-18's last 3x3 layer: 9.4 MB of weights, 7 row tiles of 7 pixels each.
    cached = _lowered(engine, (1, 512, 7, 7), (512, 512, 3, 3))
    with_prefetch = _compiled(cached, prefetch.tir_pipeline(cached.target))
    without = _compiled(cached, "default")
    assert "llvm.prefetch" in with_prefetch.inspect_source("ll")
    assert "llvm.prefetch" not in without.inspect_source("ll")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 512, 7, 7), dtype="float32")
    w = rng.standard_normal((512, 512, 3, 3), dtype="float32")
    assert np.array_equal(_run(with_prefetch, cached, x, w), _run(without, cached, x, w))


def test_a_small_convolution_gets_no_prefetch(engine):
    cached = _lowered(engine, (1, 8, 8, 8), (8, 8, 3, 3))  # its weights stay in L1
    library = _compiled(cached, prefetch.tir_pipeline(cached.target))
    assert "llvm.prefetch" not in library.inspect_source("ll")


def test_other_targets_keep_tvms_pipeline():
    assert prefetch.tir_pipeline(tvm.target.Target("cuda")) == "default"
    assert prefetch.tir_pipeline(tvm.target.Target("llvm")) == prefetch.TIR_PIPELINE
