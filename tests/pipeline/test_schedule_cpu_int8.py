"""The int8 rules: ``vpdpbusd`` (VNNI, :mod:`.cpu_int8`) and the packed GEMM's widening multiplies,
bit for bit against TVM's default pipeline and NumPy integer products.

Quantized frontends emit ``nn.conv2d(int8/uint8, int8, out_dtype="int32")`` and
``matmul(..., out_dtype="int32")``; whole-module builds convert convolutions to NHWC/OHWI and
shift int8 data to uint8 on VNNI targets (:mod:`compile_engine_compat.pipeline.model.
shift_int8`). Integer sums are exact: every path must give the very same int32 outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm
from _builders import build
from hypothesis import given, settings
from hypothesis import strategies as st
from tvm import relax, tirx

from compile_engine_compat.pipeline.op_sources import MODULE_LEGALIZATIONS
from compile_engine_compat.pipeline.schedule import schedule_prim_func
from compile_engine_compat.pipeline.schedule.blocks import target_isa
from compile_engine_compat.pipeline.schedule.driver import uncovered_blocks
from compile_engine_compat.schedules import relax_pipeline
from pipeline.schedule_cases import HOST, R

TARGET = tvm.target.Target(HOST)
VNNI = target_isa(TARGET).dot_bits > 0
#: Rules an int8 product-sum may keep: VNNI, the widening packed GEMM, the deliberate fallbacks.
INT8_RULES = ("vnni_gemm", "pmaddubs_gemm", "packed_gemm", "tiled_reduction", "parallel_reduction")
#: The product-sum blocks of the legalized functions: conv2d, depthwise (grouped) conv2d, matmul.
PRODUCT_SUMS = ("conv2d_nhwc", "group_conv2d_nhwc", "matmul")
INT32_LANES = target_isa(TARGET).lanes("int32")


def examples(factor: float) -> int:
    """The current profile's max_examples scaled by this property's relative cost."""
    return max(2, int(settings().max_examples * factor))


def _conv(data: str, batch: int, channels: int, size: int, kernel: int, stride: int, out: int):
    x_shape, w_shape = (batch, size, size, channels), (out, kernel, kernel, channels)
    params = [("x", x_shape, data), ("w", w_shape, "int8")]
    return build("main", params, lambda bb, x, w: R.nn.conv2d(
        x, w, strides=[stride] * 2, padding=[kernel // 2] * 2, data_layout="NHWC",
        kernel_layout="OHWI", out_dtype="int32"))  # fmt: skip


def _depthwise(data: str, channels: int, size: int, stride: int):
    """A depthwise 3x3 conv (MobileNet's), NHWC/OHWI as module builds convert it."""
    params = [("x", (1, size, size, channels), data), ("w", (channels, 3, 3, 1), "int8")]
    return build("main", params, lambda bb, x, w: R.nn.conv2d(
        x, w, strides=[stride] * 2, padding=[1] * 2, groups=channels, data_layout="NHWC",
        kernel_layout="OHWI", out_dtype="int32"))  # fmt: skip


def _numpy_depthwise(x: np.ndarray, w: np.ndarray, stride: int, pad_value: int = 0) -> np.ndarray:
    padded = np.pad(x.astype(np.int64), ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=pad_value)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
    windows = windows[:, ::stride, ::stride]  # (n, oh, ow, c, kh, kw)
    return np.einsum("nhwcyx,cyx->nhwc", windows, w[..., 0].astype(np.int64)).astype(np.int32)


def _matmul(data: str, rows: int, depth: int, cols: int):
    params = [("a", (rows, depth), data), ("b", (depth, cols), "int8")]
    return build("main", params, lambda bb, a, b: R.matmul(a, b, out_dtype="int32"))


def _numpy_conv(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    pad = w.shape[1] // 2
    padded = np.pad(x.astype(np.int64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, w.shape[1:3], axis=(1, 2))
    windows = windows[:, ::stride, ::stride]  # (n, oh, ow, c, kh, kw)
    return np.einsum("nhwcyx,oyxc->nhwo", windows, w.astype(np.int64)).astype(np.int32)


def _arrays(seed: int, data: str, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    low = 0 if data == "uint8" else -128
    x = rng.integers(low, low + 256, shapes[0]).astype(data)
    # The extremes included: -128 weights against 255 data are what 16-bit sums overflow on.
    w = rng.choice(np.array([-128, -127, -1, 0, 1, 127], np.int8), shapes[1])
    w = np.where(rng.random(shapes[1]) < 0.5, w, rng.integers(-128, 128, shapes[1])).astype("int8")
    return [x, w]


def _kernel(func: relax.Function) -> tuple[dict[str, str], Any]:
    """The product-sum's rules and scheduled module, as a module build schedules its kernel."""
    mod = relax.transform.LegalizeOps(MODULE_LEGALIZATIONS)(tvm.IRModule({"main": func}))
    (prim,) = (f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc))
    outcome = schedule_prim_func(prim.with_attr("global_symbol", "main"), "main", TARGET)
    assert uncovered_blocks(outcome.schedule) == []
    return dict(outcome.rules), outcome.schedule.mod


def _run_kernel(mod: Any, arrays: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
    out = tvm.runtime.empty(shape, "int32")
    tvm.compile(mod, TARGET)(*[tvm.runtime.tensor(a) for a in arrays], out)
    return out.numpy()


def _vm(func: relax.Function, arrays: list[np.ndarray], pipeline: Any = None) -> np.ndarray:
    mod = tvm.IRModule({"main": func})
    kwargs = {} if pipeline is None else {"relax_pipeline": pipeline}
    vm = relax.VirtualMachine(tvm.compile(mod, TARGET, **kwargs), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def _check(func: relax.Function, arrays: list[np.ndarray], expected: np.ndarray) -> str:
    """Every path against NumPy, bit for bit; returns the product-sum's rule."""
    rules, mod = _kernel(func)
    np.testing.assert_array_equal(_run_kernel(mod, arrays, expected.shape), expected)
    np.testing.assert_array_equal(_vm(func, arrays), expected)  # TVM's default pipeline
    np.testing.assert_array_equal(_vm(func, arrays, relax_pipeline(TARGET)), expected)
    return next((rules[name] for name in PRODUCT_SUMS if name in rules), "None")


@pytest.mark.property
@pytest.mark.int8
@settings(max_examples=examples(0.15))
@given(
    data=st.sampled_from(["uint8", "int8"]),
    batch=st.sampled_from([1, 2]),
    channels=st.sampled_from([3, 4, 8, 12, 32]),
    size=st.integers(4, 14),
    kernel=st.sampled_from([1, 3]),
    stride=st.sampled_from([1, 2]),
    out=st.sampled_from([8, 16, 20, 32, 48]),
    seed=st.integers(0, 2**16),
)
def test_int8_convolutions_match_the_default_pipeline_and_numpy(
    data, batch, channels, size, kernel, stride, out, seed
):
    func = _conv(data, batch, channels, size, kernel, stride, out)
    x, w = _arrays(seed, data, (batch, size, size, channels), (out, kernel, kernel, channels))
    rule = _check(func, [x, w], _numpy_conv(x, w, stride))
    out_size = (size - 1) // stride + 1
    if rule != "None":  # below the size threshold tiny kernels keep no rule, deliberately
        assert rule in INT8_RULES
    fits = data == "uint8" and channels % 4 == 0 and out % 8 == 0
    work = batch * out_size**2 * out * kernel**2 * channels
    if VNNI and fits and work >= 1 << 14:  # odd image rows too (a tile of the whole row)
        assert rule == "vnni_gemm"


@pytest.mark.property
@pytest.mark.int8
@settings(max_examples=examples(0.15))
@given(
    data=st.sampled_from(["uint8", "int8"]),
    rows=st.sampled_from([1, 2, 7, 16, 24]),
    depth=st.sampled_from([16, 64, 97, 256]),
    cols=st.sampled_from([8, 40, 64, 80, 1000]),
    seed=st.integers(0, 2**16),
)
def test_int8_matmuls_match_the_default_pipeline_and_numpy(data, rows, depth, cols, seed):
    func = _matmul(data, rows, depth, cols)
    a, b = _arrays(seed, data, (rows, depth), (depth, cols))
    rule = _check(func, [a, b], (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))
    if VNNI and data == "uint8" and depth % 4 == 0 and rows * depth * cols >= 1 << 14:
        assert rule == "vnni_gemm"


@pytest.mark.property
@pytest.mark.int8
@settings(max_examples=examples(0.15))
@given(
    data=st.sampled_from(["uint8", "int8"]),
    channels=st.sampled_from([8, 16, 24, 32, 48, 96]),
    size=st.integers(4, 16),
    stride=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**16),
)
def test_int8_depthwise_convolutions_match_the_default_pipeline_and_numpy(
    data, channels, size, stride, seed
):
    func = _depthwise(data, channels, size, stride)
    x, w = _arrays(seed, data, (1, size, size, channels), (channels, 3, 3, 1))
    rule = _check(func, [x, w], _numpy_depthwise(x, w, stride))
    out_size = (size - 1) // stride + 1
    work = out_size**2 * channels * 9
    tiles = channels % INT32_LANES == 0 and any(out_size % rows == 0 for rows in (8, 7, 6, 4, 2))
    if tiles and work >= 1 << 14:
        assert rule == "depthwise_conv"


def _zero_point_depthwise(channels: int, size: int, zero: int, scale: float, out_zero: int):
    """What the ONNX frontend makes of a QLinearConv depthwise layer, in NHWC: the input padded
    with its zero point, the int32 conv, one per-channel int32 term, the float requantize."""
    w = np.random.default_rng(channels + size).integers(-128, 128, (channels, 3, 3, 1))
    w = w.astype("int8")
    term = np.random.default_rng(zero).integers(-5000, 5000, (1, 1, 1, channels)).astype("int32")

    def body(bb: Any, x: Any) -> Any:
        padded = bb.emit(R.nn.pad(x, [0, 0, 1, 1, 1, 1, 0, 0], pad_value=float(zero)))
        acc = bb.emit(R.nn.conv2d(padded, relax.const(w), groups=channels, data_layout="NHWC",
                                  kernel_layout="OHWI", out_dtype="int32"))  # fmt: skip
        acc = bb.emit(R.add(acc, relax.const(term)))
        scaled = R.round(R.multiply(R.astype(acc, "float32"), relax.const(scale, "float32")))
        shifted = R.add(scaled, relax.const(float(out_zero), "float32"))
        return R.astype(R.maximum(R.minimum(shifted, relax.const(255.0)), relax.const(0.0)),
                        "uint8")  # fmt: skip

    return build("main", [("x", (1, size, size, channels), "uint8")], body), w, term


def _numpy_requantized(acc: np.ndarray, scale: float, out_zero: int) -> np.ndarray:
    scaled = np.round(acc.astype(np.float32) * np.float32(scale)) + np.float32(out_zero)
    return np.clip(scaled, 0, 255).astype(np.uint8)


@pytest.mark.property
@pytest.mark.int8
@settings(max_examples=examples(0.1))
@given(
    channels=st.sampled_from([16, 32, 96]),
    size=st.sampled_from([7, 8, 14, 16]),
    zero=st.integers(0, 255),
    scale=st.integers(1, 500).map(lambda n: n / 10_000),
    out_zero=st.integers(0, 255),
    seed=st.integers(0, 2**16),
)
def test_zero_point_padded_depthwise_requantized_matches_the_default_pipeline_and_numpy(
    channels, size, zero, scale, out_zero, seed
):
    func, w, term = _zero_point_depthwise(channels, size, zero, scale, out_zero)
    x = np.random.default_rng(seed).integers(0, 256, (1, size, size, channels)).astype("uint8")
    acc = _numpy_depthwise(x, w, 1, pad_value=zero) + term
    expected = _numpy_requantized(acc, scale, out_zero)
    np.testing.assert_array_equal(_vm(func, [x]), expected)  # TVM's default pipeline
    np.testing.assert_array_equal(_vm(func, [x], relax_pipeline(TARGET)), expected)


# -- the default suite: one of each, then the module build ----------------------------------------


@pytest.mark.parametrize(
    ("data", "make", "expected_rule"),
    [
        ("uint8", lambda: _conv("uint8", 1, 16, 8, 3, 1, 32), "vnni_gemm"),
        ("int8", lambda: _matmul("int8", 8, 64, 48), "packed_gemm"),
        ("uint8", lambda: _depthwise("uint8", 64, 16, 1), "depthwise_conv"),
    ],
    ids=["conv3x3_u8", "matmul_i8", "depthwise_u8"],
)
def test_int8_product_sums_take_their_rule_and_match_numpy(data, make, expected_rule):
    # int8 data as it is (not shifted: that is the module build's job) takes the widening GEMM.
    func = make()
    shapes = [tuple(int(d) for d in p.ty.shape) for p in func.params]
    arrays = _arrays(1, data, *shapes)
    if expected_rule == "depthwise_conv":
        expected = _numpy_depthwise(arrays[0], arrays[1], 1)
    elif len(shapes[0]) == 4:
        expected = _numpy_conv(arrays[0], arrays[1], 1)
    else:
        expected = (arrays[0].astype(np.int64) @ arrays[1].astype(np.int64)).astype(np.int32)
    rules, mod = _kernel(func)
    rule = next(iter(rules[name] for name in PRODUCT_SUMS if name in rules))
    assert rule == (expected_rule if VNNI or expected_rule == "depthwise_conv" else "packed_gemm")
    np.testing.assert_array_equal(_run_kernel(mod, arrays, expected.shape), expected)


@pytest.mark.parametrize(
    ("mcpu", "rule", "instruction"),
    [
        ("skylake-avx512", "pmaddubs_gemm", "vpmaddubsw"),
        ("core-avx2", "pmaddubs_gemm", "vpmaddubsw"),
        ("nehalem", "pmaddubs_gemm", "pmaddubsw"),
        ("x86-64", "packed_gemm", "pmaddwd"),  # SSE2: widening multiplies
    ],
)
def test_cpus_without_vnni_stay_exact_where_16_bit_pair_sums_saturate(mcpu, rule, instruction):
    # 255 x -128 twice is -65,280: pmaddubsw alone saturates it at -32,768 (TVM 0.19's AVX-512
    # intrinsic did). The rule's nibble split keeps every product exact.
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    if not tvm.target.codegen.llvm_cpu_has_features(["sse2"], TARGET):
        pytest.skip("the host CPU is no x86-64")
    a = np.full((28, 64), 255, np.uint8)
    a[::3] = np.random.default_rng(0).integers(0, 256, (10, 64))
    b = np.full((64, 32), -128, np.int8)
    b[::2] = np.random.default_rng(1).integers(-128, 128, (32, 32))
    mod = relax.transform.LegalizeOps()(tvm.IRModule({"main": _matmul("uint8", 28, 64, 32)}))
    (prim,) = (f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc))
    outcome = schedule_prim_func(prim.with_attr("global_symbol", "main"), "main", target)
    assert dict(outcome.rules) == {"matmul": rule}
    lib = tvm.compile(outcome.schedule.mod, target)
    assert instruction in lib.mod.inspect_source("asm")
    out = tvm.runtime.empty((28, 32), "int32")
    lib(tvm.runtime.tensor(a), tvm.runtime.tensor(b), out)
    np.testing.assert_array_equal(out.numpy(), a.astype(np.int64) @ b.astype(np.int64))


@pytest.mark.parametrize(
    ("mcpu", "rule", "instruction"),
    [
        ("cascadelake", "vnni_gemm", "vpdpbusd"),
        ("core-avx2", "pmaddubs_gemm", "vpmaddubsw"),
        ("nehalem", "pmaddubs_gemm", "pmaddubsw"),
    ],
)
def test_image_rows_no_register_tile_divides_keep_the_fast_instruction(mcpu, rule, instruction):
    # 11 pixels a row (a prime): no tile of the table divides it; the whole row is the tile.
    target = tvm.target.Target({"kind": "llvm", "mcpu": mcpu})
    wanted, host = target_isa(target), target_isa(TARGET)
    if host.dot_bits < wanted.dot_bits or host.madd_bits < wanted.madd_bits:
        pytest.skip(f"the host CPU cannot run {mcpu} code")
    func = _conv("uint8", 1, 8, 11, 3, 1, 32)
    x, w = _arrays(4, "uint8", (1, 11, 11, 8), (32, 3, 3, 8))
    mod = relax.transform.LegalizeOps(MODULE_LEGALIZATIONS)(tvm.IRModule({"main": func}))
    (prim,) = (f for f in mod.functions.values() if isinstance(f, tirx.PrimFunc))
    outcome = schedule_prim_func(prim.with_attr("global_symbol", "main"), "main", target)
    assert dict(outcome.rules)["conv2d_nhwc"] == rule
    lib = tvm.compile(outcome.schedule.mod, target)
    assert instruction in lib.mod.inspect_source("asm")
    out = tvm.runtime.empty((1, 11, 11, 32), "int32")
    lib(tvm.runtime.tensor(x), tvm.runtime.tensor(w), out)
    np.testing.assert_array_equal(out.numpy(), _numpy_conv(x, w, 1))


@pytest.mark.skipif(not VNNI, reason="the host CPU has no VNNI (avx512_vnni / avx_vnni)")
@pytest.mark.parametrize("data", ["uint8", "int8"])
def test_module_builds_run_int8_convolutions_on_vpdpbusd_with_weights_packed_at_build(data):
    # Constant weights: their packing and (for int8 data) the shift's weight sums are folded
    # into constants at build time; the kernels then hold vpdpbusd.
    func = _conv(data, 1, 16, 10, 3, 1, 32)
    x, w = _arrays(3, data, (1, 10, 10, 16), (32, 3, 3, 16))
    mod = relax.transform.BindParams("main", {"w": tvm.runtime.tensor(w)})(
        tvm.IRModule({"main": func})
    )
    lowered = relax_pipeline(TARGET)(mod)
    calls = [
        str(getattr(f, "attrs", {}).get("global_symbol", gv.name_hint))
        for gv, f in lowered.functions.items()
        if isinstance(f, tirx.PrimFunc)
    ]
    assert not any("weight_prepack" in name or name.startswith("sum") for name in calls), calls
    executable = tvm.compile(mod, TARGET, relax_pipeline=relax_pipeline(TARGET))
    assert "vpdpbusd" in executable.mod.imports[0].inspect_source("asm")
    vm = relax.VirtualMachine(executable, tvm.cpu())
    out = vm["main"](tvm.runtime.tensor(x)).numpy()
    np.testing.assert_array_equal(out, _numpy_conv(x, w, 1))


def test_a_requantized_int8_conv_matches_the_default_pipeline_bit_for_bit():
    # What a QNN conv lowers to: int8 conv into int32, bias, fixed-point multiply, shift, clip,
    # cast back to int8; weights and bias constant.
    def body(bb: Any, x: Any, w: Any, b: Any) -> Any:
        conv = bb.emit(R.nn.conv2d(x, w, padding=[1, 1], data_layout="NHWC",
                                   kernel_layout="OHWI", out_dtype="int32"))  # fmt: skip
        scaled = bb.emit(R.multiply(R.astype(R.add(conv, b), "int64"),
                                    relax.const(1518500250, "int64")))  # fmt: skip
        shifted = bb.emit(R.right_shift(scaled, relax.const(38, "int64")))
        return R.astype(R.clip(shifted, -128, 127), "int8")

    shapes = [("x", (1, 14, 14, 32), "int8"), ("w", (64, 3, 3, 32), "int8"), ("b", (64,), "int32")]
    func = build("main", shapes, body)
    x, w = _arrays(5, "int8", (1, 14, 14, 32), (64, 3, 3, 32))
    b = np.random.default_rng(5).integers(-1000, 1000, 64).astype("int32")
    mod = relax.transform.BindParams(
        "main", {"w": tvm.runtime.tensor(w), "b": tvm.runtime.tensor(b)}
    )(tvm.IRModule({"main": func}))
    kernels = [gv.name_hint for gv in relax_pipeline(TARGET)(mod).get_global_vars()]
    # The int8 data's shift leaves the requantize epilogue in the conv's kernel (per tile); the
    # model route spells the clip as minimum/maximum (pipeline/model/raise_calls.py).
    assert any(
        "conv2d" in name and "right_shift" in name and "maximum" in name for name in kernels
    ), kernels
    shim = tvm.compile(mod, TARGET, relax_pipeline=relax_pipeline(TARGET))
    out = relax.VirtualMachine(shim, tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()
    plain = relax.VirtualMachine(tvm.compile(mod, TARGET), tvm.cpu())["main"]
    np.testing.assert_array_equal(out, plain(tvm.runtime.tensor(x)).numpy())
    assert len(np.unique(out)) > 100  # the values spread over the int8 range, not all clipped
