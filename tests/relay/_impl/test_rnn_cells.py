"""``relay.frontend.common``'s recurrent cells against NumPy's RNN, GRU and LSTM (one build)."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from compile_engine_compat import relay
from compile_engine_compat.relay.frontend import common

B, F, H, T = 1, 2, 2, 2
RNG = np.random.default_rng(0)
XS = [RNG.standard_normal((B, F)).astype("float32") for _ in range(T)]
H0, C0 = (RNG.standard_normal((B, H)).astype("float32") for _ in range(2))
WI = RNG.standard_normal((4 * H, F)).astype("float32")
WH = RNG.standard_normal((4 * H, H)).astype("float32")
BI, BH = (RNG.standard_normal(4 * H).astype("float32") for _ in range(2))


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-v))


def _reference() -> list[np.ndarray]:
    h, c = H0, C0
    for x in XS:
        i, f, g, o = np.split(x @ WI.T + BI + h @ WH.T + BH, 4, axis=1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
    lstm = [h, c]
    grus = []
    whr, whz, whn = np.split(WH[: 3 * H], 3)
    bhr, bhz, bhn = np.split(BH[: 3 * H], 3)
    for linear_before_reset in (True, False):
        h = H0
        for x in XS:
            xr, xz, xn = np.split(x @ WI[: 3 * H].T + BI[: 3 * H], 3, axis=1)
            r, z = _sigmoid(xr + h @ whr.T + bhr), _sigmoid(xz + h @ whz.T + bhz)
            hn = r * (h @ whn.T + bhn) if linear_before_reset else (r * h) @ whn.T + bhn
            h = (1 - z) * np.tanh(xn + hn) + z * h
        grus.append(h)
    h = H0
    for x in XS:
        h = np.tanh(x @ WI[:H].T + BI[:H] + h @ WH[:H].T + BH[:H])
    return [*lstm, *grus, h]


def test_the_cells_compute_the_recurrences():
    c = relay.const
    xs = [relay.var(f"x{i}", shape=(B, F)) for i in range(T)]
    _, lstm_h, lstm_c = common.lstm_cell(xs, c(H0), c(C0), c(WI), c(WH), c(BI), c(BH))
    grus = [
        common.gru_cell(
            xs,
            c(H0),
            c(WI[: 3 * H]),
            c(WH[: 3 * H]),
            c(BI[: 3 * H]),
            c(BH[: 3 * H]),
            linear_before_reset=linear_before_reset,
        )[1]
        for linear_before_reset in (True, False)
    ]
    outputs, rnn_h = common.rnn_cell(xs, c(H0), c(WI[:H]), c(WH[:H]), c(BI[:H]), c(BH[:H]))
    assert len(outputs) == T
    func = relay.Function(xs, relay.Tuple([lstm_h, lstm_c, *grus, rnn_h]))
    got = relay.create_executor("vm", mod=tvm.IRModule.from_expr(func)).evaluate()(*XS)
    for value, want in zip(got, _reference(), strict=True):
        np.testing.assert_allclose(value.numpy(), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(relay.UnsupportedRelayError, match="sequence_lens"):
        common.gru_cell(xs, c(H0), c(WI), c(WH), sequence_lens=c(np.ones(B, "int32")))
