"""Quantized ONNX through relay.frontend.from_onnx -> relay.build -> GraphModule, against
onnxruntime on the same model: QLinear*/QGemm/*Integer ops in one small graph, and a tiny QDQ
network folded into integer ops (one build each, shared by the module)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import tvm

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from compile_engine_compat import relay  # noqa: E402
from compile_engine_compat.relay.frontend.onnx_qdq import fold_qdq  # noqa: E402
from compile_engine_compat.tvm_legacy import graph_executor  # noqa: E402

RNG = np.random.default_rng(7)
X_SHAPE = (1, 4, 6, 6)
U8 = TensorProto.UINT8


def _init(name: str, value: Any, dtype: str) -> Any:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _ops_model() -> Any:
    """Every op in one graph: x (uint8 NCHW) and a (uint8 [3, 8]) in, one output per op."""
    w = RNG.integers(-100, 100, (5, 4, 3, 3)).astype("int8")
    inits = [
        _init("xs", 0.05, "float32"), _init("xz", 120, "uint8"),
        _init("w", w, "int8"), _init("ws", RNG.uniform(0.01, 0.03, 5), "float32"),
        _init("wz", np.zeros(5), "int8"), _init("ys", 0.2, "float32"), _init("yz", 100, "uint8"),
        _init("b", RNG.integers(-500, 500, 5), "int32"),
        _init("m", RNG.integers(-128, 127, (8, 6)), "int8"), _init("ms", 0.02, "float32"),
        _init("mz", 3, "int8"), _init("as", 0.1, "float32"), _init("az", 7, "uint8"),
        _init("wu", RNG.integers(0, 255, (5, 4, 1, 1)), "uint8"), _init("wuz", 128, "uint8"),
        _init("s2", 0.08, "float32"), _init("z2", 90, "uint8"),
    ]  # fmt: skip
    ms = "com.microsoft"
    nodes = [
        helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                         ["conv"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("QLinearConv", ["x", "xs", "xz", "wu", "ws", "wuz", "ys", "yz"],
                         ["conv_u8_weight"]),
        helper.make_node("ConvInteger", ["x", "wu", "xz", "wuz"], ["conv_integer"],
                         pads=[0, 1, 0, 1]),
        helper.make_node("QLinearMatMul", ["a", "as", "az", "m", "ms", "mz", "ys", "yz"],
                         ["matmul"]),
        helper.make_node("MatMulInteger", ["a", "m", "az", "mz"], ["matmul_integer"]),
        helper.make_node("QGemm", ["a", "as", "az", "m", "ms", "mz", "", "ys", "yz"], ["qgemm"],
                         domain=ms),
        helper.make_node("QLinearAdd", ["x", "xs", "xz", "x", "s2", "z2", "ys", "yz"], ["add"],
                         domain=ms),
        helper.make_node("QLinearMul", ["x", "xs", "xz", "x", "s2", "z2", "ys", "yz"], ["mul"],
                         domain=ms),
        helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "s2", "z2"], ["sigmoid"], domain=ms),
        helper.make_node("QLinearLeakyRelu", ["x", "xs", "xz", "s2", "z2"], ["leaky_relu"],
                         domain=ms, alpha=0.1),
        helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ms", "yz"], ["softmax"],
                         domain=ms, axis=-1, opset=13),
        helper.make_node("QLinearConcat", ["ys", "yz", "x", "xs", "xz", "x", "s2", "z2"],
                         ["concat"], domain=ms, axis=1),
        helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "s2", "z2"], ["gap"],
                         domain=ms),
        helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "s2", "z2"], ["avg_pool"],
                         domain=ms, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    ]  # fmt: skip
    outputs = [n.output[0] for n in nodes]
    graph = helper.make_graph(
        nodes,
        "quantized_ops",
        [helper.make_tensor_value_info("x", U8, X_SHAPE),
         helper.make_tensor_value_info("a", U8, [3, 8])],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        inits,
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)]
    )
    return model, outputs


def _qdq_net() -> Any:
    """A float Conv -> Relu -> Conv -> Add -> GlobalAveragePool -> Flatten -> Gemm net,
    quantized by onnxruntime's quantize_static (QDQ, per-channel int8 weights)."""
    import tempfile
    from pathlib import Path

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

    f32 = TensorProto.FLOAT
    inits = [
        _init("w1", RNG.normal(0, 0.3, (8, 4, 3, 3)), "float32"),
        _init("b1", RNG.normal(0, 0.1, 8), "float32"),
        _init("w2", RNG.normal(0, 0.3, (8, 8, 3, 3)), "float32"),
        _init("fc", RNG.normal(0, 0.3, (10, 8)), "float32"),
        _init("fcb", RNG.normal(0, 0.1, 10), "float32"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"]),
        helper.make_node("GlobalAveragePool", ["s"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "qdq_net", [helper.make_tensor_value_info("x", f32, X_SHAPE)],
        [helper.make_tensor_value_info("y", f32, [1, 10])], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = [{"x": RNG.standard_normal(X_SHAPE).astype("float32")} for _ in range(4)]

        def get_next(self) -> Any:
            return self.left.pop() if self.left else None

    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder, "f.onnx"), Path(folder, "q.onnx")
        onnx.save(model, source)
        quantize_static(str(source), str(target), Reader(), quant_format=QuantFormat.QDQ,
                        per_channel=True)  # fmt: skip
        return onnx.load(str(target))


def _run(model: Any, inputs: dict[str, np.ndarray], count: int) -> list[np.ndarray]:
    mod, params = relay.frontend.from_onnx(model, {k: v.shape for k, v in inputs.items()})
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input(**inputs)
    module.run()
    return [module.get_output(i).numpy() for i in range(count)]


def _onnxruntime(model: Any, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(session.run(None, inputs))


@pytest.fixture(scope="module")
def ops_outputs() -> tuple[list[str], list[np.ndarray], list[np.ndarray]]:
    model, names = _ops_model()
    inputs = {
        "x": RNG.integers(0, 255, X_SHAPE).astype("uint8"),
        "a": RNG.integers(0, 255, (3, 8)).astype("uint8"),
    }
    return names, _run(model, inputs, len(names)), _onnxruntime(model, inputs)


#: The ops computed in integers end to end: onnxruntime's exact output.
EXACT = {"conv", "conv_u8_weight", "conv_integer", "matmul", "matmul_integer", "qgemm"}


@pytest.mark.parametrize(
    "name",
    ["conv", "conv_u8_weight", "conv_integer", "matmul", "matmul_integer", "qgemm", "add", "mul",
     "sigmoid", "leaky_relu", "softmax", "concat", "gap", "avg_pool"],
)  # fmt: skip
def test_each_quantized_op_matches_onnxruntime(name: str, ops_outputs: Any) -> None:
    names, ours, theirs = ops_outputs
    got, want = ours[names.index(name)], theirs[names.index(name)]
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype("int64") - want.astype("int64"))
    # Integer ops: exact. Through float (dequantize, op, quantize): onnxruntime's own QDQ
    # tolerance, one quantum (its lookup tables and fused kernels round at other points).
    assert diff.max() <= (0 if name in EXACT else 1), name
    assert np.unique(want).size > 2  # the comparison sees real values, not a saturated block


@pytest.fixture(scope="module")
def qdq_net() -> tuple[Any, tvm.IRModule]:
    model = _qdq_net()
    mod, _ = relay.frontend.from_onnx(model, {"x": X_SHAPE})
    return model, mod


def test_a_qdq_net_folds_into_integer_convolutions_and_matmul(qdq_net: Any) -> None:
    model, mod = qdq_net
    folded = [n.op_type for n in fold_qdq(model.graph).node]
    assert folded.count("QLinearConv") == 2 and "QGemm" in folded and "Conv" not in folded
    text = mod.script()
    # The VNNI form: 8-bit data and weight, int32 accumulation.
    assert text.count('out_dtype="int32"') >= 3
    assert "R.nn.conv2d(x_quantized" in text or "R.nn.conv2d(lv" in text
    assert "float32" not in text.split("R.nn.conv2d(")[1].split(")")[0]


def test_a_qdq_net_matches_onnxruntime_to_one_quantum(qdq_net: Any) -> None:
    model, _ = qdq_net
    x = RNG.standard_normal(X_SHAPE).astype("float32")
    (ours,) = _run(model, {"x": x}, 1)
    (theirs,) = _onnxruntime(model, {"x": x})
    # The Gemm's output is float (no Q after it): one quantum of its input, times its weights.
    quantum = max(float(np.abs(theirs).max()) / 127, 1e-6)
    np.testing.assert_allclose(ours, theirs, atol=quantum)
    assert ours.argmax() == theirs.argmax()


def test_the_model_given_is_not_changed_and_a_float_model_takes_tvms_route(qdq_net: Any) -> None:
    model, _ = qdq_net
    before = model.SerializeToString()
    fold_qdq(model.graph)
    assert model.SerializeToString() == before
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "plain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )  # fmt: skip
    assert fold_qdq(graph) is graph


def test_a_padded_conv_pads_with_the_zero_point_and_corrects_by_one_term_per_channel() -> None:
    # Not a full-size int32 border correction read by every run: the zero-point terms of the
    # border equal the others once the input is padded with its zero point (120).
    model, _ = _ops_model()
    mod, _ = relay.frontend.from_onnx(model, {"x": X_SHAPE, "a": (3, 8)})
    calls: list[Any] = []
    tvm.relax.analysis.post_order_visit(
        mod["main"], lambda n: calls.append(n) if isinstance(n, tvm.relax.Call) else None
    )
    pads = [c for c in calls if getattr(c.op, "name", "") == "relax.nn.pad"]
    assert [float(c.attrs.pad_value) for c in pads] == [120.0, 120.0]  # conv, conv_integer
    terms = [
        tuple(int(d) for d in arg.value.shape)
        for c in calls
        if getattr(c.op, "name", "") in ("relax.add", "relax.subtract")
        for arg in c.args
        if isinstance(arg, tvm.ir.GenericConst) and str(arg.value.dtype) == "int32"
    ]
    conv_terms = [shape for shape in terms if len(shape) == 4]  # the matmuls' are [1, 6]
    assert len(conv_terms) == 3 and set(conv_terms) == {(1, 5, 1, 1)}, terms


def test_a_quantized_conv_without_static_shape_is_refused_naming_the_problem() -> None:
    from compile_engine_compat.relay.frontend.onnx_integer import QuantizedOpError

    model, _ = _ops_model()
    del model.graph.node[1:]
    del model.graph.output[:]
    model.graph.output.append(helper.make_empty_tensor_value_info("conv"))
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("x", U8, [1, 4, "h", "w"]))
    with pytest.raises(QuantizedOpError, match="static input shape"):
        relay.frontend.from_onnx(model, {"a": (3, 8)})


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize(("index", "convs"), [(0, 20), (1, 52)], ids=["resnet18", "mobilenet_v2"])
def test_int8_models_from_quantize_static_match_onnxruntime(index: int, convs: int) -> None:
    # MobileNetV2: its depthwise convolutions, padded with their zero points, on the depthwise
    # rule; its residual adds as QLinearAdd.
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "bench" / "models.py"
    spec = importlib.util.spec_from_file_location("bench_models_int8", path)
    assert spec is not None and spec.loader is not None
    models = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = models  # its dataclasses look their module up there
    spec.loader.exec_module(models)
    model = models.MODELS[index]
    quantized = onnx.load_from_string(models.quantized_onnx(model))
    folded = [n.op_type for n in fold_qdq(quantized.graph).node]
    assert folded.count("QLinearConv") == convs and "Conv" not in folded
    inputs = [model.example(seed) for seed in range(4)]
    mod, params = relay.frontend.from_onnx(quantized, {"input": model.input_shape})
    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    for x in inputs:
        module.set_input("input", x)
        module.run()
        ours = module.get_output(0).numpy()
        (theirs,) = _onnxruntime(quantized, {"input": x})
        assert ours.argmax() == theirs.argmax()
        # The logits are the float Gemm of int8 features: a quantum of a feature moves them by
        # at most its scale times the weights (seen: < 1% of the largest logit).
        np.testing.assert_allclose(ours, theirs, atol=0.02 * float(np.abs(theirs).max()))


def test_an_op_neither_importer_knows_is_refused_naming_it() -> None:
    model, _ = _ops_model()
    del model.graph.node[1:]
    model.graph.node.append(helper.make_node("NoSuchOp", ["conv"], ["other"]))
    del model.graph.output[:]
    model.graph.output.append(helper.make_empty_tensor_value_info("other"))
    with pytest.raises(tvm.error.OpNotImplemented, match="NoSuchOp"):
        relay.frontend.from_onnx(model, {"x": X_SHAPE, "a": (3, 8)})
