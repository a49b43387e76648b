"""``relay.frontend.common``'s recurrent cells: ``rnn_cell``, ``gru_cell``, ``lstm_cell``.

Each unrolls a list of ``(batch, features)`` steps into Relay ops (``nn.dense``, ``split``, the
activations), as TVM 0.19's frontends shared them: the weights stack the gates on axis 0 (GRU:
reset, update, new; LSTM: input, forget, cell, output), and the result is the list of outputs
with the final state(s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from compile_engine_compat.relay._impl.registry import UnsupportedRelayError

from .. import op as _op

__all__ = ["gru_cell", "lstm_cell", "rnn_cell"]


def _steps(input_seqs: Sequence[Any], backwards: bool) -> list[Any]:
    return list(reversed(input_seqs)) if backwards else list(input_seqs)


def _affine(x: Any, weight: Any, bias: Any) -> Any:
    out = _op.nn.dense(x, weight)
    return out if bias is None else _op.add(out, bias)


def rnn_cell(
    input_seqs: Sequence[Any],
    hidden_state: Any,
    w_inp: Any,
    w_hid: Any,
    b_inp: Any = None,
    b_hid: Any = None,
    backwards: bool = False,
    act: Callable[[Any], Any] = _op.tanh,
) -> tuple[list[Any], Any]:
    """``h = act(x W_inp^T + b_inp + h W_hid^T + b_hid)`` per step: (outputs, last ``h``)."""
    both = b_inp is not None and b_hid is not None
    outputs = []
    for x_t in _steps(input_seqs, backwards):
        step = _op.add(
            _affine(x_t, w_inp, b_inp if both else None),
            _affine(hidden_state, w_hid, b_hid if both else None),
        )
        hidden_state = act(step)
        outputs.append(hidden_state)
    return outputs, hidden_state


def gru_cell(
    input_seqs: Sequence[Any],
    hidden_state: Any,
    w_inp: Any,
    w_hid: Any,
    b_inp: Any = None,
    b_hid: Any = None,
    rz_act: Callable[[Any], Any] = _op.sigmoid,
    n_act: Callable[[Any], Any] = _op.tanh,
    backwards: bool = False,
    linear_before_reset: bool = True,
    sequence_lens: Any = None,
) -> tuple[list[Any], Any]:
    """The GRU: ``r, z = rz_act(...)``, ``n = n_act(x_n + r * (h W_hn^T + b_hn))`` (with
    ``linear_before_reset``; else ``n_act(x_n + (r * h) W_hn^T + b_hn)``),
    ``h = (1 - z) * n + z * h``: (outputs, last ``h``)."""
    if sequence_lens is not None:
        raise UnsupportedRelayError(
            "gru_cell(sequence_lens=...) is not served: pad the batch to one length, or import "
            "the model with tvm.relax.frontend"
        )
    w_hr, w_hz, w_hn = _op.split(w_hid, 3, axis=0)
    b_hr, b_hz, b_hn = _op.split(b_hid, 3, axis=0) if b_hid is not None else (None,) * 3
    outputs = []
    for x_t in _steps(input_seqs, backwards):
        x_r, x_z, x_n = _op.split(_affine(x_t, w_inp, b_inp), 3, axis=1)
        r = rz_act(_op.add(x_r, _affine(hidden_state, w_hr, b_hr)))
        z = rz_act(_op.add(x_z, _affine(hidden_state, w_hz, b_hz)))
        if linear_before_reset:
            hidden_n = _op.multiply(r, _affine(hidden_state, w_hn, b_hn))
        else:
            hidden_n = _affine(_op.multiply(r, hidden_state), w_hn, b_hn)
        n = n_act(_op.add(x_n, hidden_n))
        keep = _op.multiply(z, hidden_state)
        hidden_state = _op.add(_op.multiply(_op.subtract(_op.ones_like(z), z), n), keep)
        outputs.append(hidden_state)
    return outputs, hidden_state


def lstm_cell(
    input_seqs: Sequence[Any],
    hidden_state: Any,
    cell_state: Any,
    w_inp: Any,
    w_hid: Any,
    b_inp: Any = None,
    b_hid: Any = None,
    proj: Any = None,
    p_i: Any = None,
    p_f: Any = None,
    p_o: Any = None,
    f_act: Callable[[Any], Any] = _op.sigmoid,
    g_act: Callable[[Any], Any] = _op.tanh,
    h_act: Callable[[Any], Any] = _op.tanh,
    backwards: bool = False,
) -> tuple[list[Any], Any, Any]:
    """The LSTM, with optional peepholes (``p_i``, ``p_f``, ``p_o``) and projection:
    (outputs, last ``h``, last ``c``)."""

    def peep(gate: Any, p: Any, c: Any) -> Any:
        return gate if p is None else _op.add(gate, _op.multiply(p, c))

    outputs = []
    for x_t in _steps(input_seqs, backwards):
        gates = _op.add(_affine(x_t, w_inp, b_inp), _affine(hidden_state, w_hid, b_hid))
        g_i, g_f, g_c, g_o = _op.split(gates, 4, axis=1)
        i = f_act(peep(g_i, p_i, cell_state))
        f = f_act(peep(g_f, p_f, cell_state))
        cell_state = _op.add(_op.multiply(f, cell_state), _op.multiply(i, g_act(g_c)))
        o = f_act(peep(g_o, p_o, cell_state))
        hidden_state = _op.multiply(o, h_act(cell_state))
        if proj is not None:
            hidden_state = _op.nn.dense(hidden_state, proj)
        outputs.append(hidden_state)
    return outputs, hidden_state, cell_state
