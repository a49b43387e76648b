"""``relay.testing.lstm``: an LSTM unrolled over ``iterations`` steps (TVM <=0.19).

Relay's network called one cell function per step through ``let`` bindings, and gave every
step an input variable of its own, all named ``data``. Here the cells are inlined into one
straight-line graph (the same arithmetic), and the steps share one input ``data`` of shape
``(batch_size, num_hidden)``: a graph module has one input of a name.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis import free_vars
from ..expr import Expr, var
from ..function import Function
from . import layers
from .init import create_workload

__all__ = ["get_net", "get_workload", "lstm_cell"]


def lstm_cell(
    inputs: Expr, states: tuple[Expr, Expr], num_hidden: int, name: str = ""
) -> tuple[Expr, tuple[Expr, Expr]]:
    """One LSTM step: ``(next_h, (next_h, next_c))`` from ``inputs`` and ``(h, c)``.

    The weights are the variables ``<name>i2h_weight``/``_bias`` and ``<name>h2h_weight``/
    ``_bias`` (``4 * num_hidden`` units each, gates in the order in, forget, transform, out).
    """
    i2h = layers.dense_add_bias(inputs, units=num_hidden * 4, name=f"{name}i2h")
    h2h = layers.dense_add_bias(states[0], units=num_hidden * 4, name=f"{name}h2h")
    gates = op.split(op.add(i2h, h2h), indices_or_sections=4, axis=1)
    in_gate = op.sigmoid(gates[0])
    forget_gate = op.sigmoid(gates[1])
    in_transform = op.tanh(gates[2])
    out_gate = op.sigmoid(gates[3])
    next_c = op.add(op.multiply(forget_gate, states[1]), op.multiply(in_gate, in_transform))
    next_h = op.multiply(out_gate, op.tanh(next_c))
    return next_h, (next_h, next_c)


def get_net(
    iterations: int, num_hidden: int, batch_size: int = 1, dtype: str = "float32"
) -> Function:
    """The unrolled LSTM as a Relay function of ``data`` and the weights of every step; it
    returns the last step's output."""
    if iterations < 1:
        raise ValueError(f"an LSTM has at least one iteration, got {iterations}")
    data = var("data", shape=(batch_size, num_hidden), dtype=dtype)
    zeros = op.zeros((batch_size, num_hidden), dtype)
    states: tuple[Expr, Expr] = (zeros, zeros)
    out: Expr = data
    for step in range(iterations):
        out, states = lstm_cell(data, states, num_hidden, name=f"lstm_{step}_")
    return Function(free_vars(out), out)


def get_workload(
    iterations: int, num_hidden: int, batch_size: int = 1, dtype: str = "float32"
) -> tuple[Any, dict[str, Any]]:
    """``(mod, params)`` of :func:`get_net`, weights initialized by ``create_workload``."""
    return create_workload(get_net(iterations, num_hidden, batch_size, dtype))
