"""ONNX's recurrent ops ``RNN``, ``LSTM`` and ``GRU``, which Relax's importer does not convert.

As TVM 0.19's Relay importer did, each is unrolled over the static sequence length: one step
of Relax ops per time step and direction, the input projection ``X W^T`` computed once for all
steps. The gates follow ONNX (LSTM: ``i, o, f, c``; GRU: ``z, r, h``), with the ``activations``
(and their ``activation_alpha``/``activation_beta``, consumed in order by the activations that
take them), ``direction`` (forward, reverse, bidirectional), ``layout`` (opset 14), LSTM's
peepholes and GRU's ``linear_before_reset``. ``sequence_lens`` masks the steps past each batch
entry's length: their outputs are zero and the state is held (a reverse direction starts at
the entry's last step), as onnxruntime computes; TVM 0.19 served it for GRU only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tvm import relax

__all__ = ["CONVERTERS", "RecurrentOpError"]

R = relax.op
Activation = Callable[[Any], Any]


class RecurrentOpError(ValueError):
    """An ONNX ``RNN``/``LSTM``/``GRU`` node the converter cannot serve (named in the message)."""


def _const(value: float, dtype: str) -> Any:
    return relax.const(value, dtype)


def _hard_sigmoid(alpha: float, beta: float, dtype: str) -> Activation:
    def act(x: Any) -> Any:
        line = R.add(R.multiply(x, _const(alpha, dtype)), _const(beta, dtype))
        return R.clip(line, 0.0, 1.0)

    return act


def _activation(name: str, alpha: float | None, beta: float | None, dtype: str) -> Activation:
    """ONNX's recurrent activation ``name`` (its defaults where ``alpha``/``beta`` are None)."""

    def given(value: float | None, default: float) -> Any:
        return _const(default if value is None else value, dtype)

    table: dict[str, Activation] = {
        "Sigmoid": R.sigmoid,
        "Tanh": R.tanh,
        "Relu": R.nn.relu,
        "Softsign": lambda x: R.divide(x, R.add(_const(1.0, dtype), R.abs(x))),
        "Softplus": lambda x: R.log(R.add(_const(1.0, dtype), R.exp(x))),
        "Affine": lambda x: R.add(R.multiply(x, given(alpha, 1.0)), given(beta, 0.0)),
        "LeakyRelu": lambda x: R.nn.leakyrelu(x, 0.01 if alpha is None else alpha),
        "ThresholdedRelu": lambda x: R.where(
            R.greater(x, given(alpha, 1.0)), x, _const(0.0, dtype)
        ),
        "ScaledTanh": lambda x: R.multiply(
            given(alpha, 1.0), R.tanh(R.multiply(x, given(beta, 1.0)))
        ),
        "HardSigmoid": _hard_sigmoid(
            0.2 if alpha is None else alpha, 0.5 if beta is None else beta, dtype
        ),
        "Elu": lambda x: R.where(
            R.greater(x, _const(0.0, dtype)),
            x,
            R.multiply(given(alpha, 1.0), R.subtract(R.exp(x), _const(1.0, dtype))),
        ),
    }
    if name not in table:
        raise RecurrentOpError(
            f"recurrent activation {name!r} is not an ONNX activation (known: {sorted(table)})"
        )
    return table[name]


_TAKES_ALPHA = {"Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu"}
_TAKES_BETA = {"Affine", "ScaledTanh", "HardSigmoid"}


def _activations(
    attrs: dict[str, Any], defaults: Sequence[str], directions: int, dtype: str
) -> list[list[Activation]]:
    """Per direction, the op's activations (``activations`` or the defaults)."""
    names = [_text(name) for name in attrs.get("activations", ())]
    per_direction = len(defaults)
    if not names:
        names = list(defaults) * directions
    if len(names) != per_direction * directions:
        raise RecurrentOpError(
            f"activations lists {len(names)} functions; the op takes {per_direction} per "
            f"direction, {directions} direction(s)"
        )
    alphas = list(_floats(attrs.get("activation_alpha", ())))
    betas = list(_floats(attrs.get("activation_beta", ())))
    acts = []
    for name in names:
        alpha = alphas.pop(0) if name in _TAKES_ALPHA and alphas else None
        beta = betas.pop(0) if name in _TAKES_BETA and betas else None
        acts.append(_activation(name, alpha, beta, dtype))
    return [acts[d * per_direction : (d + 1) * per_direction] for d in range(directions)]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _floats(value: Any) -> tuple[float, ...]:
    return (float(value),) if isinstance(value, float | int) else tuple(float(v) for v in value)


def _dims(expr: Any) -> list[int]:
    shape = expr.ty.shape
    if shape is None or not all(hasattr(d, "value") or isinstance(d, int) for d in shape):
        raise RecurrentOpError(
            "RNN/LSTM/GRU are unrolled over a static sequence: the input's shape must be known "
            f"(got {shape})"
        )
    return [int(d) for d in shape]


