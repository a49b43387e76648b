"""Whole models through ``relay.build`` + ``GraphModule`` match PyTorch to 1e-4.

The benchmark's models (``bench/models.py``: ResNet-18, MobileNetV2, a 2-layer transformer
encoder, random weights) are exported to ONNX in memory and imported with TVM's Relax ONNX
frontend, as ``bench/run.py`` does. The default suite runs each architecture at a reduced width
and input size (seconds); the full-size models run under the ``models`` marker, which the
default run deselects (``pytest -m models`` runs them: ~1 minute on 2 cores).

torch, onnx and onnxruntime are test extras: without them these tests are skipped.
"""

from __future__ import annotations

import importlib.util
import sys
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
