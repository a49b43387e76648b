"""QDQ ONNX graphs folded into quantized ops, so that they compute in int8/int32 (as onnxruntime
runs them), not in float between a ``DequantizeLinear`` and a ``QuantizeLinear``.

On a copy of the graph (the caller's model is not touched):

- ``DQ(x), DQ(w) [, DQ(bias int32)] -> Conv [-> Q]`` becomes ``QLinearConv``;
- ``DQ(a), DQ(b) -> MatMul [-> Q]`` becomes ``QLinearMatMul``;
- ``DQ(a), DQ(b) [, DQ(c int32)] -> Gemm [-> Q]`` becomes com.microsoft ``QGemm``;
- ``DQ(a), DQ(b) -> Add -> Q`` becomes ``QLinearAdd``, ``... Mul -> Q`` ``QLinearMul``;
- ``DQ(x) -> GlobalAveragePool / AveragePool / Softmax / Sigmoid / LeakyRelu -> Q`` becomes
  com.microsoft's ``QLinear<op>``, and ``DQ(x1), DQ(x2)... -> Concat -> Q`` ``QLinearConcat``;
- ``DQ(x) -> MaxPool / Flatten / Reshape / Transpose... -> Q`` with the same scale and zero point
  runs on the quantized tensor itself.

Without a ``Q`` after it, a folded Conv/MatMul keeps a float output (``y_scale`` left empty: the
shim's converters scale the int32 accumulator back). A bias folds only where its scale is the
input scale times the weight scale (what quantizers write); the ``DQ``/``Q`` nodes nobody reads
any more are dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["fold_qdq"]

#: Ops that move values without changing them: with equal Q/DQ parameters, run on the integers.
_VALUE_MOVERS = frozenset(
    {"MaxPool", "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity"}
)
#: ``DQ(x) -> op -> Q`` -> com.microsoft's one-input quantized op (onnxruntime fuses the same).
_UNARY = {
    "GlobalAveragePool": "QLinearGlobalAveragePool",
    "AveragePool": "QLinearAveragePool",
    "Softmax": "QLinearSoftmax",
    "Sigmoid": "QLinearSigmoid",
    "LeakyRelu": "QLinearLeakyRelu",
}
_BINARY = {"Add": "QLinearAdd", "Mul": "QLinearMul"}
_MS = "com.microsoft"
#: Binary ops evaluated on known values (the exporters' scale and bias arithmetic).
_ARITHMETIC = {"Mul": np.multiply, "Div": np.divide, "Add": np.add, "Sub": np.subtract}


class _Graph:
    """The lookups a fold needs over one graph: producers, consumers, constant values."""

    def __init__(self, graph: Any) -> None:
        from onnx import numpy_helper

        self.graph = graph
        self.values: dict[str, np.ndarray] = {
            t.name: numpy_helper.to_array(t) for t in graph.initializer
        }
        self.stored = set(self.values)  # initializers and Constant outputs: no new node needed
        for node in graph.node:
            value = self._computed(node)
            if value is not None:
                self.values[node.output[0]] = value
                if node.op_type == "Constant":
                    self.stored.add(node.output[0])
        self.producer = {out: node for node in graph.node for out in node.output}
        self.readers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)
        self.outputs = {o.name for o in graph.output}

    def _computed(self, node: Any) -> np.ndarray | None:
        """The value of a node computed from known values only (``Constant``, ``Cast``,
        ``ConstantOfShape``, ``Shape``, ``Identity``, ``Mul``/``Div``/``Add``/``Sub``: what the
        TorchScript exporter writes unfolded), else None."""
        from onnx import helper, numpy_helper

        found = [self.values.get(name) for name in node.input]
        known = [value for value in found if value is not None]
        if len(known) != len(found):
            return None
        op = node.op_type
        if op == "Constant":
            tensor = _attr(node, "value", None)
            return None if tensor is None else numpy_helper.to_array(tensor)
        if op in _ARITHMETIC and len(known) == 2:
            a, b = known
            return np.asarray(_ARITHMETIC[op](a, b)).astype(np.result_type(a, b))
        if op == "Identity":
            return known[0]
        if op == "Shape":
            return np.asarray(known[0].shape, "int64")
        if op == "Cast":
            return known[0].astype(helper.tensor_dtype_to_np_dtype(int(_attr(node, "to", 1))))
        if op == "ConstantOfShape":
            fill = _attr(node, "value", None)
            fill_value = numpy_helper.to_array(fill) if fill is not None else np.zeros(1, "float32")
            return np.full([int(d) for d in known[0]], fill_value.reshape(-1)[0])
        return None

    def dq(self, name: str) -> Any:
        """The ``DequantizeLinear`` (per-tensor or per-axis-0/1) producing ``name``, or None."""
        node = self.producer.get(name)
        return node if node is not None and node.op_type == "DequantizeLinear" else None

    def only_q(self, name: str) -> Any:
        """The one ``QuantizeLinear`` reading ``name`` (nothing else reading it), or None."""
        readers = self.readers.get(name, [])
        if name in self.outputs or len(readers) != 1 or readers[0].op_type != "QuantizeLinear":
            return None
        return readers[0]

    def value(self, name: str) -> np.ndarray | None:
        return self.values.get(name) if name else None

    def same_params(self, dq: Any, q: Any) -> bool:
        """Whether a DQ and a Q share scale and zero point (by value)."""
        pairs = [(self.value(_at(dq, i)), self.value(_at(q, i))) for i in (1, 2)]
        return all(
            a is not None and b is not None and a.shape == b.shape and bool((a == b).all())
            for a, b in pairs
        ) and _attr(dq, "axis", 1) == _attr(q, "axis", 1)


def _at(node: Any, index: int) -> str:
    return node.input[index] if len(node.input) > index else ""


def _attr(node: Any, name: str, default: Any) -> Any:
    from onnx import helper

    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _dq_inputs(dq: Any) -> list[str]:
    """A DQ's ``(quantized, scale, zero_point)`` input names (the last may be empty)."""
    return [_at(dq, 0), _at(dq, 1), _at(dq, 2)]