def _take(bb: Any, tensor: Any, index: int, axis: int = 0) -> Any:
    """``tensor[index]`` along ``axis``, the axis dropped."""
    piece = R.strided_slice(tensor, axes=[axis], begin=[index], end=[index + 1])
    return bb.emit(R.squeeze(piece, axis=[axis]))


def _chunks(bb: Any, tensor: Any, count: int, axis: int = -1) -> list[Any]:
    parts = bb.emit(R.split(tensor, count, axis=axis))
    return [bb.emit(relax.TupleGetItem(parts, i)) for i in range(count)]


@dataclass
class _Direction:
    """One direction's operands: ``x_proj`` (steps of ``x W^T + Wb``), ``r`` (``R^T``), ``rb``
    (``Rb`` or None), the initial states, peepholes (LSTM) and activations."""

    x_proj: list[Any]
    r_t: Any
    rb: Any
    states: list[Any]
    peep: list[Any] | None
    acts: list[Activation]


@dataclass
class _Recurrence:
    """What the three ops share: the parsed node."""

    steps: int
    batch: int
    hidden: int
    directions: list[_Direction]
    reverse: list[bool]
    valid: list[Any] | None  # per step, (batch, 1): 1.0 while the step is in the sequence
    any_steps: Any  # (batch, 1): 1.0 where the sequence is not empty (None: no sequence_lens)
    layout: int


