"""relay.frontend.pytorch_symbolics: the aten ops torch's ONNX exporter lacks, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

pytest.importorskip("torch")
pytest.importorskip("onnx")

import torch

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend.pytorch_symbolics import SYMBOLICS
from compile_engine_compat.tvm_legacy import graph_executor


class _Concat(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.concat([x, x * 2], 1)


class _Ops(torch.nn.Module):
    """Every op of SYMBOLICS in one graph (one build)."""

    def __init__(self) -> None:
        super().__init__()
        self.concat = _Concat()  # torch.concat stays aten::concat only in a nested module

    def forward(self, x, y, a, b, p, q):
        return (
            torch.cosh(x),
            torch.sinh(x),
            torch.addcdiv(x, 0.5, y, y + 2),
            torch.nn.functional.l1_loss(x, y),
            torch.nn.functional.l1_loss(x, y, reduction="sum"),
            torch.nn.functional.l1_loss(x, y, reduction="none"),
            self.concat(x),
            torch.bitwise_xor(a, b),
            torch.bitwise_not(a),
            a.clone().__ior__(b),
            a.clone().__iand__(b),
            a.clone().__ixor__(b),
            torch.bitwise_xor(p, q),
            torch.bitwise_not(p),
            torch.nn.functional.threshold(x, 0.25, 1.5),
            torch.nn.functional.softplus(x * 4, beta=1.5, threshold=2),
            torch.nn.functional.logsigmoid(x * 300),
            torch.trunc(x * 3),
        )


def _inputs() -> list[torch.Tensor]:
    rng = np.random.default_rng(3)
    x, y = (torch.from_numpy(rng.standard_normal((2, 3)).astype("float32")) for _ in "xy")
    a = torch.tensor([-1, -2, 3, 7], dtype=torch.int8)
    b = torch.tensor([1, 0, 3, 12], dtype=torch.int8)
    p = torch.tensor([True, True, False, False])
    q = torch.tensor([False, True, False, True])
    return [x, y, a, b, p, q]


def test_each_symbolic_matches_torch_and_is_unregistered_after(tmp_path):
    inputs = _inputs()
    traced = torch.jit.trace(_Ops().eval(), tuple(inputs))
    assert "aten::concat" in str(traced.inlined_graph)
    names = [f"i{index}" for index in range(len(inputs))]
    mod, params = relay.frontend.from_pytorch(
        traced, [(n, tuple(t.shape)) for n, t in zip(names, inputs)]
    )
    module = graph_executor.GraphModule(
        relay.build(mod, target="llvm", params=params)["default"](tvm.cpu())
    )
    for name, tensor in zip(names, inputs):
        module.set_input(name, tensor.numpy())
    module.run()
    with torch.no_grad():
        expected = _Ops()(*inputs)
    for index, want in enumerate(expected):
        got = module.get_output(index).numpy()
        assert got.dtype == want.numpy().dtype, index
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6, err_msg=str(index))
    # Unregistered after: torch's exporter refuses aten::cosh again.
    with pytest.raises(torch.onnx.errors.UnsupportedOperatorError, match="cosh"):
        torch.onnx.export(
            torch.jit.trace(torch.cosh, inputs[:1]),
            tuple(inputs[:1]),
            str(tmp_path / "cosh.onnx"),
            dynamo=False,
        )
    assert "aten::cosh" in SYMBOLICS


@pytest.mark.parametrize("shape", [(3, 6, 6, 6), (1, 3, 6, 6, 6)])
def test_max_pool3d_of_an_unbatched_or_batched_input_matches_torch(shape):
    # torch's own symbolic wrote the unbatched (C, D, H, W) pool as a MaxPool over N, C, H, W.
    pool = torch.nn.MaxPool3d(kernel_size=2, stride=2).eval()
    data = torch.from_numpy(np.random.default_rng(5).standard_normal(shape).astype("float32"))
    mod, params = relay.frontend.from_pytorch(torch.jit.trace(pool, data), [("x", shape)])
    module = graph_executor.GraphModule(
        relay.build(mod, target="llvm", params=params)["default"](tvm.cpu())
    )
    module.set_input("x", data.numpy())
    module.run()
    with torch.no_grad():
        np.testing.assert_allclose(module.get_output(0).numpy(), pool(data).numpy(), rtol=1e-6)