def _bias(g: _Graph, name: str, x_dq: Any, w_dq: Any) -> str | None:
    """The int32 tensor of a ``DQ(bias)`` whose scale is x_scale * w_scale and zero point 0
    (``""`` for no bias); None where the bias cannot fold."""
    if not name:
        return ""
    dq = g.dq(name)
    if dq is None:
        return None
    quantized, scale = g.value(_at(dq, 0)), g.value(_at(dq, 1))
    zp = g.value(_at(dq, 2))
    xs, ws = g.value(_at(x_dq, 1)), g.value(_at(w_dq, 1))
    if quantized is None or scale is None or xs is None or ws is None:
        return None
    if quantized.dtype != np.int32 or (zp is not None and zp.any()):
        return None
    expected = np.float32(xs) * ws.astype(np.float32)
    if not np.allclose(scale, expected, rtol=1e-5, atol=0):
        return None
    return str(_at(dq, 0))


def _weight_dq(g: _Graph, name: str, constant: bool) -> Any:
    dq = g.dq(name)
    if dq is None or (constant and g.value(_at(dq, 0)) is None):
        return None
    return dq


def _replace(
    g: _Graph, old: Any, q: Any, op_type: str, inputs: list[str], domain: str = ""
) -> tuple[list[Any], list[Any]]:
    """The new nodes (the constants it reads, then the node, whose output is the Q's, or
    ``old``'s where there is no Q) and the nodes they replace."""
    from onnx import helper, numpy_helper

    output = q.output[0] if q is not None else old.output[0]
    # Values the graph computes from constants (Cast(Constant)...) become Constant nodes, so
    # that the converters see constants (the integer fast path needs the weight's values).
    constants = []
    for index, name in enumerate(inputs):
        value = g.value(name)
        if name and name not in g.stored and value is not None:
            inputs[index] = f"{name}_constant"
            if inputs[index] not in g.stored:
                g.stored.add(inputs[index])
                tensor = numpy_helper.from_array(value, inputs[index])
                constants.append(helper.make_node("Constant", [], [inputs[index]], value=tensor))
    keep = {a.name: helper.get_attribute_value(a) for a in old.attribute}
    keep = {k: v for k, v in keep.items() if k != "beta"}
    node = helper.make_node(op_type, inputs, [output], name=f"{old.name}_folded", domain=domain,
                            **keep)  # fmt: skip
    return [*constants, node], [old] + ([q] if q is not None else [])


