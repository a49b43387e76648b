"""Whole models through ``relay.build`` + ``GraphModule`` match PyTorch to 1e-4.

The benchmark's models (``bench/models.py``: ResNet-18, MobileNetV2, a 2-layer transformer
encoder, random weights) are exported to ONNX in memory and imported with TVM's Relax ONNX
frontend, as ``bench/run.py`` does. The default suite runs each architecture at a reduced width
and input size (seconds); the full-size models run under the ``models`` marker, which the
default run deselects (``pytest -m models`` runs them: ~1 minute on 2 cores).

The partitioned build of ``relay.testing``'s ResNet-18 (ImageNet size, its batch norms folded
into the convolutions, every conv2d offloaded to the C-source codegen of
``tests/_byoc_codegen.py``) matches the logits of its unpartitioned build, under the same
marker (~15 s on 2 cores; it needs no torch, but lives here, where the models run).

torch, onnx and onnxruntime are test extras: without them these tests are skipped.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")

BENCH_MODELS = Path(__file__).resolve().parents[2] / "bench" / "models.py"


def _models() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_models", BENCH_MODELS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


models = _models()

# name -> (builder, input shape): reduced widths and inputs for the default suite.
SMALL: dict[str, tuple[Any, tuple[int, ...]]] = {
    "resnet18_w16_64px": (lambda: models.resnet18(width=16), (1, 3, 64, 64)),
    "mobilenet_v2_w035_64px": (lambda: models.mobilenet_v2(width=0.35), (1, 3, 64, 64)),
    "encoder_1x_seq32_d64": (lambda: models.encoder(layers=1, d_model=64, heads=2), (1, 32, 64)),
}


def _relay_build_output(net: Any, x: np.ndarray) -> np.ndarray:
    import tvm

    from compile_engine_compat import relay
    from compile_engine_compat.tvm_legacy.graph_executor import GraphModule

    data = models.onnx_bytes(net, x)
    mod, params = models.relax_module(data, x.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = relay.build(mod, target="llvm", params=params)
        module = GraphModule(lib["default"](tvm.cpu()))
    module.set_input("input", x)
    module.run()
    return np.asarray(module.get_output(0).numpy())


def _check(net: Any, x: np.ndarray) -> None:
    import torch

    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(_relay_build_output(net, x), expected, rtol=1e-4, atol=1e-4)


def _seeded(build: Any) -> Any:
    import torch

    torch.manual_seed(0)
    return build()


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_models_match_pytorch(name):
    build, shape = SMALL[name]
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    _check(_seeded(build), x)


@pytest.mark.models
@pytest.mark.slow
@pytest.mark.parametrize("model", models.MODELS, ids=lambda m: m.name.split(" ")[0])
def test_benchmark_models_match_pytorch(model):
    _check(model.make(), model.example())


@pytest.mark.models
@pytest.mark.slow
def test_the_resnet50_architecture_matches_pytorch():
    x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype("float32")
    _check(_seeded(lambda: models.resnet50(width=8)), x)


def test_gflop_counts_two_per_multiply_add_of_convolutions_and_matrix_products():
    import torch

    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Flatten(), torch.nn.Linear(8 * 8 * 8, 10)
    ).eval()
    x = np.zeros((2, 3, 8, 8), dtype="float32")
    expected = 2 * (2 * 8 * 8 * 8 * 3 * 3 * 3) + 2 * (2 * 10 * 8 * 8 * 8)
    assert models.gflop(models.onnx_bytes(net, x)) * 1e9 == pytest.approx(expected)


def _fold_batch_norms(relay: Any, func: Any) -> Any:
    """Each conv2d(x, w) -> batch_norm(...)[0] as bias_add(conv2d(x, w * scale), shift), as a
    vendor folds them (constants computed by NumPy; the weights and statistics bound)."""
    from tvm.relay.dataflow_pattern import (
        DFPatternCallback,
        is_constant,
        is_op,
        is_tuple_get_item,
        rewrite,
        wildcard,
    )

    class FoldBatchNorm(DFPatternCallback):
        def __init__(self) -> None:
            super().__init__(require_type=True)
            self.data, self.weight = wildcard(), is_constant()
            self.conv = is_op("nn.conv2d")(self.data, self.weight)
            self.stats = [is_constant() for _ in range(4)]  # gamma, beta, mean, var
            self.norm = is_op("nn.batch_norm")(self.conv, *self.stats)
            self.pattern = is_tuple_get_item(self.norm, 0)

        def callback(self, pre: Any, post: Any, node_map: Any) -> Any:
            conv, norm = node_map[self.conv][0], node_map[self.norm][0]
            gamma, beta, mean, var = (node_map[s][0].data.numpy() for s in self.stats)
            assert int(norm.attrs.axis) == 1 and str(conv.attrs.kernel_layout) == "OIHW"
            scale = 1 / np.sqrt(var + float(norm.attrs.epsilon))
            scale = scale * gamma if norm.attrs.scale else scale
            shift = beta - mean * scale if norm.attrs.center else -mean * scale
            weight = node_map[self.weight][0].data.numpy() * scale[:, None, None, None]
            a = conv.attrs
            folded = relay.nn.conv2d(
                node_map[self.data][0],
                relay.const(weight.astype("float32")),
                strides=a.strides,
                padding=a.padding,
                channels=a.channels,
                kernel_size=a.kernel_size,
            )
            return relay.nn.bias_add(folded, relay.const(shift.astype("float32")))

    return rewrite(FoldBatchNorm(), func)


def _graph_module_output(relay: Any, mod: Any, params: Any, data: np.ndarray) -> np.ndarray:
    import tvm
    from tvm.contrib import graph_executor

    lib = relay.build(mod, target="llvm", params=params)
    module = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    module.set_input("data", data)
    module.run()
    return np.asarray(module.get_output(0).numpy())


def _ops_named(func: Any, name: str) -> list[Any]:
    from compile_engine_compat.relay.analysis.annotated_regions import region_graph_order

    return [
        n
        for n in region_graph_order(func.body)
        if getattr(n, "op", None) is not None and getattr(n.op, "name", None) == name
    ]


@pytest.mark.models
@pytest.mark.slow
def test_partitioned_resnet18_matches_the_unpartitioned_build(installed_alias):
    import tvm
    from _byoc_codegen import composite_calls, convc_pattern_table, register_convc
    from tvm import relay
    from tvm.relay import transform

    from compile_engine_compat.relay._impl.origin import relay_of

    start = time.perf_counter()
    mod, params = relay.testing.resnet.get_workload(
        num_layers=18, batch_size=1, image_shape=(3, 224, 224)
    )
    softmax = relay_of(mod).body  # random weights give near-uniform probabilities: compare logits
    assert softmax.op.name == "nn.softmax"
    mod = tvm.IRModule.from_expr(relay.Function(relay_of(mod).params, softmax.args[0]))
    rng = np.random.default_rng(0)
    for name, value in params.items():  # statistics a trained network has, not the 1s and 0s
        shape = value.shape
        if name.endswith(("_gamma", "_moving_var")):
            params[name] = tvm.runtime.tensor(rng.uniform(0.5, 1.5, shape).astype("float32"))
        elif name.endswith(("_beta", "_moving_mean")):
            params[name] = tvm.runtime.tensor(rng.normal(0, 0.2, shape).astype("float32"))
    data = rng.uniform(-1, 1, (1, 3, 224, 224)).astype("float32")
    reference = _graph_module_output(relay, mod, params, data)

    register_convc()
    bound = relay.build_module.bind_params_by_name(mod["main"], params)
    partitioned = tvm.IRModule.from_expr(_fold_batch_norms(relay, bound))
    partitioned = transform.MergeComposite(convc_pattern_table(with_bare_conv=True))(partitioned)
    partitioned = transform.AnnotateTarget(["convc"])(partitioned)
    partitioned = transform.MergeCompilerRegions()(partitioned)
    partitioned = transform.PartitionGraph(bind_constants=False)(partitioned)
    names = [g.name_hint for g in partitioned.get_global_vars() if g.name_hint != "main"]
    stored = {g.name_hint: f for g, f in partitioned.functions.items()}  # the Relax forms
    offloaded = [c for g in names for c in composite_calls(relay_of(stored[g]).body)]
    convs = _ops_named(relay_of(mod), "nn.conv2d")
    # 21 conv2d (the stem, 2 per unit, each stage's 1x1 shortcut): every one went to the codegen,
    # in 13 partitions (the stem; each unit's pair, merged; the shortcuts).
    assert len(convs) == len(offloaded) == 21 and len(names) == 13
    assert not _ops_named(relay_of(partitioned), "nn.conv2d")
    assert all(relay_of(stored[g]).attrs["Compiler"] == "convc" for g in names)
    output = _graph_module_output(relay, partitioned, None, data)
    scale = float(np.abs(reference).max())
    np.testing.assert_allclose(output, reference, rtol=0, atol=1e-3 * scale)
    print(
        f"ResNet-18: {len(names)} partitions, {len(offloaded)} composites; max abs difference "
        f"{np.abs(output - reference).max():.3g} (output scale {scale:.3g}); "
        f"{time.perf_counter() - start:.1f} s"
    )
