"""Constant subgraphs of an ONNX graph folded before Relax's importer sees them.

TVM 0.19's Relay importer folded what it could while converting (``fold_constant`` on each
node's inputs, ``Shape`` of a static tensor a constant, ``DynamicToStatic`` afterwards), so a
pad amount computed by ``ConstantOfShape``/``Concat``/``Reshape``/``Slice`` (how the TorchScript
exporter spells ``F.pad``) became a constant. TVM 0.27's importer stops at such values
("Dynamic pads are not supported", "cannot handle ShapeExpr inputs"). Here each top-level node
whose inputs are ``Constant`` outputs (or the shape of a tensor whose shape is static) is
evaluated by onnx's reference evaluator and replaced by ``Constant`` nodes; initializers are
weights (``params`` with ``freeze_params=False``) and are never folded into.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["fold_constant_nodes"]

#: Ops never folded: random values, control flow and sequences (subgraphs, lists of tensors),
#: and quantization (the QDQ groups the integer converters read, :mod:`.onnx_qdq`).
_NOT_FOLDED = frozenset(
    {
        "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Bernoulli",
        "Multinomial", "If", "Loop", "Scan", "SequenceConstruct", "SequenceEmpty",
        "SplitToSequence", "SequenceInsert", "SequenceAt", "ConcatFromSequence",
        "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
    }
)  # fmt: skip
#: Folded values larger than this stay computed at run time (a folded constant is embedded).
_MAX_ELEMENTS = 1 << 16


def _static_shapes(model: Any, shapes: Mapping[str, Any] | None) -> dict[str, tuple[int, ...]]:
    """Value name -> static shape, from onnx's shape inference over the given input shapes."""
    import onnx

    copy = type(model)()
    copy.CopyFrom(model)
    for value in copy.graph.input:
        if shapes and value.name in shapes:
            dims = value.type.tensor_type.shape.dim
            del dims[:]
            for size in shapes[value.name]:
                dims.add().dim_value = int(size)
    try:
        inferred = onnx.shape_inference.infer_shapes(copy)
    except Exception:  # inference is a help, never a requirement
        inferred = copy
    known: dict[str, tuple[int, ...]] = {}
    graph = inferred.graph
    for value in [*graph.input, *graph.value_info, *graph.output]:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape"):
            continue
        dims = tensor.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            known[value.name] = tuple(int(d.dim_value) for d in dims)
    return known


def _evaluate(node: Any, values: list[Any]) -> list[np.ndarray] | None:
    """``node`` run on ``values`` by onnx's reference evaluator, or None where it cannot."""
    from onnx.reference import ReferenceEvaluator

    try:
        feeds = {name: value for name, value in zip(node.input, values) if name}
        outputs = ReferenceEvaluator(node).run(None, feeds)
    except Exception:
        return None
    arrays = [np.asarray(out) for out in outputs]
    if any(a.dtype == object or a.size > _MAX_ELEMENTS for a in arrays):
        return None
    return arrays


def _shape_of(node: Any, shape: tuple[int, ...]) -> np.ndarray:
    """ONNX ``Shape`` (with its ``start``/``end``) or ``Size`` of a static ``shape``."""
    if node.op_type == "Size":
        return np.array(int(np.prod(shape)), dtype="int64")
    attrs = {a.name: a.i for a in node.attribute}
    start, end = attrs.get("start", 0), attrs.get("end", len(shape))
    return np.array(shape[slice(start, end)], dtype="int64")


def fold_constant_nodes(model: Any, shapes: Mapping[str, Any] | None) -> Any:
    """``model``, or a copy whose constant top-level nodes are ``Constant`` nodes.

    Parameters
    ----------
    model : onnx.ModelProto
        The model (not modified).
    shapes : mapping, optional
        Input name -> shape, as ``from_onnx`` was given them.

    Returns
    -------
    onnx.ModelProto
        ``model`` itself where nothing folds.
    """
    from onnx import helper, numpy_helper

    graph = model.graph
    constants: dict[str, np.ndarray] = {}
    static: dict[str, tuple[int, ...]] | None = None
    replaced: dict[int, list[Any]] = {}
    for index, node in enumerate(graph.node):
        if node.domain not in ("", "ai.onnx") or node.op_type in _NOT_FOLDED:
            continue
        if node.op_type == "Constant":
            if not any(a.name == "value" for a in node.attribute):
                continue
            constants[node.output[0]] = numpy_helper.to_array(
                next(a.t for a in node.attribute if a.name == "value")
            )
            continue
        if node.op_type in ("Shape", "Size"):
            if static is None:
                static = _static_shapes(model, shapes)
            if node.input[0] not in static:
                continue
            outputs: list[np.ndarray] | None = [_shape_of(node, static[node.input[0]])]
        else:
            used = [name for name in node.input if name]
            if not used or any(name not in constants for name in used):
                continue
            outputs = _evaluate(node, [constants.get(name) for name in node.input])
        if outputs is None:
            continue
        nodes = []
        for name, array in zip(node.output, outputs):
            if not name:
                continue
            constants[name] = array
            tensor = numpy_helper.from_array(np.ascontiguousarray(array), name=name)
            nodes.append(helper.make_node("Constant", [], [name], value=tensor))
        # Relax's importer makes a 0-d Constant a 1-element tensor: a node with a scalar result
        # stays computed (the nodes after it still fold, from its value).
        if all(array.ndim for array in outputs):
            replaced[index] = nodes
    if not replaced:
        return model
    copy = type(model)()
    copy.CopyFrom(model)
    new_nodes = []
    for index, node in enumerate(copy.graph.node):
        new_nodes.extend(replaced.get(index, [node]))
    del copy.graph.node[:]
    copy.graph.node.extend(new_nodes)
    return copy