def _fold(g: _Graph, node: Any) -> tuple[list[Any], list[Any]] | None:
    """The folded node replacing ``node`` (and its Q), or None."""
    op = node.op_type
    out_q = g.only_q(node.output[0]) if node.output else None
    y = [_at(out_q, 1), _at(out_q, 2)] if out_q is not None else ["", ""]
    if op in ("Conv", "MatMul", "Gemm"):
        if op == "Gemm" and float(_attr(node, "beta", 1.0)) != 1.0:
            return None
        x_dq = g.dq(_at(node, 0))
        w_dq = _weight_dq(g, _at(node, 1), constant=op != "MatMul")
        if x_dq is None or w_dq is None:
            return None
        bias = _bias(g, _at(node, 2), x_dq, w_dq) if op != "MatMul" else ""
        if bias is None:
            return None
        x, w = _dq_inputs(x_dq), _dq_inputs(w_dq)
        if op == "Conv":
            return _replace(g, node, out_q, "QLinearConv", [*x, *w, *y, bias])
        if op == "MatMul":
            return _replace(g, node, out_q, "QLinearMatMul", [*x, *w, *y])
        return _replace(g, node, out_q, "QGemm", [*x, *w, bias, *y], _MS)
    if out_q is None:
        return None
    if op in _BINARY:
        a_dq, b_dq = g.dq(_at(node, 0)), g.dq(_at(node, 1))
        if a_dq is None or b_dq is None:
            return None
        return _replace(g, node, out_q, _BINARY[op], [*_dq_inputs(a_dq), *_dq_inputs(b_dq), *y],
                        _MS)  # fmt: skip
    if op == "Concat":
        dqs = [g.dq(name) for name in node.input]
        if any(dq is None for dq in dqs):
            return None
        triples = [name for dq in dqs for name in _dq_inputs(dq)]
        return _replace(g, node, out_q, "QLinearConcat", [*y, *triples], _MS)
    x_dq = g.dq(_at(node, 0))
    if x_dq is None:
        return None
    if op in _UNARY:
        return _replace(g, node, out_q, _UNARY[op], [*_dq_inputs(x_dq), *y], _MS)
    if op in _VALUE_MOVERS and g.same_params(x_dq, out_q):
        return _replace(g, node, out_q, op, [_at(x_dq, 0), *list(node.input)[1:]])
    return None


def _drop_unread(graph: Any) -> None:
    """Remove DQ/Q nodes whose outputs nobody reads, until none is left."""
    while True:
        read = {name for node in graph.node for name in node.input} | {o.name for o in graph.output}
        dead = [
            i
            for i, node in enumerate(graph.node)
            if node.op_type in ("DequantizeLinear", "QuantizeLinear")
            and not any(out in read for out in node.output)
        ]
        if not dead:
            return
        for index in reversed(dead):
            del graph.node[index]


def fold_qdq(graph: Any) -> Any:
    """A copy of the ONNX ``GraphProto`` with its QDQ groups folded (see the module docstring);
    the graph itself where there is no ``DequantizeLinear`` in it."""
    if not any(node.op_type == "DequantizeLinear" for node in graph.node):
        return graph
    folded = type(graph)()
    folded.CopyFrom(graph)
    g = _Graph(folded)
    # Nodes are named by their first output: the new node takes the place of the Q it
    # replaces (after every input of the group), the group's op is dropped.
    replaced: dict[str, list[Any]] = {}
    removed: set[str] = set()
    for node in list(folded.node):
        result = _fold(g, node)
        if result is None:
            continue
        new, old = result
        replaced[old[-1].output[0]] = new
        removed.update(n.output[0] for n in old)
    nodes: list[Any] = []
    for n in folded.node:
        if n.output[0] in replaced:
            nodes.extend(replaced[n.output[0]])
        elif n.output[0] not in removed:
            nodes.append(n)
    del folded.node[:]
    folded.node.extend(nodes)
    _drop_unread(folded)
    return folded