def _parse(
    bb: Any, inputs: Any, attrs: dict[str, Any], gates: int, defaults: Sequence[str], states: int
) -> _Recurrence:
    x, w, r, b, seq_lens = (inputs[i] for i in range(5))
    layout = int(attrs.get("layout", 0))
    if layout:
        x = bb.emit(R.permute_dims(x, [1, 0, 2]))
    steps, batch, _ = _dims(x)
    num_dir, gate_rows, _ = _dims(w)
    hidden = int(attrs.get("hidden_size", gate_rows // gates))
    direction = _text(attrs.get("direction", b"forward"))
    known = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}
    if direction not in known or len(known[direction]) != num_dir:
        raise RecurrentOpError(
            f"direction {direction!r} with W for {num_dir} direction(s) is not a valid recurrence"
        )
    dtype = str(x.ty.dtype)
    acts = _activations(attrs, defaults, num_dir, dtype)
    x_steps = _chunks(bb, x, steps, axis=0) if steps > 1 else [x]
    initial = []
    for index in range(5, 5 + states):
        state = inputs[index]
        if state is None:
            state = R.zeros((num_dir, batch, hidden), dtype)
        elif layout:
            state = R.permute_dims(state, [1, 0, 2])
        initial.append(bb.emit(state))
    peepholes = inputs[7] if states == 2 else None
    parsed = []
    for d in range(num_dir):
        w_t = bb.emit(R.permute_dims(_take(bb, w, d)))
        wb, rb = None, None
        if b is not None:
            wb, rb = _chunks(bb, _take(bb, b, d), 2)
        x_proj = []
        for x_t in x_steps:
            step = R.matmul(R.reshape(x_t, (batch, -1)), w_t)
            x_proj.append(bb.emit(step if wb is None else R.add(step, wb)))
        peep = None if peepholes is None else _chunks(bb, _take(bb, peepholes, d), 3)
        parsed.append(
            _Direction(
                x_proj=x_proj,
                r_t=bb.emit(R.permute_dims(_take(bb, r, d))),
                rb=rb,
                states=[_take(bb, s, d) for s in initial],
                peep=peep,
                acts=acts[d],
            )
        )
    valid, any_steps = None, None
    if seq_lens is not None:
        lens = bb.emit(R.reshape(R.astype(seq_lens, "int64"), (batch, 1)))
        valid = [
            bb.emit(R.astype(R.less(relax.const(t, "int64"), lens), dtype)) for t in range(steps)
        ]
        any_steps = valid[0]
    return _Recurrence(steps, batch, hidden, parsed, known[direction], valid, any_steps, layout)


Step = Callable[[Any, Any, _Direction, list[Any]], list[Any]]


def _held(bb: Any, new: list[Any], old: list[Any], valid: Any) -> list[Any]:
    """``new`` where the step is in the sequence, ``old`` past its end."""
    if valid is None:
        return new
    return [bb.emit(R.where(R.astype(valid, "bool"), n, o)) for n, o in zip(new, old, strict=True)]


def _run(bb: Any, rec: _Recurrence, step: Step) -> relax.Tuple:
    """Unroll every direction; ``(Y, Y_h[, Y_c])`` in the node's layout."""
    outputs: list[list[Any]] = []
    finals: list[list[Any]] = []
    for direction, reverse in zip(rec.directions, rec.reverse, strict=True):
        states = direction.states
        hs: list[Any] = [None] * rec.steps
        order = range(rec.steps - 1, -1, -1) if reverse else range(rec.steps)
        for t in order:
            new = step(bb, direction.x_proj[t], direction, states)
            valid = None if rec.valid is None else rec.valid[t]
            states = _held(bb, new, states, valid)
            hs[t] = states[0] if valid is None else bb.emit(R.multiply(states[0], valid))
        if rec.any_steps is not None:
            states = [bb.emit(R.multiply(s, rec.any_steps)) for s in states]
        outputs.append(hs)
        finals.append(states)
    per_step = [
        R.stack([outputs[d][t] for d in range(len(outputs))], axis=0) for t in range(rec.steps)
    ]
    y = bb.emit(R.stack(per_step, axis=0))  # (steps, directions, batch, hidden)
    results = [y] + [
        bb.emit(R.stack([final[k] for final in finals], axis=0)) for k in range(len(finals[0]))
    ]
    if rec.layout:
        results = [bb.emit(R.permute_dims(results[0], [2, 0, 1, 3]))] + [
            bb.emit(R.permute_dims(s, [1, 0, 2])) for s in results[1:]
        ]
    return relax.Tuple(results)


def _recurrent(bb: Any, x_proj: Any, direction: _Direction, h: Any) -> Any:
    """``x W^T + Wb + h R^T + Rb``."""
    gates = R.add(x_proj, R.matmul(h, direction.r_t))
    return gates if direction.rb is None else R.add(gates, direction.rb)


def _rnn_step(bb: Any, x_proj: Any, direction: _Direction, states: list[Any]) -> list[Any]:
    (h,) = states
    return [bb.emit(direction.acts[0](_recurrent(bb, x_proj, direction, h)))]


def _lstm_step(bb: Any, x_proj: Any, direction: _Direction, states: list[Any]) -> list[Any]:
    h, c = states
    f_act, g_act, h_act = direction.acts
    i, o, f, g = _chunks(bb, bb.emit(_recurrent(bb, x_proj, direction, h)), 4)
    if direction.peep is not None:
        p_i, _, p_f = direction.peep  # ONNX's order: i, o, f
        i = R.add(i, R.multiply(p_i, c))
        f = R.add(f, R.multiply(p_f, c))
    c_new = bb.emit(R.add(R.multiply(f_act(f), c), R.multiply(f_act(i), g_act(g))))
    if direction.peep is not None:
        o = R.add(o, R.multiply(direction.peep[1], c_new))
    h_new = bb.emit(R.multiply(f_act(o), h_act(c_new)))
    return [h_new, c_new]


def _gru_step(
    bb: Any, x_proj: Any, direction: _Direction, states: list[Any], linear_before_reset: bool
) -> list[Any]:
    (h,) = states
    f_act, g_act = direction.acts
    x_z, x_r, x_h = _chunks(bb, x_proj, 3)
    r_zrh = _chunks(bb, direction.r_t, 3)
    b_zrh = _chunks(bb, direction.rb, 3) if direction.rb is not None else [None] * 3

    def hidden(value: Any, k: int) -> Any:
        out = R.matmul(value, r_zrh[k])
        return out if b_zrh[k] is None else R.add(out, b_zrh[k])

    z = bb.emit(f_act(R.add(x_z, hidden(h, 0))))
    r = bb.emit(f_act(R.add(x_r, hidden(h, 1))))
    if linear_before_reset:
        candidate = R.multiply(r, hidden(h, 2))
    else:
        candidate = hidden(R.multiply(r, h), 2)
    n = bb.emit(g_act(R.add(x_h, candidate)))
    one = _const(1.0, str(h.ty.dtype))
    return [bb.emit(R.add(R.multiply(R.subtract(one, z), n), R.multiply(z, h)))]


def _rnn(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    return _run(bb, _parse(bb, inputs, attrs, 1, ["Tanh"], 1), _rnn_step)


def _lstm(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    if attrs.get("input_forget", 0):
        raise RecurrentOpError("LSTM with input_forget=1 (coupled gates) is not supported")
    rec = _parse(bb, inputs, attrs, 4, ["Sigmoid", "Tanh", "Tanh"], 2)
    return _run(bb, rec, _lstm_step)


def _gru(bb: Any, inputs: Any, attrs: dict[str, Any], params: Any, opset: int) -> Any:
    before = bool(attrs.get("linear_before_reset", 0))
    rec = _parse(bb, inputs, attrs, 3, ["Sigmoid", "Tanh"], 1)
    return _run(bb, rec, lambda b, x, d, s: _gru_step(b, x, d, s, before))


#: The shim's recurrent converters, by ONNX op type.
CONVERTERS = {"RNN": _rnn, "LSTM": _lstm, "GRU": _gru}
