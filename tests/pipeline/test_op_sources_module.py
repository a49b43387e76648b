"""The legalizations of whole-module builds: NHWC convolutions and fast math polynomials."""

from __future__ import annotations

import numpy as np
import pytest
import tvm
from _builders import build
from tvm import relax

from compile_engine_compat.pipeline.op_sources import MODULE_LEGALIZATIONS
from compile_engine_compat.testing.oracle import PATH_TOLERANCES, compare

R = relax.op
F32 = "float32"


def _run(func: relax.Function, arrays: list[np.ndarray], module_build: bool) -> np.ndarray:
    legalize = relax.transform.LegalizeOps(MODULE_LEGALIZATIONS if module_build else None)
    mod = legalize(tvm.IRModule({"main": func}))
    vm = relax.VirtualMachine(tvm.compile(mod, "llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def _conv(x_shape, w_shape, layout: str) -> relax.Function:
    kernel = "OHWI" if layout == "NHWC" else "OIHW"
    return build(
        "main",
        [("x", x_shape, F32), ("w", w_shape, F32)],
        lambda bb, x, w: R.nn.conv2d(
            x, w, strides=[2, 2], padding=[1, 1], data_layout=layout, kernel_layout=kernel
        ),
    )


def test_nhwc_conv_sums_like_the_nchw_conv_it_replaces():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 9, 9, 8)).astype(F32)
    w = rng.standard_normal((16, 3, 3, 8)).astype(F32)
    ours = _run(_conv(x.shape, w.shape, "NHWC"), [x, w], module_build=True)
    x_nchw, w_oihw = x.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2)
    nchw = _run(_conv(x_nchw.shape, w_oihw.shape, "NCHW"), [x_nchw, w_oihw], module_build=False)
    # The same terms summed in the same order (channel, kernel row, kernel column): same bits.
    np.testing.assert_array_equal(ours, nchw.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("op", ["erf", "tanh", "gelu", "softmax"])
def test_fast_math_stays_within_the_path_tolerance(op):
    make = {"erf": R.erf, "tanh": R.tanh, "gelu": R.nn.gelu, "softmax": R.nn.softmax}[op]
    x = np.linspace(-9, 9, 4 * 257, dtype=F32).reshape(4, 257)
    func = build("main", [("x", x.shape, F32)], lambda bb, a: make(a))
    fast, default = _run(func, [x], True), _run(func, [x], False)
    assert compare(fast, default, PATH_TOLERANCES) == ""


def test_float16_keeps_the_default_legalization():
    x = np.linspace(-3, 3, 64, dtype="float16")
    func = build("main", [("x", x.shape, "float16")], lambda bb, a: R.erf(a))
    np.testing.assert_array_equal(_run(func, [x], True), _run(func, [x], False))
